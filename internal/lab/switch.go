package lab

import (
	"context"
	"errors"
	"fmt"

	"github.com/termlab/termlab/internal/clusterswitch"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/switcharm"
)

// SwitchOfRunLabel marks a cluster switch's namespace and ClusterRole with
// the run it guards. Not RunIDLabel: the run's recorder and claims look at
// what carries that, and the switch is not the experiment.
const SwitchOfRunLabel = "termlab.dev/switch-of-run"

// SwitchBound is the longest a change a lab makes in the cluster (a taint,
// an APIService) outlives a run killed outright (internal/switcharm).
const SwitchBound = switcharm.Bound

// armedSwitch is one switch this run armed.
type armedSwitch struct {
	spec clusterswitch.Spec
}

// ArmSwitch arms a dead-man's switch in the cluster for a change the lab
// is about to make: a pod, on a real worker the change does not touch,
// that undoes it if this run's lock goes stale (internal/clusterswitch).
// The change must not be made when this fails. Cleanup disarms it once the
// change is undone, and leaves it armed (to fire when the lock is gone)
// when it is not.
func (r *Run) ArmSwitch(ctx context.Context, undo clusterswitch.Undo) error {
	r.mu.Lock()
	n := len(r.switches) + 1
	r.mu.Unlock()
	name := switcharm.Name(r.ID, n)
	spec := clusterswitch.Spec{
		RunID: r.ID, Holder: r.lockHolder,
		LeaseNamespace: runlock.LeaseNamespace, LeaseName: runlock.LeaseName,
		StaleAfter: switcharm.StaleAfter, Poll: switcharm.Poll, Undo: undo,
		Self: clusterswitch.Self{Namespace: name, ClusterRole: name, ClusterRoleBinding: name},
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("arming the switch for %s: %w", undo.What(), err)
	}
	node := r.switchNode(undo.Node)
	if node == "" {
		return fmt.Errorf("arming the switch for %s: no Ready worker other than %q to run it on", undo.What(), undo.Node)
	}
	done := r.Log.Step(fmt.Sprintf("arming the cluster's dead-man's switch for %s (pod %s/switch on %s: undoes it %s after this run stops renewing its lock)", undo.What(), name, node, SwitchBound))
	err := switcharm.Arm(ctx, r.Env.Client, spec, r.Env.WorkloadImage, node, map[string]string{SwitchOfRunLabel: r.ID, LabLabel: r.Lab})
	done(err)
	if err != nil {
		return fmt.Errorf("arming the switch for %s, so it is not made: %w", undo.What(), err)
	}
	r.mu.Lock()
	r.switches = append(r.switches, armedSwitch{spec: spec})
	r.mu.Unlock()
	if r.Rec != nil {
		r.Rec.Notef("armed the cluster's dead-man's switch for %s: pod %s/switch on %s undoes it if the run lock's Lease stops naming this run or goes %s unrenewed", undo.What(), name, node, switcharm.StaleAfter)
	}
	return nil
}

// switchNode is a real worker for the switch's pod: not the node the
// change is on, nor the one named for faults (its kubelet may be stopped).
func (r *Run) switchNode(changed string) string {
	for _, w := range r.Env.Workers {
		if n := w.String(); n != changed && n != r.Env.FaultNode {
			return n
		}
	}
	return ""
}

// disarmSwitches removes each switch whose change is undone, and leaves
// armed (said) each whose change is still there: it fires once the run
// releases its lock, within SwitchBound.
func (r *Run) disarmSwitches(ctx context.Context) error {
	r.mu.Lock()
	switches := append([]armedSwitch(nil), r.switches...)
	r.switches = nil
	r.mu.Unlock()
	var errs []error
	for _, s := range switches {
		undone, err := r.undone(ctx, s.spec.Undo)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("checking that %s is undone before disarming its switch: %w", s.spec.Undo.What(), err))
			continue
		case !undone:
			r.Log.Warnf("cleanup: %s is still there; its switch %s stays armed and removes it within %s of this run's end", s.spec.Undo.What(), s.spec.Self.Namespace, SwitchBound)
			continue
		}
		if err := switcharm.Remove(ctx, r.Env.Client, s.spec.Self); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// undone says whether the change a switch guards is gone (its kind's
// check: change_taint.go, change_apiservice.go).
func (r *Run) undone(ctx context.Context, u clusterswitch.Undo) (bool, error) {
	if u.Node != "" {
		return r.taintGone(ctx, u)
	}
	return r.apiServiceGone(ctx, u.APIService)
}
