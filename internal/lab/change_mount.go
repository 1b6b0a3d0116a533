package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/mounthold"
)

// HeldMount is a process on the lab's worker whose working directory is a
// pod's volume, so that the kubelet cannot unmount it: systemd on the node
// ends it by itself AtMost after its start (RuntimeMaxSec) if termlab cannot.
type HeldMount struct {
	// AtMost is the switch's bound: the longest the lab holds a mount for
	// (HoldMount's maxHold).
	AtMost time.Duration
}

func (HeldMount) Name() string   { return "keeps a volume busy on a node" }
func (HeldMount) Scope() Scope   { return NodeScope }
func (HeldMount) NodeSide() bool { return true }

// Guard: only on the worker named for faults.
func (h HeldMount) Guard(env *cluster.Env) error { return needsFaultNode(env, h) }

// Undo ends every holder the run started and has not ended.
func (HeldMount) Undo(ctx context.Context, r *Run) error { return r.releaseMounts(ctx) }

func (h HeldMount) Switch() DeadMansSwitch {
	return DeadMansSwitch{What: "systemd on the node ends the holding process (" + mounthold.Unit + ", RuntimeMaxSec)", Bound: h.AtMost}
}

// Repair ends a holder an earlier run left.
func (HeldMount) Repair(ctx context.Context, p *Repairs) error {
	released, err := mounthold.Restore(ctx, kubeletNodes(p.Env)) // the nodes a run may have held a mount on are those of kubelets
	for _, line := range released {
		p.Say("%s", line)
	}
	return err
}

// The holder's changes, as a person or a script makes them.
var (
	mountHeld     = unitChange{kind: evidence.ActionHoldMount, unit: mounthold.Unit, active: true, what: "the process holding the mount"}
	mountReleased = unitChange{kind: evidence.ActionReleaseMount, unit: mounthold.Unit, active: false, what: "the process holding the mount"}
)

// HoldMount starts a process on the node whose working directory is dir (a
// pod's volume), as a backup agent or a shell cd-ed into it would: the
// kubelet's umount of it fails while it runs. systemd on the node ends the
// process by itself after maxHold (termlab SIGKILLed); from this call on the
// run ends it on every exit path, first thing on an interrupt.
func (r *Run) HoldMount(ctx context.Context, node cluster.Node, dir string, maxHold time.Duration) error {
	declared, err := declaredBy[HeldMount](r)
	if err != nil {
		return err
	}
	// canRun judged the declared bound: a longer one was never guarded.
	if maxHold > declared.AtMost {
		return fmt.Errorf("holding %s on %s: systemd would end the holder after %s, later than the %s the lab declares (HeldMount.AtMost)", dir, node, maxHold, declared.AtMost)
	}
	cmds := mounthold.HoldCommands(r.ID, dir, maxHold)
	return r.perform(ctx, action{kind: evidence.ActionHoldMount, target: node.String(), doing: "holding " + dir + " on " + node.String(),
		equivalent: dockerExec(node, cmds),
		request:    nodeRequest{node.String(), cmds},
		send:       func(ctx context.Context) error { return mounthold.Hold(ctx, node, r.ID, dir, maxHold) },
		said:       fmt.Sprintf("a process on %s keeps %s busy; systemd ends it by itself in %s if termlab cannot", node, dir, maxHold),
		unit:       &mountHeld, node: node,
		before: func(context.Context) error {
			r.remember(&r.heldMounts, node) // before the start: a half-done hold is released too
			return nil
		},
	})
}

// ReleaseMount ends the process holding the mount on the node. Skipped
// (-by), it still holds it, and cleanup ends it.
func (r *Run) ReleaseMount(ctx context.Context, node cluster.Node) error {
	cmds := mounthold.ReleaseCommands()
	return r.perform(ctx, action{kind: evidence.ActionReleaseMount, target: node.String(), doing: "ending the mount's holder on " + node.String(),
		equivalent: dockerExec(node, cmds),
		request:    nodeRequest{node.String(), cmds},
		send:       func(ctx context.Context) error { return mounthold.Release(ctx, node) },
		said:       fmt.Sprintf("the process holding the mount on %s ended", node),
		unit:       &mountReleased, node: node,
		after: func(context.Context) error {
			r.forget(r.heldMounts, node.String())
			return nil
		},
	})
}

// releaseMounts ends every holder the run started and has not ended. It
// runs in cleanup and the moment the run is interrupted.
func (r *Run) releaseMounts(ctx context.Context) error {
	r.restoring.Lock()
	defer r.restoring.Unlock()
	r.setActor(byTermlab) // termlab restores what the run changed itself
	var errs []error
	for _, n := range r.nodesOf(r.heldMounts) {
		r.Log.Infof("cleanup: ending the process that keeps a mount busy on %s", n)
		if err := r.ReleaseMount(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
