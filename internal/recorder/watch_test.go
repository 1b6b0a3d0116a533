package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/termlab/termlab/internal/evidence"
)

// These tests use client-go's fake clientset for the watch plumbing only: which
// watches are opened from which resourceVersion, and what the recorder makes of
// streams that end, fail or expire. Deletion itself is tested on a real cluster.

// scriptedPods answers the recorder's pod LISTs and watches from a script:
// each watch attempt takes the next outcome (a fake watcher, or an error).
type scriptedPods struct {
	t      *testing.T
	client *fake.Clientset

	mu       sync.Mutex
	lists    []*corev1.PodList
	outcomes []any // *watch.FakeWatcher or error
	asked    []string
	opened   chan *watch.FakeWatcher
}

func newScriptedPods(t *testing.T, lists []*corev1.PodList, outcomes ...any) *scriptedPods {
	s := &scriptedPods{t: t, client: fake.NewClientset(), lists: lists, outcomes: outcomes, opened: make(chan *watch.FakeWatcher, len(outcomes))}
	s.client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.lists) == 0 {
			return true, nil, errors.New("the script has no more pod lists")
		}
		l := s.lists[0]
		s.lists = s.lists[1:]
		return true, l, nil
	})
	s.client.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.asked = append(s.asked, a.(k8stesting.WatchAction).GetWatchRestrictions().ResourceVersion)
		if len(s.outcomes) == 0 {
			return true, nil, errors.New("connection refused (the script has no more watches)")
		}
		next := s.outcomes[0]
		s.outcomes = s.outcomes[1:]
		if err, ok := next.(error); ok {
			return true, nil, err
		}
		w := next.(*watch.FakeWatcher)
		s.opened <- w
		return true, w, nil
	})
	// Events and nodes: watches that stay quiet.
	for _, res := range []string{"events", "nodes"} {
		s.client.PrependWatchReactor(res, func(k8stesting.Action) (bool, watch.Interface, error) {
			return true, watch.NewFakeWithChanSize(1, false), nil
		})
	}
	return s
}

// nextWatch waits for the recorder to open the next scripted pod watch.
func (s *scriptedPods) nextWatch(ctx context.Context) *watch.FakeWatcher {
	s.t.Helper()
	select {
	case w := <-s.opened:
		return w
	case <-ctx.Done():
		s.t.Fatalf("the recorder opened no new pod watch: %v (resourceVersions asked: %v)", ctx.Err(), s.askedVersions())
		return nil
	}
}

func (s *scriptedPods) askedVersions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

func podAt(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, Labels: map[string]string{"run": "r1"}}}
}

func podList(rv string, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

func startScripted(t *testing.T, s *scriptedPods) *Recorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Start(ctx, Config{Client: s.client, Lab: "test", RunID: "r1", Namespace: "ns", PodSelector: "run=r1", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func versionsOf(events []evidence.PodEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type+":"+e.Name+"@"+e.ResourceVersion)
	}
	return out
}

func readGapsFile(t *testing.T, dir string) []evidence.WatchGap {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, evidence.WatchGapsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []evidence.WatchGap
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var g evidence.WatchGap
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			t.Fatalf("%s: %v", evidence.WatchGapsFile, err)
		}
		out = append(out, g)
	}
	return out
}

func TestWatchGapRecordedAndEventsResumeInOrder(t *testing.T) {
	first, second := watch.NewFakeWithChanSize(10, false), watch.NewFakeWithChanSize(10, false)
	s := newScriptedPods(t, []*corev1.PodList{podList("10", podAt("held", "10"))},
		first, errors.New("connection refused"), second)
	r := startScripted(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if w := s.nextWatch(ctx); w != first {
		t.Fatal("the first watch is not the scripted one")
	}
	first.Modify(podAt("held", "11"))
	first.Modify(podAt("held", "12"))
	first.Stop() // the stream ends: the server closed it
	if w := s.nextWatch(ctx); w != second {
		t.Fatal("the second watch is not the scripted one")
	}
	second.Modify(podAt("held", "13"))
	second.Delete(podAt("held", "14"))
	if _, err := r.WaitPod(ctx, "held", "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" }); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}

	// Watched from the LIST's resourceVersion, then from the last one seen, twice
	// (the first attempt to watch again was refused).
	if got := strings.Join(s.askedVersions(), ","); got != "10,12,12" {
		t.Fatalf("watches asked from resourceVersions %s, want 10,12,12", got)
	}
	rec, err := evidence.Load(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	want := "LISTED:held@10 MODIFIED:held@11 MODIFIED:held@12 MODIFIED:held@13 DELETED:held@14"
	if got := strings.Join(versionsOf(rec.PodEvents), " "); got != want {
		t.Fatalf("events.jsonl:\n got %s\nwant %s", got, want)
	}
	if len(rec.Gaps) != 1 {
		t.Fatalf("gaps %+v, want one", rec.Gaps)
	}
	g := rec.Gaps[0]
	if g.Source != evidence.WatchPods || g.From.IsZero() || g.To.Before(g.From) {
		t.Fatalf("gap %+v", g)
	}
	// The gap lies between the last event before the cut and the first after it.
	if g.From.Before(rec.PodEvents[2].ObservedAt) || g.To.After(rec.PodEvents[3].ObservedAt) {
		t.Fatalf("gap %s–%s is not between the events at %s and %s", g.From, g.To, rec.PodEvents[2].ObservedAt, rec.PodEvents[3].ObservedAt)
	}
	if g.ResumedFrom != "12" {
		t.Errorf("resumed from %q, want 12 (the last resourceVersion delivered)", g.ResumedFrom)
	}
	for _, part := range []string{"stream ended after resourceVersion 12", "1 failed attempt", "connection refused", "watching again from resourceVersion 12"} {
		if !strings.Contains(g.Why, part) {
			t.Errorf("why %q does not say %q", g.Why, part)
		}
	}
	if inFile := readGapsFile(t, r.Dir()); len(inFile) != 1 || inFile[0] != g {
		t.Errorf("%s holds %+v, want the recorded gap %+v", evidence.WatchGapsFile, inFile, g)
	}
	if got := rec.GapsOverlapping(evidence.WatchPods, rec.PodEvents[2].ObservedAt, rec.PodEvents[3].ObservedAt); len(got) != 1 {
		t.Errorf("GapsOverlapping around the cut: %+v", got)
	}
}

func TestWatchExpiredRelistsAndSaysChangesMayBeLost(t *testing.T) {
	first, second := watch.NewFakeWithChanSize(10, false), watch.NewFakeWithChanSize(10, false)
	s := newScriptedPods(t, []*corev1.PodList{
		podList("10", podAt("held", "10")),
		podList("20", podAt("other", "18")), // held was deleted while the watch was down
	}, first, second)
	r := startScripted(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	s.nextWatch(ctx)
	first.Modify(podAt("held", "11"))
	first.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 11 (20)"})
	s.nextWatch(ctx)
	second.Add(podAt("late", "21"))
	if _, err := r.WaitPod(ctx, "late", "be added", func(e evidence.PodEvent) bool { return e.Type == "ADDED" }); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.askedVersions(), ","); got != "10,20" {
		t.Fatalf("watches asked from resourceVersions %s, want 10,20 (the re-list's)", got)
	}
	rec, err := evidence.Load(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	want := "LISTED:held@10 MODIFIED:held@11 LISTED:other@18 ADDED:late@21"
	if got := strings.Join(versionsOf(rec.PodEvents), " "); got != want {
		t.Fatalf("events.jsonl:\n got %s\nwant %s", got, want)
	}
	if len(rec.Gaps) != 1 {
		t.Fatalf("gaps %+v, want one", rec.Gaps)
	}
	if rec.Gaps[0].ResumedFrom != "" {
		t.Errorf("a gap that ended in a re-list says it resumed from %q", rec.Gaps[0].ResumedFrom)
	}
	for _, part := range []string{"too old resource version", "re-listed at resourceVersion 20", "may be lost", "DELETED event lost: held"} {
		if !strings.Contains(rec.Gaps[0].Why, part) {
			t.Errorf("why %q does not say %q", rec.Gaps[0].Why, part)
		}
	}
}

func TestWatchGapStillOpenEndsWithTheRecord(t *testing.T) {
	first := watch.NewFakeWithChanSize(10, false)
	// After the first watch every attempt is refused.
	s := newScriptedPods(t, []*corev1.PodList{podList("10", podAt("held", "10"))}, first)
	r := startScripted(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.nextWatch(ctx)
	first.Stop()

	// While the run is on, the open gap shows with a zero To.
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		gaps := r.Record().Gaps
		return len(gaps) == 1 && gaps[0].To.IsZero(), nil
	})
	if err != nil {
		t.Fatalf("no open gap in the live record: %v (%+v)", err, r.Record().Gaps)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	rec, err := evidence.Load(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Gaps) != 1 || !rec.Gaps[0].To.Equal(rec.EndedAt) || !strings.Contains(rec.Gaps[0].Why, "still down when the recorder stopped") {
		t.Fatalf("gaps %+v, want one ending at %s", rec.Gaps, rec.EndedAt)
	}
	if inFile := readGapsFile(t, r.Dir()); len(inFile) != 1 || inFile[0] != rec.Gaps[0] {
		t.Errorf("%s holds %+v, want the recorded gap %+v", evidence.WatchGapsFile, inFile, rec.Gaps[0])
	}
}

func TestTooOld(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewResourceExpired("too old resource version: 1 (2)"), true},
		{apierrors.NewGone("gone"), true},
		{apierrors.FromObject(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Message: "x"}), true},
		{errors.New("connection refused"), false},
		{apierrors.NewServiceUnavailable("later"), false},
	} {
		if got := tooOld(tc.err); got != tc.want {
			t.Errorf("tooOld(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
