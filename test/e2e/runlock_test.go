//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/runlock"
)

// TestTwoTermlabsTakeTurns runs lab:finalizer twice at once against one
// cluster, from two checkouts: this one (termlab's own cluster, the local
// path) and a second clone that reaches the cluster only through its
// kubeconfig with -nodeaccess, as a colleague on another machine would.
// Expected: the cluster's run lock (a Lease) makes them take turns — one says
// it waits and names the other's holder — both pass, their runs do not
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
	// Both checkouts' targets compiled first, so that the two runs really
	// meet. The clone gets a mage cache of its own: mage names its binary by
	// the targets' contents, and two checkouts of the same commit would
	// otherwise relink one shared file in turn (38 s here, under load).
	cloneEnv := append(os.Environ(), "MAGEFILE_CACHE="+filepath.Join(t.TempDir(), "mage"))
	for _, dir := range []string{root, other} {
		compile := exec.CommandContext(ctx, "go", "tool", "mage", "-l")
		compile.Dir = dir
		if dir == other {
			compile.Env = cloneEnv
		}
		if out, err := compile.CombinedOutput(); err != nil {
			t.Fatalf("compiling the mage targets of %s: %v\n%s", dir, err, out)
		}
	}
	begin := time.Now()
	runs := []*labProcess{
		startLab(ctx, t, "here", root, nil, "lab:finalizer"),
		startLab(ctx, t, "clone", other, cloneEnv, "lab:finalizer", "-kubeconfig="+own.KubeconfigPath, "-nodeaccess"),
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(r.wait)
	}
	wg.Wait()
	t.Logf("both runs ended %s after they started", time.Since(begin).Round(time.Second))

	waited := 0
	var windows [][2]time.Time
	for i, r := range runs {
		out := r.out.String()
		if r.err != nil {
			t.Errorf("%s: go tool mage lab:finalizer: %v", r.name, r.err)
		}
		if !strings.Contains(out, "lab:finalizer run ") || !strings.Contains(out, ": pass (") {
			t.Errorf("%s: the run did not pass", r.name)
		}
		if strings.Contains(out, "another termlab holds this cluster's run lock") {
			waited++
			otherID := runs[1-i].runID()
			if otherID == "" || !strings.Contains(out, "lab:finalizer run "+otherID) && !strings.Contains(out, "cluster:up of ") {
				t.Errorf("%s waited without naming the other run (%q)", r.name, otherID)
			}
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
	if waited == 0 {
		t.Errorf("neither termlab waited for the other's run lock")
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
	out  bytes.Buffer
	mu   sync.Mutex
	err  error
}

func startLab(ctx context.Context, t *testing.T, name, dir string, env []string, args ...string) *labProcess {
	t.Helper()
	p := &labProcess{name: name}
	p.cmd = exec.CommandContext(ctx, "go", append([]string{"tool", "mage"}, args...)...)
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w := io.MultiWriter(lockedWriter{&p.mu, &p.out}, prefixWriter{name + ": ", os.Stderr})
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting go tool mage %v in %s: %v", args, dir, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) })
	return p
}

func (p *labProcess) wait() { p.err = p.cmd.Wait() }

// runID is the run id the process printed ("… run <id>: results in …").
func (p *labProcess) runID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := regexp.MustCompile(`lab:finalizer run (\S+): results in`).FindStringSubmatch(p.out.String())
	if m == nil {
		return ""
	}
	return m[1]
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
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
