package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/termlab/termlab/internal/evidence"
)

func testPod() *corev1.Pod {
	dt := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC))
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "held", Namespace: "ns", UID: "u1", ResourceVersion: "42",
			DeletionTimestamp: &dt, DeletionGracePeriodSeconds: &grace, Finalizers: []string{"lab.example.com/cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{NodeName: "w1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodSucceeded,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "heartbeat", ContainerID: "containerd://abc123",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
			}},
		},
	}
}

func TestKubectlYAML(t *testing.T) {
	b, err := KubectlYAML(testPod())
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	if !strings.HasPrefix(y, "apiVersion: v1\nkind: Pod\nmetadata:\n") || strings.Contains(y, "managedFields") {
		t.Fatalf("not kubectl-like:\n%s", y)
	}
}

func TestFromInspectNotFound(t *testing.T) {
	o := fromInspect(nodeOutput{err: errors.New("exit status 1"), stderr: []byte(`E1202 getting the status of the container "abc": rpc error: code = NotFound desc = an error occurred when try to find container "abc": not found`)}, "abc")
	if o.State != evidence.ContainerNotFound {
		t.Fatalf("%+v", o)
	}
	// Failures that are not crictl's NotFound answer say nothing about the
	// container, even when their text says "not found".
	for name, failed := range map[string]nodeOutput{
		"docker exec failed":         {err: errors.New("docker exec: no such container")},
		"crictl missing on the node": {err: errors.New(`exec: "crictl": executable file not found in $PATH`), stderr: []byte(`OCI runtime exec failed: exec failed: unable to start container process: exec: "crictl": executable file not found in $PATH: unknown`)},
		"node container gone":        {err: errors.New("exit status 1"), stderr: []byte("Error response from daemon: container termlab-worker not found")},
		"runtime unreachable":        {err: errors.New("exit status 1"), stderr: []byte(`rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: no such file or directory"`)},
		"not found only on stdout":   {err: errors.New("exit status 1"), stdout: []byte("code = NotFound")},
	} {
		o := fromInspect(failed, "abc")
		if o.State != "" || o.Error == "" {
			t.Errorf("%s: must be an error of the observation, not a state: %+v", name, o)
		}
	}
	// A successful inspect whose output mentions NotFound is still parsed, not NOT_FOUND.
	o = fromInspect(nodeOutput{stdout: []byte(`{"status":{"id":"abc","state":"CONTAINER_RUNNING","reason":"code = NotFound"}}`)}, "abc")
	if o.State != evidence.ContainerRunning {
		t.Fatalf("a successful inspect read as %+v", o)
	}
}

func newTestRecorder(t *testing.T) *Recorder {
	dir := t.TempDir()
	r := &Recorder{cfg: Config{Dir: dir, Nodes: []string{"w2"}}, changed: make(chan struct{}), files: map[string]*os.File{}, step: -1, seq: map[string]int{}, gaps: map[string]*openGap{}}
	for _, name := range recordedFiles {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r.files[name] = f
	}
	return r
}

func TestWaitPodWakesOnTheEventAndRecordsInOrder(t *testing.T) {
	r := newTestRecorder(t)
	p := testPod()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = nil, nil
	r.handle("pods", watch.Event{Type: watch.Added, Object: p.DeepCopy()})

	got := make(chan evidence.PodEvent, 1)
	go func() {
		e, err := r.WaitPod(context.Background(), "held", "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
		if err != nil {
			t.Error(err)
		}
		got <- e
	}()
	p.ResourceVersion = "43"
	r.handle("pods", watch.Event{Type: watch.Bookmark, Object: p.DeepCopy()})
	r.handle("pods", watch.Event{Type: watch.Deleted, Object: p.DeepCopy()})
	select {
	case e := <-got:
		if e.ResourceVersion != "43" {
			t.Fatalf("woke on %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitPod did not wake on the DELETED event")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.WaitPod(ctx, "held", "turn purple", func(evidence.PodEvent) bool { return false })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last seen: DELETED rv=43") {
		t.Fatalf("timeout error %v", err)
	}

	// Node events: only changes of the Ready condition of the watched nodes are kept.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w2"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	r.handle("nodes", watch.Event{Type: watch.Modified, Object: node.DeepCopy()})
	r.handle("nodes", watch.Event{Type: watch.Modified, Object: node.DeepCopy()})
	other := node.DeepCopy()
	other.Name = "w1"
	r.handle("nodes", watch.Event{Type: watch.Modified, Object: other})
	node.Status.Conditions[0].Status = corev1.ConditionUnknown
	r.handle("nodes", watch.Event{Type: watch.Modified, Object: node.DeepCopy()})

	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	rec, err := evidence.Load(r.cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.PodEvents) != 2 || rec.PodEvents[0].Type != "ADDED" || rec.PodEvents[1].Type != "DELETED" || len(rec.PodEvents[1].Object) == 0 {
		t.Fatalf("events.jsonl: %+v", rec.PodEvents)
	}
	if len(rec.NodeEvents) != 2 || rec.NodeEvents[1].Ready != "Unknown" {
		t.Fatalf("nodes.jsonl: %+v", rec.NodeEvents)
	}
}

func TestStepFoldersAndActions(t *testing.T) {
	r := newTestRecorder(t)
	end := r.BeginStep("Force delete held!")
	_, err := r.Act("force-delete", "held", map[string]any{"gracePeriodSeconds": 0}, "kubectl delete --force", func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	dir := r.stepDirLocked()
	p1, p2 := r.uniquePathLocked(dir, "held", ".yaml"), r.uniquePathLocked(dir, "held", ".yaml")
	r.mu.Unlock()
	end(nil)
	if dir != "steps/01-force-delete-held" || p1 != dir+"/held.yaml" || p2 != dir+"/held-2.yaml" {
		t.Fatalf("paths %s %s %s", dir, p1, p2)
	}
	rec := r.Record()
	if len(rec.Actions) != 1 || rec.Actions[0].Step != "Force delete held!" || string(rec.Actions[0].Request) != `{"gracePeriodSeconds":0}` || !rec.Actions[0].Succeeded() {
		t.Fatalf("actions %+v", rec.Actions)
	}
	if rec.Steps[0].FinishedAt.IsZero() {
		t.Fatal("step not ended")
	}
}

// A line of events.jsonl with the object spliced in is what encoding/json
// writes for the whole event.
func TestPodEventLine(t *testing.T) {
	p := benchPod(7)
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	e := evidence.PodEvent{ObservedAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Type: "ADDED", PodState: evidence.StateOf(p), Object: raw}
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := podEventLine(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Errorf("line differs:\n got %s\nwant %s", got, want)
	}
	e.Object = nil
	got, _ = podEventLine(e)
	want, _ = json.Marshal(e)
	if string(got) != string(want)+"\n" {
		t.Errorf("line without object differs:\n got %s\nwant %s", got, want)
	}
}

// An event recorded just as a wait's bound ran out is kept: here the DELETED
// is recorded and the context cancelled while the wait looks at the ADDED,
// so when it next waits, both the record's change and ctx's end are ready.
// The old waits took whichever select picked and lost the event about half
// the time; 100 tries lose it with probability 1 − 2⁻¹⁰⁰.
func TestWaitsKeepAnEventRecordedAsTheBoundRanOut(t *testing.T) {
	for i := 0; i < 100; i++ {
		r := newTestRecorder(t)
		p := testPod()
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = nil, nil
		r.handle("pods", watch.Event{Type: watch.Added, Object: p.DeepCopy()})
		ctx, cancel := context.WithCancel(context.Background())
		err := r.WaitEvents(ctx, "the pod DELETED", func(e evidence.PodEvent) bool {
			if e.Type == "ADDED" {
				p.ResourceVersion = "43"
				r.handle("pods", watch.Event{Type: watch.Deleted, Object: p.DeepCopy()})
				cancel()
			}
			return e.Type == "DELETED"
		})
		if err != nil {
			t.Fatalf("try %d: WaitEvents: %v; the DELETED was recorded before the bound ran out", i, err)
		}

		// WaitPod and WaitNode: the event is recorded and ctx ended before
		// they look at all; they must still find it.
		ctx, cancel = context.WithCancel(context.Background())
		cancel()
		if _, err := r.WaitPod(ctx, "held", "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" }); err != nil {
			t.Fatalf("try %d: WaitPod: %v", i, err)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w2"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}
		r.handle("nodes", watch.Event{Type: watch.Modified, Object: node})
		if _, err := r.WaitNode(ctx, "w2", "turn NotReady", func(e evidence.NodeEvent) bool { return e.Ready != "True" }); err != nil {
			t.Fatalf("try %d: WaitNode: %v", i, err)
		}
		_ = r.Stop()
	}
}

// A kubelet's journal line can reach the record after the effect it tells of
// is seen on the API: WaitJournal must take one that arrives while it
// waits, and say how much it saw when none does.
func TestWaitJournalTakesALateLine(t *testing.T) {
	r := newTestRecorder(t)
	defer func() { _ = r.Stop() }()
	add := func(msg string) {
		r.mu.Lock()
		r.rec.Journal = append(r.rec.Journal, evidence.JournalEntry{Node: "w1", Unit: "kubelet", Message: msg})
		r.broadcast()
		r.mu.Unlock()
	}
	add("I1207 other line")
	go func() {
		time.Sleep(50 * time.Millisecond)
		add("I1207 the line")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := r.WaitJournal(ctx, "the line", func(e evidence.JournalEntry) bool { return e.Message == "I1207 the line" })
	if err != nil || e.Message != "I1207 the line" {
		t.Fatalf("WaitJournal = %q, %v; want the line that arrived while it waited", e.Message, err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = r.WaitJournal(ctx, "a line never logged", func(e evidence.JournalEntry) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "2 entries") {
		t.Fatalf("WaitJournal for a line never logged: %v; want a timeout naming the 2 entries seen", err)
	}
}
