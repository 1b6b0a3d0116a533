package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	r.mu.Lock()
	if r.heldMounts == nil {
		r.heldMounts = map[string]cluster.Node{}
	}
	r.heldMounts[node.String()] = node // before the start: a half-done hold is released too
	r.mu.Unlock()
	cmds := mounthold.HoldCommands(r.ID, dir, maxHold)
	if a := r.actorNow(); a != nil {
		return unlessSkipped(r.byOtherOnNode(ctx, a, mountHeld, node, dockerExec(node, cmds)))
	}
	err := r.act(evidence.ActionHoldMount, node.String(), nodeRequest{node.String(), cmds}, dockerExec(node, cmds), func() error {
		return mounthold.Hold(ctx, node, r.ID, dir, maxHold)
	})
	if err != nil {
		return err
	}
	r.Infof("a process on %s keeps %s busy; systemd ends it by itself in %s if termlab cannot", node, dir, maxHold)
	return nil
}

// ReleaseMount ends the process holding the mount on the node.
func (r *Run) ReleaseMount(ctx context.Context, node cluster.Node) error {
	cmds := mounthold.ReleaseCommands()
	if a := r.actorNow(); a != nil {
		if err := r.byOtherOnNode(ctx, a, mountReleased, node, dockerExec(node, cmds)); err != nil {
			return unlessSkipped(err) // skipped: still held, cleanup releases it
		}
	} else if err := r.act(evidence.ActionReleaseMount, node.String(), nodeRequest{node.String(), cmds}, dockerExec(node, cmds), func() error {
		return mounthold.Release(ctx, node)
	}); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.heldMounts, node.String())
	r.mu.Unlock()
	return nil
}

// releaseMounts ends every holder the run started and has not ended. It
// runs in cleanup and the moment the run is interrupted.
func (r *Run) releaseMounts(ctx context.Context) error {
	r.restoring.Lock()
	defer r.restoring.Unlock()
	r.setActor(nil) // termlab restores what the run changed itself
	var errs []error
	for _, n := range r.nodesOf(r.heldMounts) {
		r.Log.Infof("cleanup: ending the process that keeps a mount busy on %s", n)
		if err := r.ReleaseMount(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// LookMount records a look at the node: the mounts at or under dir and the
// process holding it (its pid and working directory).
func (r *Run) LookMount(ctx context.Context, node cluster.Node, dir, why string) (evidence.MountLook, error) {
	l := evidence.MountLook{Node: node.String(), Dir: dir, Why: why, Mounted: []string{}}
	var raw strings.Builder
	mounts, merr := mounthold.Mounts(ctx, node, dir)
	fmt.Fprintf(&raw, "# cat /proc/1/mountinfo, the lines at or under %s\n", dir)
	for _, m := range mounts {
		l.Mounted = append(l.Mounted, m.Line)
		raw.WriteString(m.Line + "\n")
	}
	h, herr := mounthold.Look(ctx, node)
	fmt.Fprintf(&raw, "# systemctl show %s -p ActiveState -p MainPID; readlink /proc/<pid>/cwd\nActiveState=%s\nMainPID=%d\ncwd=%s\n", mounthold.Unit, h.State, h.PID, h.Cwd)
	l.HolderState, l.HolderPID, l.HolderCwd, l.HolderSince = h.State, h.PID, h.Cwd, h.Since
	l.At = time.Now().UTC()
	if err := errors.Join(merr, herr); err != nil {
		l.Error = err.Error()
	}
	l = r.Rec.AddMountLook(l, []byte(raw.String()))
	state := "not mounted"
	if len(l.Mounted) > 0 {
		state = "mounted"
	}
	holder := "no process holds it"
	if h.Active {
		holder = fmt.Sprintf("pid %d holds it (working directory %s)", h.PID, h.Cwd)
	}
	r.Infof("%s on %s: %s; %s", dir, node, state, holder)
	if l.Error != "" {
		return l, fmt.Errorf("looking at %s on %s: %s", dir, node, l.Error)
	}
	return l, nil
}
