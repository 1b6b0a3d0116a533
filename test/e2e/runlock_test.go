//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/syncbuf"
)

// TestTwoTermlabsTakeTurns runs lab:finalizer twice against one cluster,
// the second started while the first runs, from two checkouts: this one (termlab's own cluster, the local
// path) and a second clone that reaches the cluster only through its
// kubeconfig with -nodeaccess, as a colleague on another machine would.
// Expected: the cluster's run lock (a Lease) makes them take turns — the
// clone says it waits and names this checkout's run — both pass, their runs do not
// overlap, neither repairs the other, and afterwards no Lease and no node
// pod is left. The clone's run is also the check that a lab through mage
// with -kubeconfig touches none of the local cluster machinery.
func TestTwoTermlabsTakeTurns(t *testing.T) {
	own := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "termlab")
	if out, err := exec.Command("git", "clone", "-q", root, other).CombinedOutput(); err != nil {
		t.Fatalf("cloning %s: %v\n%s", root, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	// The clone's targets compiled first (mage compiles on a target's first
	// run, not for -l; a missing kubeconfig ends the run at once), in a mage
	// cache of its own: mage names its binary by the targets' contents, and
	// two checkouts of one commit would otherwise relink one shared file in
	// turn (13 s each time on this machine, 55 s under load).
	cloneEnv := append(os.Environ(), "MAGEFILE_CACHE="+filepath.Join(t.TempDir(), "mage"))
	compile := exec.CommandContext(ctx, "go", "tool", "mage", "lab:finalizer", "-kubeconfig="+filepath.Join(other, "no-such-kubeconfig"))
	compile.Dir, compile.Env = other, cloneEnv
	if out, err := compile.CombinedOutput(); !strings.Contains(string(out), "no-such-kubeconfig") {
		t.Fatalf("compiling the clone's mage targets: %v\n%s", err, out)
	}
	// This checkout first; the clone once this one's run holds the lock,
	// which it then holds for the rest of its run (about 20 s), while the
	// clone reaches for it within seconds.
	begin := time.Now()
	here := startLab(ctx, t, "here", root, nil, "lab:finalizer")
	for here.runID() == "" {
		select {
		case <-here.done:
			t.Fatalf("this checkout's lab:finalizer ended before its run started: %v", here.err)
		case <-ctx.Done():
			t.Fatalf("this checkout's lab:finalizer never started its run: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	runs := []*labProcess{here, startLab(ctx, t, "clone", other, cloneEnv, "lab:finalizer", "-kubeconfig="+own.KubeconfigPath, "-nodeaccess", "-controlplaneaccess")}
	for _, r := range runs {
		<-r.done
	}
	t.Logf("both runs ended %s after they started", time.Since(begin).Round(time.Second))

	var windows [][2]time.Time
	for _, r := range runs {
		out := r.out.String()
		if r.err != nil {
			t.Errorf("%s: go tool mage lab:finalizer: %v", r.name, r.err)
		}
		if !strings.Contains(out, "lab:finalizer run ") || !strings.Contains(out, ": pass (") {
			t.Errorf("%s: the run did not pass", r.name)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "repairing a leftover") && strings.Contains(line, "node-access") {
				t.Errorf("%s repaired the other's node pods: %s", r.name, line)
			}
		}
		dir := regexp.MustCompile(`(\S+)/report\.md`).FindStringSubmatch(out)
		if dir == nil {
			t.Errorf("%s: no report.md named in the output", r.name)
			continue
		}
		s, err := report.ReadSummary(dir[1])
		if err != nil {
			t.Error(err)
			continue
		}
		windows = append(windows, [2]time.Time{s.StartedAt, s.FinishedAt})
	}
	if want := "another termlab holds this cluster's run lock (Lease kube-system/termlab-run-lock): lab:finalizer run " + here.runID(); !strings.Contains(runs[1].out.String(), want) {
		t.Errorf("the clone did not wait for this checkout's run, naming it (%q)", want)
	}
	if len(windows) == 2 && windows[0][0].Before(windows[1][1]) && windows[1][0].Before(windows[0][1]) {
		t.Errorf("the two runs overlapped: %v and %v", windows[0], windows[1])
	}
	clone := runs[1].out.String()
	for _, want := range []string{"node access through short-lived privileged pods", "node pods removed"} {
		if !strings.Contains(clone, want) {
			t.Errorf("the clone's output lacks %q", want)
		}
	}
	if strings.Contains(clone, "creating kind cluster") || strings.Contains(clone, "dockerd") {
		t.Errorf("the kubeconfig path touched the local cluster machinery")
	}
	if _, err := own.Client.CoordinationV1().Leases(runlock.LeaseNamespace).Get(ctx, runlock.LeaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the run lock's Lease is left on the cluster (%v)", err)
	}
	assertNoNodePods(t, own.Client)
}

// labProcess is one `go tool mage lab:…` in a new process group, its output
// kept and copied to the test log's stderr with its name.
type labProcess struct {
	name string
	cmd  *exec.Cmd
	out  syncbuf.Buffer
	done chan struct{} // closed when the process ended, err then set
	err  error
}

func startLab(ctx context.Context, t *testing.T, name, dir string, env []string, args ...string) *labProcess {
	t.Helper()
	p := &labProcess{name: name, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, "go", append([]string{"tool", "mage"}, args...)...)
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w := io.MultiWriter(&p.out, prefixWriter{name + ": ", os.Stderr})
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting go tool mage %v in %s: %v", args, dir, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) })
	return p
}

// runID is the run id the process printed ("… run <id>: results in …").
func (p *labProcess) runID() string {
	m := regexp.MustCompile(`lab:finalizer run (\S+): results in`).FindStringSubmatch(p.out.String())
	if m == nil {
		return ""
	}
	return m[1]
}

type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			fmt.Fprint(p.w, p.prefix+line)
		}
	}
	return len(b), nil
}
