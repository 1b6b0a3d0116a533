//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/labs/orphan"
)

// Bounds of the interruption test, each from the mechanism it checks.
const (
	// magesCleanupWindow: mage's generated main cancels the targets' context
	// on SIGINT and exits five seconds later, whatever they are doing.
	magesCleanupWindow = 5 * time.Second
	// switchSlack: the dead-man's switch is a systemd timer with 1 s accuracy,
	// plus the time systemctl takes to start the kubelet.
	switchSlack = 10 * time.Second
	// stoppedWithin: `go tool mage lab:orphan` compiles the targets (first
	// time about a minute on a busy machine), reuses the cluster, starts a pod
	// and stops the kubelet; generous, as it is only a test's give-up point.
	stoppedWithin = 6 * time.Minute
)

// TestOrphanInterruptedThroughMage interrupts `go tool mage lab:orphan` the
// way a user does, by signalling its whole process group while the kubelet
// is stopped: Ctrl-C (SIGINT), then SIGKILL (a closed laptop, a lost
// terminal). After SIGINT the kubelet must be active within mage's five
// second window; after SIGKILL within the lab's dead-man's switch bound.
// A third case runs `go tool mage cluster:up` right after the SIGKILL, with
// the kubelet still stopped: it must repair it (and disarm the switch), not
// recreate the cluster. Every time, `cluster:up` must keep the cluster (same
// node containers); after the three, a lab:orphan run must pass.
func TestOrphanInterruptedThroughMage(t *testing.T) {
	env := connect(t)
	worker := env.Workers[1]
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		within time.Duration
		// upAtOnce runs cluster:up right after the signal instead of waiting
		// for the kubelet: its repair is what brings the kubelet back.
		upAtOnce bool
	}{
		{"SIGINT", syscall.SIGINT, magesCleanupWindow, false},
		{"SIGKILL", syscall.SIGKILL, orphan.KubeletRestoreAfter + switchSlack, false},
		{"SIGKILL then cluster:up", syscall.SIGKILL, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			before := nodeContainerIDs(t, ctx)

			mage := startMage(t, root, "lab:orphan")
			stoppedAt := waitKubelet(t, ctx, worker, stoppedWithin, func(s string) bool { return s != "active" })
			t.Logf("kubelet on %s stopped by the lab (%s after start)", worker, time.Since(mage.started).Round(100*time.Millisecond))
			sentAt := time.Now()
			if err := syscall.Kill(-mage.cmd.Process.Pid, tc.sig); err != nil {
				t.Fatalf("sending %s to the process group: %v", tc.sig, err)
			}
			if !tc.upAtOnce {
				activeAt := waitKubelet(t, ctx, worker, tc.within+time.Minute, func(s string) bool { return s == "active" })
				back := activeAt.Sub(sentAt)
				t.Logf("%s: kubelet on %s active again %s after the signal (bound %s; it had been stopped %s before the signal)",
					tc.name, worker, back.Round(100*time.Millisecond), tc.within, sentAt.Sub(stoppedAt).Round(100*time.Millisecond))
				if back > tc.within {
					t.Errorf("the kubelet came back %s after %s, later than %s", back.Round(100*time.Millisecond), tc.name, tc.within)
				}
			}
			mage.wait(t)

			out := runMage(t, ctx, root, "cluster:up")
			if tc.upAtOnce {
				if !strings.Contains(out, "repairing a leftover: the kubelet on "+worker.String()) || !strings.Contains(out, "restore timer") {
					t.Errorf("cluster:up right after the SIGKILL did not say it started the kubelet and disarmed the switch:\n%s", out)
				}
				if s, err := kubelet.State(ctx, worker); err != nil || s != "active" {
					t.Errorf("after cluster:up the kubelet on %s is %q (%v)", worker, s, err)
				}
			}
			if strings.Contains(out, "deleting cluster") {
				t.Errorf("cluster:up after the %s deleted the cluster:\n%s", tc.sig, out)
			}
			if after := nodeContainerIDs(t, ctx); after != before {
				t.Errorf("node containers changed (the cluster was recreated): %s -> %s", before, after)
			}

		})
	}
	// One run after all three: the cluster each case left (checked above:
	// kubelet active, same node containers) is one a lab passes on. Once, not
	// per case: each run costs CI over a minute and shows the same. It is
	// also TestLabs' run of lab:orphan by termlab (madeBy), checked as
	// TestLabs checks its runs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := lab.Execute(ctx, env, orphan.Definition, lab.Options{})
	if err != nil {
		t.Fatalf("the run after the interrupts: %v", err)
	}
	if !s.Passed() {
		t.Fatalf("the run after the interrupts did not pass; see %s", filepath.Join(s.Dir, report.MarkdownFile))
	}
	checkRun(t, env, orphan.Definition, s, lab.ByTermlab)
}

type mageProcess struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan error
}

// startMage runs `go tool mage <target> [args]` in a new process group, as
// a terminal runs it, copying its output to the test log's stderr.
func startMage(t *testing.T, root string, target string, args ...string) *mageProcess {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "mage", target}, args...)...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting go tool mage %s: %v", target, err)
	}
	m := &mageProcess{cmd: cmd, started: time.Now(), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(os.Stderr, "mage "+target+": "+sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() { err := cmd.Wait(); pw.Close(); m.done <- err }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // never leave the group behind
	})
	return m
}

// wait waits for the interrupted process group to end.
func (m *mageProcess) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-m.done:
		t.Logf("go tool mage exited: %v", err)
	case <-time.After(magesCleanupWindow + 30*time.Second):
		t.Errorf("go tool mage did not exit after the signal")
	}
}

// runMage runs a target to the end and returns its output.
func runMage(t *testing.T, ctx context.Context, root, target string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", append([]string{"tool", "mage", target}, args...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, os.Stderr), io.MultiWriter(&out, os.Stderr)
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool mage %s: %v", target, err)
	}
	return out.String()
}

// waitKubelet polls the kubelet's state until ok (polling to reach a state:
// the record of the run is the lab's, not this test's) and returns when.
func waitKubelet(t *testing.T, ctx context.Context, node kubelet.Node, within time.Duration, ok func(string) bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		if s, err := kubelet.State(ctx, node); err == nil {
			last = s
			if ok(s) {
				return time.Now()
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for the kubelet on %s: %v (last state %q)", node, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("the kubelet on %s did not reach the wanted state within %s (last state %q)", node, within, last)
	return time.Time{}
}

// nodeContainerIDs identifies the cluster's node containers: a recreated
// cluster has new ones.
func nodeContainerIDs(t *testing.T, ctx context.Context) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=termlab", "--format", "{{.ID}} {{.Names}}").Output()
	if err != nil {
		t.Fatalf("listing node containers: %v", err)
	}
	lines := strings.Fields(string(out))
	return strings.Join(lines, ",")
}
