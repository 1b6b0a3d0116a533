// Package mounthold keeps a pod's volume busy on a node the way a backup
// agent or a shell cd-ed into it would: a process whose working directory
// is inside the mount, so the kubelet's umount fails with "target is busy".
// The process is a transient systemd unit on the node with RuntimeMaxSec:
// the node ends it by itself after a bound even if termlab is SIGKILLed
// (the mount's dead-man's switch), Release stops it, and Restore ends one an
// earlier run left.
package mounthold

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/nodeunit"
)

// Node is a node the holder runs on (kind's nodes.Node satisfies it).
type Node = nodeunit.Node

// Unit is the holder's transient service: one per node, as one lab runs at a
// time on a cluster; its description names the run.
const Unit = "termlab-hold-mount.service"

// KubeletPodsDir is where the kubelet keeps its pods' volumes (its --root-dir).
const KubeletPodsDir = "/var/lib/kubelet/pods"

// EmptyDirPath is where the kubelet mounts the pod's emptyDir volume on the node.
func EmptyDirPath(podUID, volume string) string {
	return path.Join(KubeletPodsDir, podUID, "volumes", "kubernetes.io~empty-dir", volume)
}

// HoldCommands are what Hold runs on the node, as a person would type them
// after `docker exec <node>`: a process whose working directory is dir, that
// systemd itself ends after maxHold.
func HoldCommands(runID, dir string, maxHold time.Duration) [][]string {
	secs := int((maxHold + time.Second - 1) / time.Second)
	return [][]string{{"systemd-run", "--unit=" + Unit, "--collect",
		"--description=termlab run " + runID + ": a process with its working directory in the pod's volume",
		"--property=WorkingDirectory=" + dir, fmt.Sprintf("--property=RuntimeMaxSec=%d", secs),
		"sleep", "infinity"}}
}

// ReleaseCommands are what Release runs: end the holding process.
func ReleaseCommands() [][]string { return [][]string{{"systemctl", "stop", Unit}} }

// Hold starts the holder in dir; it fails if the process did not start there.
func Hold(ctx context.Context, node Node, runID, dir string, maxHold time.Duration) error {
	for _, argv := range HoldCommands(runID, dir, maxHold) {
		if err := nodeunit.Run(ctx, node, argv...); err != nil {
			return fmt.Errorf("keeping %s busy on %s: %w", dir, node, err)
		}
	}
	h, err := Look(ctx, node)
	if err != nil {
		return err
	}
	if !h.Active || h.Cwd != dir {
		return fmt.Errorf("keeping %s busy on %s: the holder is %s with its working directory %q", dir, node, h.State, h.Cwd)
	}
	return nil
}

// Release ends the holder; one that is not there (ended by its bound) is no error.
func Release(ctx context.Context, node Node) error {
	for _, argv := range ReleaseCommands() {
		if err := nodeunit.Run(ctx, node, argv...); err != nil && !strings.Contains(err.Error(), "not loaded") {
			return fmt.Errorf("releasing the mount on %s: %w", node, err)
		}
	}
	return nil
}

// Holding is one look at the holder.
type Holding struct {
	State  string `json:"state"` // systemd's ActiveState
	Active bool   `json:"active"`
	PID    int    `json:"pid,omitempty"`
	// Cwd is the process's working directory, read from /proc on the node.
	Cwd string `json:"cwd,omitempty"`
	// Since is when the unit last became active or inactive (node clock).
	Since time.Time `json:"since,omitempty"`
}

// Look reads the holder: systemd's state and main pid, and the process's
// working directory.
func Look(ctx context.Context, node Node) (Holding, error) {
	props, err := nodeunit.Show(ctx, node, Unit, "ActiveState", "MainPID", "ActiveEnterTimestamp", "InactiveEnterTimestamp")
	if err != nil {
		return Holding{}, err
	}
	h := Holding{State: props["ActiveState"], Active: props["ActiveState"] == "active"}
	since := "InactiveEnterTimestamp"
	if h.Active {
		since = "ActiveEnterTimestamp"
	}
	h.Since, _ = nodeunit.ParseTimestamp(since, props[since]) // empty for a unit never loaded
	if pid, err := strconv.Atoi(props["MainPID"]); err == nil && pid > 0 {
		h.PID = pid
		var out bytes.Buffer
		cmd := node.CommandContext(ctx, "readlink", fmt.Sprintf("/proc/%d/cwd", pid))
		cmd.SetStdout(&out)
		if err := cmd.Run(); err == nil {
			h.Cwd = strings.TrimSpace(out.String())
		}
	}
	return h, nil
}

// Mount is a mount table line of the node (/proc/1/mountinfo).
type Mount struct {
	Target string `json:"target"`
	FSType string `json:"fstype"`
	Line   string `json:"line"`
}

// Mounts reads the node's mount table (the kubelet's mount namespace: the
// node's init) and returns the mounts at or under dir.
func Mounts(ctx context.Context, node Node, dir string) ([]Mount, error) {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "cat", "/proc/1/mountinfo")
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading the mount table of %s: %w", node, err)
	}
	return MountsUnder(out.String(), dir), nil
}

// MountsUnder picks the mounts at or under dir out of a mountinfo table:
// "36 35 98:0 /mnt1 /mnt/target rw,noatime master:1 - tmpfs tmpfs rw".
func MountsUnder(mountinfo, dir string) []Mount {
	var out []Mount
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		target := unescape(f[4])
		if target != dir && !strings.HasPrefix(target, dir+"/") {
			continue
		}
		fstype := ""
		for i, x := range f {
			if x == "-" && i+1 < len(f) {
				fstype = f[i+1]
				break
			}
		}
		out = append(out, Mount{Target: target, FSType: fstype, Line: line})
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Restore ends a holder an earlier run left on any of the nodes (call it
// only under the cluster's run lock) and says where.
func Restore(ctx context.Context, nodes []Node) ([]string, error) {
	return nodeunit.OnEach(ctx, nodes, func(ctx context.Context, n Node) ([]string, error) {
		state, err := nodeunit.State(ctx, n, Unit)
		if err != nil {
			return nil, err
		}
		if state != "active" && state != "activating" {
			return nil, nil
		}
		if err := Release(ctx, n); err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("a process an earlier run left keeping a pod's volume busy on %s (%s): stopped", n, Unit)}, nil
	})
}
