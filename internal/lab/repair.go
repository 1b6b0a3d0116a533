package lab

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/mounthold"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
)

// Repairs is one look for what killed earlier runs left: the cluster, the
// run it is for, and a line per repair.
type Repairs struct {
	Env *cluster.Env
	// CurrentRunID is the run whose objects are not leftovers ("" before a
	// run is made: every run's are).
	CurrentRunID string
	Log          *progress.Logger

	mu    sync.Mutex // the node kinds repair at once
	lines []string
}

// Say says a repair and keeps its line, for the user and the record.
func (p *Repairs) Say(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.lines = append(p.lines, s)
	p.mu.Unlock()
	p.Log.Warnf("repairing a leftover: %s", s)
}

// RepairLeftovers puts back what a killed earlier run may have left, every
// kind of change (changeKinds) whichever lab made it: a real worker whose
// kubelet is not active (started again, and any dead-man's switch still
// armed disarmed: internal/kubelet.Restore), a process holding a pod's
// volume, then RemoveLeftovers' part in the API. It returns one line per
// repair, for the user and the record. It runs under the cluster's run lock
// (a Lease): any other run's objects it finds belong to a run that no longer
// holds it (ended, or killed and its Lease expired).
func RepairLeftovers(ctx context.Context, env *cluster.Env, log *progress.Logger, currentRunID string) ([]string, error) {
	p := &Repairs{Env: env, CurrentRunID: currentRunID, Log: log}
	// The node kinds at once, each on every node at once: a docker exec per
	// question, asked before every run.
	var wg sync.WaitGroup
	errs := make([]error, len(changeKinds))
	for i, c := range changeKinds {
		if c.NodeSide() {
			wg.Go(func() { errs[i] = c.Repair(ctx, p) })
		}
	}
	wg.Wait()
	removed, err := RemoveLeftovers(ctx, env, log, currentRunID)
	return append(p.lines, removed...), errors.Join(append(errs, err)...)
}

// RemoveLeftovers is RepairLeftovers' part in the API: each kind's in
// changeKinds' order (the out-of-service taints, APIServices, then what
// runs label with their id: fake nodes, objects, pods' finalizers and
// namespaces), then the cluster switches of earlier runs. Namespaces kept on
// purpose (Options.Keep), and those another live termlab marks in use (its
// node pods: runlock.KeepAlive), are left alone. cluster:up does it too,
// under the same lock, once the cluster answers: a run whose cleanup could
// not reach the cluster (the engine under its nodes stopped) leaves nothing
// for longer than the next cluster:up.
func RemoveLeftovers(ctx context.Context, env *cluster.Env, log *progress.Logger, currentRunID string) ([]string, error) {
	p := &Repairs{Env: env, CurrentRunID: currentRunID, Log: log}
	var errs []error
	for _, c := range changeKinds {
		if !c.NodeSide() {
			errs = append(errs, c.Repair(ctx, p))
		}
	}
	errs = append(errs, removeLeftoverSwitches(ctx, env, currentRunID, p.Say))
	// The node pods are the target's, not a run's (internal/nodepod: their
	// guard is the flags, their undo Close, their switch its own): a
	// killed arming of their switch leaves one that nothing fires.
	nodePodSwitches, err := nodepod.RemoveLeftoverSwitches(ctx, env.Client)
	for _, line := range nodePodSwitches {
		p.Say("%s", line)
	}
	errs = append(errs, err)
	return p.lines, errors.Join(errs...)
}

// RestoreNodes puts back what a killed run left on the nodes: a stopped
// kubelet or an armed restore timer (kubelet.Restore) and a process holding
// a pod's volume (mounthold.Restore). Both at once, each on every node at
// once: a docker exec per question. cluster:up asks it before the API
// answers (internal/stack); a run's repair asks the kinds (RepairLeftovers).
func RestoreNodes(ctx context.Context, nodes []kubelet.Node) (kubelets []kubelet.Repair, mounts []string, kubeletErr, mountErr error) {
	var wg sync.WaitGroup
	wg.Go(func() { kubelets, kubeletErr = kubelet.Restore(ctx, nodes) })
	wg.Go(func() { mounts, mountErr = mounthold.Restore(ctx, nodes) })
	wg.Wait()
	return kubelets, mounts, kubeletErr, mountErr
}
