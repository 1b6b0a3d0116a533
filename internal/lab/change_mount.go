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
