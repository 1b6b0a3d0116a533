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
