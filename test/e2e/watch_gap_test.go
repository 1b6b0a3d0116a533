//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/recorder"
)

// A pod held by a finalizer, deleted; the recorder's pod watch cut for a few
// seconds during the hold; the finalizer released. The watch comes back from
// its last resourceVersion, so the DELETED is still recorded, but "no DELETED
// before the release" can no longer be shown: DeletionHeld must fail naming
// the gap. The same flow without a cut passes.
func TestWatchGapDuringHold(t *testing.T) {
	env := connect(t)
	for _, tc := range []struct {
		name string
		cut  time.Duration
	}{
		{"uncut", 0},
		{"pod watch cut for 3s", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := holdWithCut(t, env.Client, testNamespace(t, env), tc.cut)
			rec, c := run.rec, run.claim
			if len(rec.EventsFor("held")) == 0 {
				t.Fatal("no pod event recorded")
			}
			if _, ok := rec.Deleted("held"); !ok {
				t.Fatalf("no DELETED event recorded: %s", strings.Join(describeAll(rec.EventsFor("held")), "; "))
			}
			checkInOrderOnce(t, rec.EventsFor("held"))
			podGaps := rec.GapsOverlapping(evidence.WatchPods, rec.StartedAt, rec.EndedAt)

			if tc.cut == 0 {
				if len(podGaps) != 0 {
					t.Fatalf("pod watch gaps without a cut: %+v", podGaps)
				}
				if !c.Passed() {
					t.Fatalf("DeletionHeld failed without a cut: %s (observed %v)", c.Reason, c.Observed)
				}
				return
			}

			if len(podGaps) != 1 {
				t.Fatalf("pod watch gaps %+v, want the one cut", podGaps)
			}
			g := podGaps[0]
			if g.To.Sub(g.From) < tc.cut-time.Second {
				t.Errorf("gap %s–%s is much shorter than the %s the watch was refused", g.From, g.To, tc.cut)
			}
			if !strings.Contains(g.Why, "refused by the test") || !strings.Contains(g.Why, "watching again from resourceVersion "+run.resumedFrom) {
				t.Errorf("gap's why %q does not say the watch was refused and resumed from %s", g.Why, run.resumedFrom)
			}
			// Resumed from the last version seen before the cut (a bookmark may have moved it on).
			if before, ok := rec.Latest("held", g.From); !ok || rvNumber(t, run.resumedFrom) < rvNumber(t, before.ResourceVersion) {
				t.Errorf("the pod watch came back from resourceVersion %s, before the last event seen before the cut (%s)", run.resumedFrom, evidence.Describe(before))
			}
			t.Logf("gap: %s–%s: %s", g.From.Format(time.RFC3339Nano), g.To.Format(time.RFC3339Nano), g.Why)
			t.Logf("DeletionHeld: %s: %s", c.Verdict, c.Reason)
			if c.Passed() {
				t.Fatalf("DeletionHeld passed with the pod watch down during the hold (gap %s–%s)", g.From, g.To)
			}
			wantReason := fmt.Sprintf("the pods watch was down from %s to %s, inside the window", g.From.UTC().Format(time.RFC3339Nano), g.To.UTC().Format(time.RFC3339Nano))
			if !strings.Contains(c.Reason, wantReason) || !strings.Contains(c.Reason, "an absence cannot be shown") {
				t.Fatalf("reason %q does not name the gap (%q)", c.Reason, wantReason)
			}
			if !slices.Contains(c.Evidence, evidence.WatchGapsFile) {
				t.Errorf("evidence %v does not cite %s", c.Evidence, evidence.WatchGapsFile)
			}
			// The claim fails on the gap alone: the object was held all along.
			finalizers, _ := c.Observed["finalizers"].([]string)
			if strings.Count(c.Reason, "watch was down") != 1 || c.Observed["deleted_before_release"] != false || !slices.Contains(finalizers, holdFinalizer) {
				t.Errorf("DeletionHeld failed for more than the gap: %s (observed %v)", c.Reason, c.Observed)
			}
			b, err := os.ReadFile(filepath.Join(run.dir, evidence.WatchGapsFile))
			if err != nil || strings.Count(strings.TrimSpace(string(b)), "\n") != 0 || !strings.Contains(string(b), `"source":"pods"`) {
				t.Errorf("%s: %v\n%s", evidence.WatchGapsFile, err, b)
			}
		})
	}
}

type holdRun struct {
	rec         *evidence.Record
	claim       claims.Claim
	dir         string
	resumedFrom string // the resourceVersion the pod watch was opened from after the cut
}

const (
	holdFinalizer = "termlab.dev/e2e-hold"
	holdFor       = 5 * time.Second
)

// holdWithCut records: create a pod with a finalizer that no node will run,
// delete it, hold it for holdFor (cutting the pod watch for cut, if set, and
// waiting for it to come back), release the finalizer, wait for DELETED.
func holdWithCut(t *testing.T, client kubernetes.Interface, ns string, cut time.Duration) holdRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := client.CoreV1().Pods(ns)
	// Runs before the namespace's own cleanup (t.Cleanup is last in, first
	// out): a pod whose finalizer stays would keep the namespace terminating.
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_, err := pods.Patch(cctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer of held in cleanup: %v", err)
		}
	})

	cutter := &podWatchCutter{}
	dir := t.TempDir()
	rec, err := recorder.Start(ctx, recorder.Config{
		Client: cuttableClient{Interface: client, cutter: cutter}, Lab: "e2e-watch-gap", RunID: ns, Namespace: ns,
		PodSelector: "termlab.dev/run-id=" + ns, Dir: dir,
	})
	if err != nil {
		t.Fatalf("starting the recorder: %v", err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := rec.Stop(); err != nil {
				t.Errorf("stopping the recorder: %v", err)
			}
		}
	}
	t.Cleanup(stop)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Labels: map[string]string{"termlab.dev/run-id": ns}, Finalizers: []string{holdFinalizer}},
		Spec: corev1.PodSpec{
			// No node has this label: the pod stays Pending, so only the API server acts on it.
			NodeSelector:                 map[string]string{"termlab.dev/e2e": "no-such-node"},
			AutomountServiceAccountToken: new(bool),
			Containers:                   []corev1.Container{{Name: "app", Image: "termlab.local/never-pulled:e2e"}},
		},
	}
	_, err = rec.Act("create", "held", pod, "kubectl create -f held.yaml", func() error {
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating pod held: %v", err)
	}
	if _, err := rec.WaitPod(ctx, "held", "be added", func(e evidence.PodEvent) bool { return e.Type == "ADDED" }); err != nil {
		t.Fatal(err)
	}
	_, err = rec.Act("delete", "held", metav1.DeleteOptions{}, "kubectl delete pod held --wait=false", func() error {
		return pods.Delete(ctx, "held", metav1.DeleteOptions{})
	})
	if err != nil {
		t.Fatalf("deleting pod held: %v", err)
	}
	if _, err := rec.WaitPod(ctx, "held", "get a deletionTimestamp", func(e evidence.PodEvent) bool { return e.DeletionTimestamp != nil }); err != nil {
		t.Fatal(err)
	}
	holdEnds := time.NewTimer(holdFor)
	defer holdEnds.Stop()

	out := holdRun{dir: dir}
	if cut > 0 {
		cutter.cut(cut)
		// Wait for the watch to come back: the recorder closes the gap when it is.
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, cut+30*time.Second, true, func(context.Context) (bool, error) {
			gaps := rec.Record().Gaps
			return len(gaps) > 0 && !gaps[len(gaps)-1].To.IsZero(), nil
		})
		if err != nil {
			t.Fatalf("the pod watch did not come back after the cut: %v (gaps %+v)", err, rec.Record().Gaps)
		}
		out.resumedFrom = cutter.lastVersion()
	}
	select {
	case <-holdEnds.C:
	case <-ctx.Done():
		t.Fatalf("holding pod held: %v", ctx.Err())
	}

	_, err = rec.Act("remove-finalizers", "held", map[string]any{"metadata": map[string]any{"finalizers": nil}}, "kubectl patch pod held --type=merge -p '{\"metadata\":{\"finalizers\":null}}'", func() error {
		_, err := pods.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("removing the finalizer of pod held: %v", err)
	}
	if _, err := rec.WaitPod(ctx, "held", "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" }); err != nil {
		t.Fatal(err)
	}
	stop()
	out.rec = rec.Record()
	out.claim = claims.DeletionHeld(out.rec, claims.Held{
		ID: "e2e.held", Statement: "After an ordinary delete, pod held stays with its finalizer, with no DELETED event until the finalizer is released.",
		Pod: "held", Finalizer: holdFinalizer, Delete: "delete", Release: "remove-finalizers", MinHold: holdFor - time.Second,
	})
	return out
}

// checkInOrderOnce fails the test if a pod event's resourceVersion repeats
// or goes back: after a watch resumes, nothing is recorded twice.
func checkInOrderOnce(t *testing.T, events []evidence.PodEvent) {
	t.Helper()
	var last int64
	for _, e := range events {
		rv := rvNumber(t, e.ResourceVersion)
		if rv <= last {
			t.Fatalf("events not in order or recorded twice: %s", strings.Join(describeAll(events), "; "))
		}
		last = rv
	}
}

// rvNumber reads a resourceVersion as the number etcd makes it (opaque to
// clients, but ordered on this cluster's single etcd).
func rvNumber(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

func describeAll(events []evidence.PodEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = evidence.Describe(e)
	}
	return out
}

// podWatchCutter hands out the recorder's pod watches and can cut them: stop
// every live one and refuse new ones for a while, as a lost connection to the
// API server would.
type podWatchCutter struct {
	mu          sync.Mutex
	live        []watch.Interface
	refuseUntil time.Time
	versions    []string // the resourceVersion each granted watch was opened from
}

func (c *podWatchCutter) watch(ctx context.Context, o metav1.ListOptions, open func(context.Context, metav1.ListOptions) (watch.Interface, error)) (watch.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if until := c.refuseUntil; time.Now().Before(until) {
		return nil, fmt.Errorf("refused by the test: the pod watch is cut until %s", until.UTC().Format(time.RFC3339Nano))
	}
	w, err := open(ctx, o)
	if err != nil {
		return nil, err
	}
	c.live = append(c.live, w)
	c.versions = append(c.versions, o.ResourceVersion)
	return w, nil
}

// cut stops every live pod watch and refuses new ones for d.
func (c *podWatchCutter) cut(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuseUntil = time.Now().Add(d)
	for _, w := range c.live {
		w.Stop()
	}
	c.live = nil
}

func (c *podWatchCutter) lastVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.versions) == 0 {
		return ""
	}
	return c.versions[len(c.versions)-1]
}

// cuttableClient is the cluster's client whose pod watches go through a cutter.
type cuttableClient struct {
	kubernetes.Interface
	cutter *podWatchCutter
}

func (c cuttableClient) CoreV1() corev1client.CoreV1Interface {
	return cuttableCore{CoreV1Interface: c.Interface.CoreV1(), cutter: c.cutter}
}

type cuttableCore struct {
	corev1client.CoreV1Interface
	cutter *podWatchCutter
}

func (c cuttableCore) Pods(ns string) corev1client.PodInterface {
	return cuttablePods{PodInterface: c.CoreV1Interface.Pods(ns), cutter: c.cutter}
}

type cuttablePods struct {
	corev1client.PodInterface
	cutter *podWatchCutter
}

func (p cuttablePods) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return p.cutter.watch(ctx, o, p.PodInterface.Watch)
}
