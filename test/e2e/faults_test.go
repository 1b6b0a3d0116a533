//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/dockerhost"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/labs"
	"github.com/termlab/termlab/labs/orphan"
	"github.com/termlab/termlab/labs/stuck"
)

// TestResultsDiskFull runs lab:force with its results on a filesystem that
// fills up once its steps are done (a 1 MiB tmpfs, filled by the test when
// the last step finishes: a run's own size no longer decides it, since the
// evidence kept of crictl shrank). Expected, written down first: the run
// ends with a clear error naming the full disk; its folder never becomes
// latest and has no summary.json (nothing a reference or the index could
// take for a finished run); the cluster is cleaned up as after any run (its
// namespace deleted).
func TestResultsDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	own := connect(t)
	results := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "termlab-full-results", results).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", results).Run() })
	def, ok := labs.ByName("force")
	if !ok {
		t.Fatal("no lab force")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	begin := time.Now()
	// The last step of lab:force; once it is done, the disk is full.
	const lastStep = "wait for the container to stop"
	filled := false
	fill := func(e lab.Event) {
		if e.Kind != lab.StepFinished || e.Step != lastStep || filled {
			return
		}
		filled = true
		f, err := os.Create(filepath.Join(results, "filler"))
		if err != nil {
			t.Errorf("filling the results' disk: %v", err)
			return
		}
		defer f.Close()
		block := make([]byte, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				return // ENOSPC: full
			}
		}
	}
	s, err := lab.Execute(ctx, own, def, lab.Options{ResultsDir: results, Events: fill})
	t.Logf("lab:force with its results on a full disk ended after %s: %v", time.Since(begin).Round(time.Second), err)
	if !filled {
		t.Fatalf("the step %q never finished: the disk was not filled (a renamed step?)", lastStep)
	}
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("want an error naming the full disk, got %v", err)
	}
	if s == nil || s.Verdict != claims.Fail {
		t.Errorf("the run's summary says %v, want fail: its reports were not written", s)
	}
	if target, err := os.Readlink(filepath.Join(results, "force", "latest")); err == nil {
		t.Errorf("the half-written run became latest (%s)", target)
	}
	runs, _ := filepath.Glob(filepath.Join(results, "force", "*", report.SummaryFile))
	if len(runs) > 0 {
		t.Errorf("a half-written run has a summary.json: %v", runs)
	}
	list, err := own.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: lab.LabLabel + "=force"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range list.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s of the run is still there and not being deleted", ns.Name)
		}
	}
}

// TestScriptSkipsAnUndo runs a lab -by=script with a script that does
// nothing for one step that undoes a fault: lab:orphan's "start-kubelet",
// and lab:stuck's "untaint-node" (which comes before its start-kubelet, so
// the kubelet is left stopped too). Expected, written down first: the run
// fails, naming the step that was not seen; cleanup starts the kubelet and
// removes the taint and the run's mark on the node before lab.Execute
// returns (termlab's own actions in the cleanup step), not the dead-man's
// switch minutes later; the switch is disarmed; the node is Ready.
func TestScriptSkipsAnUndo(t *testing.T) {
	own := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lab  string
		skip evidence.ActionKind
		// restoreAfter is the lab's switch bound: cleanup must beat it.
		restoreAfter time.Duration
	}{
		{"orphan", evidence.ActionStartKubelet, orphan.KubeletRestoreAfter},
		{"stuck", evidence.ActionUntaintNode, stuck.KubeletRestoreAfter},
	} {
		t.Run(tc.lab+"/skip-"+string(tc.skip), func(t *testing.T) {
			def, ok := labs.ByName(tc.lab)
			if !ok {
				t.Fatalf("no lab %s", tc.lab)
			}
			// A repository whose scripts/<lab>.sh skips the one step and
			// hands every other to the real script.
			fake := t.TempDir()
			script := lab.ScriptPath(fake, tc.lab)
			body := fmt.Sprintf("#!/usr/bin/env bash\nif [ \"$1\" = %s ]; then echo \"skipping $1 $2\"; exit 0; fi\nexec bash %s \"$@\"\n", tc.skip, lab.ScriptPath(root, tc.lab))
			if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			begin := time.Now()
			s, err := lab.Execute(ctx, own, def, lab.Options{By: lab.ByScript, RepoRoot: fake, ResultsDir: t.TempDir()})
			took := time.Since(begin)
			t.Logf("%s with %s skipped ended after %s: %v", def.Title(), tc.skip, took.Round(time.Second), err)
			if err == nil || !strings.Contains(err.Error(), string(tc.skip)) || !strings.Contains(err.Error(), "not seen") {
				t.Errorf("want the run to fail naming %s as not seen, got %v", tc.skip, err)
			}
			if s == nil || s.Passed() {
				t.Fatalf("the run's summary %v: want a failed run", s)
			}
			if took >= tc.restoreAfter {
				t.Errorf("the run took %s, not shorter than the switch's %s: the switch, not cleanup, may have restored the kubelet", took, tc.restoreAfter)
			}
			rec, err := evidence.Load(s.Dir)
			if err != nil {
				t.Fatal(err)
			}
			worker := rec.TargetOf(evidence.ActionStopKubelet)
			node := own.Worker(worker)
			if node == nil {
				t.Fatalf("the run stopped the kubelet on %q, not a worker of the cluster", worker)
			}
			undone := map[evidence.ActionKind]bool{}
			for _, a := range rec.Actions {
				if a.Step == "cleanup" {
					undone[a.Kind] = true
				}
			}
			want := []evidence.ActionKind{evidence.ActionStartKubelet}
			if tc.skip == evidence.ActionUntaintNode {
				want = append(want, evidence.ActionUntaintNode)
			}
			for _, k := range want {
				if !undone[k] {
					t.Errorf("cleanup did not %s (its actions: %v)", k, undone)
				}
			}
			if state, err := kubelet.State(ctx, node); err != nil || state != "active" {
				t.Errorf("the kubelet on %s is %q (%v) after the run, want active", worker, state, err)
			}
			var timers strings.Builder
			list := node.CommandContext(ctx, "systemctl", "list-units", "--all", "--plain", "--no-legend", "--type=timer", kubelet.Unit(s.RunID)+"*")
			list.SetStdout(&timers)
			if err := list.Run(); err != nil || strings.TrimSpace(timers.String()) != "" {
				t.Errorf("the run's dead-man's switch on %s is still loaded: %q (%v)", worker, timers.String(), err)
			}
			n, err := own.Client.CoreV1().Nodes().Get(ctx, worker, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == corev1.TaintNodeOutOfService {
					t.Errorf("node %s still has the taint %s after the run", worker, taint.Key)
				}
			}
			if mark, ok := n.Annotations[lab.TaintedByAnnotation]; ok {
				t.Errorf("node %s still carries the run's mark %s=%s", worker, lab.TaintedByAnnotation, mark)
			}
			if !cluster.NodeReady(n) {
				t.Errorf("node %s is not Ready after the run", worker)
			}
		})
	}
}

// TestAPIServerRestartMidRun kills the API server's container on the
// control plane (its static pod: the kubelet starts it again) while
// lab:orphan waits on its watches for the node to turn NotReady. Expected,
// written down first: the run ends by itself; the outage is in the record
// as watch gaps that open at the kill and close (watching again from a
// resourceVersion, or a re-list that says changes may be lost); a claim
// whose window a gap overlaps fails naming it ("watch was down from … to
// …"), never passes on missing evidence; the run lock, its renewals failing
// meanwhile, is taken back (noted) or the run fails naming its loss;
// cleanup waits for the API server, so the namespace is deleted and the
// Lease gone; the cluster is whole again (nodes Ready, controllers working).
func TestAPIServerRestartMidRun(t *testing.T) {
	own := connect(t)
	def, ok := labs.ByName("orphan")
	if !ok {
		t.Fatal("no lab orphan")
	}
	var killedAt time.Time
	var killErr error
	hook := func(e lab.Event) {
		if !killedAt.IsZero() || e.Kind != lab.StepStarted || !strings.Contains(e.Step, "turn NotReady") {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		killedAt, killErr = time.Now(), killAPIServer(ctx, own.ControlPlane)
		t.Logf("killed the API server's container at %s: %v", killedAt.UTC().Format("15:04:05.000"), killErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := lab.Execute(ctx, own, def, lab.Options{Events: hook, ResultsDir: t.TempDir()})
	t.Logf("%s with the API server restarted ended after %s: %v", def.Title(), time.Since(begin).Round(time.Second), err)
	if killedAt.IsZero() || killErr != nil {
		t.Fatalf("the API server was not killed: %v", killErr)
	}
	if s == nil {
		t.Fatalf("no summary: %v", err)
	}
	rec, lerr := evidence.Load(s.Dir)
	if lerr != nil {
		t.Fatal(lerr)
	}
	// The outage is in the record.
	gaps := rec.GapsOverlapping(evidence.WatchPods, killedAt, time.Now())
	gaps = append(gaps, rec.GapsOverlapping(evidence.WatchNodes, killedAt, time.Now())...)
	if len(gaps) == 0 {
		t.Errorf("no pod or node watch gap after the kill at %s: %+v", killedAt.UTC().Format("15:04:05.000"), rec.Gaps)
	}
	for _, g := range gaps {
		t.Logf("gap %s %s–%s: %s", g.Source, g.From.UTC().Format("15:04:05.000"), g.To.UTC().Format("15:04:05.000"), g.Why)
		if g.To.IsZero() || g.To.Before(g.From) {
			t.Errorf("gap %+v did not close before the run ended", g)
		}
	}
	// No claim passes on evidence a gap took away: a claim whose window a
	// gap overlaps passed only if it says why the gap does not matter, or
	// failed naming it.
	for _, c := range s.Claims {
		t.Logf("claim %s: %s %s", c.ID, c.Verdict, c.Reason)
		if c.Verdict == claims.Fail && !strings.Contains(c.Reason, "watch was down") && err == nil {
			t.Errorf("claim %s failed for another reason than the outage: %s", c.ID, c.Reason)
		}
	}
	for _, n := range rec.Notes {
		if strings.Contains(n.Text, "run lock") || strings.Contains(n.Text, "API server") {
			t.Logf("note: %s", n.Text)
		}
	}
	if err != nil && !strings.Contains(err.Error(), "run lock") && !strings.Contains(err.Error(), "API server") && !strings.Contains(err.Error(), "watch") {
		t.Errorf("the run's error names neither the API server nor the lock nor a watch: %v", err)
	}
	// Cleanup waited for the API server: nothing of the run is left.
	checkNamespaceGone(t, own.Client.CoreV1().Namespaces().Get, s.Namespace)
	if _, err := own.Client.CoordinationV1().Leases("kube-system").Get(ctx, "termlab-run-lock", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the run lock's Lease is still there after the run: %v", err)
	}
	// The cluster is whole again for the tests after this one.
	if err := cluster.WaitNodesReady(ctx, own.Client, 3*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitControllersWorking(ctx, own.Client, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// killAPIServer stops the kube-apiserver container on the control plane at
// once, as a crash would.
func killAPIServer(ctx context.Context, cp cluster.Node) error {
	return killContainer(ctx, cp, "--name", "kube-apiserver")
}

// killContainer stops the one container crictl's filter finds on the node
// at once (crictl stop --timeout 0: SIGKILL, no grace); the kubelet starts
// it again.
func killContainer(ctx context.Context, node cluster.Node, filter ...string) error {
	var id strings.Builder
	ps := node.CommandContext(ctx, "crictl", append(append([]string{"ps"}, filter...), "-q")...)
	ps.SetStdout(&id)
	if err := ps.Run(); err != nil {
		return fmt.Errorf("finding the container %v on %s: %w", filter, node, err)
	}
	ids := strings.Fields(id.String())
	if len(ids) != 1 {
		return fmt.Errorf("containers %v on %s: %q, want one", filter, node, ids)
	}
	return node.CommandContext(ctx, "crictl", "stop", "--timeout", "0", ids[0]).Run()
}

// TestKwokControllerKilledMidRun kills kwok's controller container (the
// kubelet starts it again) as lab:kwok deletes its pods. Expected, written
// down first: the run fails, naming kwok's controller and when it was not
// serving (from controllers.jsonl), whatever its claims say: never a pass;
// cleanup leaves nothing; kwok serves again afterwards.
func TestKwokControllerKilledMidRun(t *testing.T) {
	own := connect(t)
	def, ok := labs.ByName("kwok")
	if !ok {
		t.Fatal("no lab kwok")
	}
	var killed string
	var killErr error
	hook := func(e lab.Event) {
		if killed != "" || killErr != nil || e.Kind != lab.StepStarted || !strings.HasPrefix(e.Step, "ordinary delete") {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		killed, killErr = killKwokController(ctx, own)
		t.Logf("killed kwok's controller: %s %v", killed, killErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s, err := lab.Execute(ctx, own, def, lab.Options{Events: hook, ResultsDir: t.TempDir()})
	t.Logf("%s with kwok's controller killed: %v", def.Title(), err)
	if killed == "" {
		t.Fatalf("kwok's controller was not killed: %v", killErr)
	}
	if s == nil || s.Passed() || err == nil || !strings.Contains(err.Error(), "kwok's controller") || !strings.Contains(err.Error(), "was not serving") {
		t.Errorf("want a failed run naming kwok's controller; got %v (summary %v)", err, s)
	}
	if s != nil {
		rec, lerr := evidence.Load(s.Dir)
		if lerr != nil {
			t.Fatal(lerr)
		}
		for _, c := range s.Claims {
			t.Logf("claim %s: %s %s", c.ID, c.Verdict, c.Reason) // what the claims said, outage or not
		}
		if len(rec.ControllerEvents) < 2 {
			t.Errorf("%s holds %d events, want the controller's pod before and after the kill", evidence.ControllersFile, len(rec.ControllerEvents))
		}
		checkNamespaceGone(t, own.Client.CoreV1().Namespaces().Get, s.Namespace)
	}
	// kwok serves again for the tests after this one.
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := own.Client.CoreV1().Pods(kwok.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kwok.ControllerLabel})
		if err != nil || len(l.Items) != 1 {
			return false, nil
		}
		for _, c := range l.Items[0].Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("kwok's controller not Ready again: %v", err)
	}
	if err := cluster.WaitNodesReady(ctx, own.Client, 3*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
}

// killKwokController stops the container of kwok's controller pod on its
// node at once (crictl stop, no grace), as a crash would; it returns the pod.
func killKwokController(ctx context.Context, env *cluster.Env) (string, error) {
	l, err := env.Client.CoreV1().Pods(kwok.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kwok.ControllerLabel})
	if err != nil {
		return "", err
	}
	if len(l.Items) != 1 {
		return "", fmt.Errorf("%d pods %s, want one", len(l.Items), kwok.ControllerLabel)
	}
	pod := l.Items[0]
	var node cluster.Node
	for _, n := range append([]cluster.Node{env.ControlPlane}, env.Workers...) {
		if n.String() == pod.Spec.NodeName {
			node = n
		}
	}
	if node == nil {
		return "", fmt.Errorf("pod %s runs on %q, not a node termlab reaches", pod.Name, pod.Spec.NodeName)
	}
	return pod.Name, killContainer(ctx, node, "--label", "io.kubernetes.pod.name="+pod.Name)
}

// TestDockerdRestartMidRun stops the Docker engine termlab started (SIGTERM
// to the pid in dockerhost.PIDFile, as `systemctl restart docker` begins)
// as lab:finalizer is about to delete its first pod, and lets `go tool mage
// cluster:up` start it again. Expected, written down first: the run fails, its error
// opening with the engine that does not answer and what to do
// (`go tool mage cluster:up`); cleanup stops waiting for an API server that
// cannot come back once the engine has not answered for 30 s, so the run
// ends within a few minutes, not at cleanup's bound; then cluster:up starts
// the engine, whose node containers come back (the same ones: no cluster
// recreated), and removes what the run left (its namespace, the Lease).
func TestDockerdRestartMidRun(t *testing.T) {
	own := connect(t)
	pid := termlabDockerd(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	def, ok := labs.ByName("finalizer")
	if !ok {
		t.Fatal("no lab finalizer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	before := nodeContainerIDs(t, ctx)
	upRan := false
	t.Cleanup(func() {
		// The tests after this one need the engine and the cluster.
		if !upRan {
			runMage(t, context.Background(), root, "cluster:up")
		}
	})
	var stoppedAt time.Time
	var stopErr error
	hook := func(e lab.Event) {
		if !stoppedAt.IsZero() || e.Kind != lab.StepStarted || !strings.Contains(e.Step, "ordinary delete") {
			return
		}
		stoppedAt, stopErr = time.Now(), syscall.Kill(pid, syscall.SIGTERM)
		t.Logf("sent SIGTERM to dockerd (pid %d) at %s: %v", pid, stoppedAt.UTC().Format("15:04:05.000"), stopErr)
		// The step goes on once the engine is gone (it stops its containers
		// first, about 15 s): its requests then fail at once, and the run
		// does not sit out the step's bounds on an API server that went.
		if stopErr == nil {
			stopErr = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				return syscall.Kill(pid, 0) != nil, nil
			})
			t.Logf("dockerd exited %s after SIGTERM (%v)", time.Since(stoppedAt).Round(100*time.Millisecond), stopErr)
		}
	}
	begin := time.Now()
	s, err := lab.Execute(ctx, own, def, lab.Options{Events: hook, ResultsDir: t.TempDir()})
	took := time.Since(begin)
	t.Logf("%s with dockerd stopped ended after %s: %v", def.Title(), took.Round(time.Second), err)
	if stoppedAt.IsZero() || stopErr != nil {
		t.Fatalf("dockerd was not stopped (or did not exit within a minute of SIGTERM): %v", stopErr)
	}
	const engine = "the cluster's nodes: the Docker engine does not answer"
	if err == nil || !strings.Contains(err.Error(), engine) || !strings.Contains(err.Error(), "go tool mage cluster:up") {
		t.Errorf("the run's error %v; want it to say %q and what to do", err, engine)
	} else if i := strings.Index(err.Error(), engine); strings.Contains(err.Error()[:i], "; ") {
		t.Errorf("the engine is not the first thing the run's error names: %v", err)
	}
	if s != nil && s.Verdict != claims.Fail {
		t.Errorf("verdict %s, want fail", s.Verdict)
	}
	if took > 5*time.Minute {
		t.Errorf("the run took %s after the engine stopped; cleanup waited for an engine that was not coming back", took.Round(time.Second))
	}

	upRan = true
	upBegin := time.Now()
	out := runMage(t, ctx, root, "cluster:up")
	t.Logf("cluster:up after dockerd stopped took %s", time.Since(upBegin).Round(100*time.Millisecond))
	if !strings.Contains(out, "starting dockerd") {
		t.Errorf("cluster:up did not say it started dockerd:\n%s", out)
	}
	if strings.Contains(out, "deleting cluster") {
		t.Errorf("cluster:up after the engine restarted deleted the cluster:\n%s", out)
	}
	if after := nodeContainerIDs(t, ctx); after != before {
		t.Errorf("node containers changed (the cluster was recreated): %s -> %s", before, after)
	}
	if s != nil {
		checkNamespaceGone(t, own.Client.CoreV1().Namespaces().Get, s.Namespace)
	}
	if _, err := own.Client.CoordinationV1().Leases("kube-system").Get(ctx, "termlab-run-lock", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the run lock's Lease is still there after cluster:up: %v", err)
	}
	if err := cluster.WaitControllersWorking(ctx, own.Client, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// termlabDockerd is the pid of the dockerd termlab started; the test skips
// on a machine whose engine is someone else's (termlab stops only its own).
func termlabDockerd(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(dockerhost.PIDFile)
	if err != nil {
		t.Skipf("the Docker engine was not started by termlab (%v): not restarting someone else's engine", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || strings.TrimSpace(string(comm)) != "dockerd" {
		t.Skipf("%s names no running dockerd (%q): not restarting someone else's engine", dockerhost.PIDFile, b)
	}
	return pid
}
