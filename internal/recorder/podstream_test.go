package recorder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/termlab/termlab/internal/evidence"
)

// With Config.EventsOnDisk the recorder keeps each pod's latest event, not
// every event: a wait visits those first, then every later event; Record's
// pod events are read back from events.jsonl, whole objects left there.
func TestEventsOnDiskKeepOnlyTheLatestInMemory(t *testing.T) {
	r := newTestRecorder(t)
	r.cfg.EventsOnDisk = true
	r.stream, r.auditTail = newPodStream(), &auditTail{}
	p := testPod()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = nil, nil
	p.Labels = map[string]string{"termlab.dev/stage-set": "faithful", "other": "x"}
	for _, rv := range []string{"1", "2", "3"} {
		p.ResourceVersion = rv
		r.handle("pods", watch.Event{Type: watch.Modified, Object: p.DeepCopy()})
	}
	q := p.DeepCopy()
	q.Name, q.UID, q.ResourceVersion = "other", "u2", "4"
	r.handle("pods", watch.Event{Type: watch.Added, Object: q})

	if n := r.PodEventCount(); n != 4 || len(r.stream.latest) != 2 || len(r.rec.PodEvents) != 0 {
		t.Fatalf("%d events counted, %d kept as latest, %d in the record's memory: want 4, 2, 0", n, len(r.stream.latest), len(r.rec.PodEvents))
	}
	// The wait sees each pod's latest (rv 3 of held, not 1 or 2), then what comes.
	var seen []string
	done := make(chan error, 1)
	go func() {
		done <- r.WaitEvents(context.Background(), "held DELETED", func(e evidence.PodEvent) bool {
			seen = append(seen, e.Name+"@"+e.ResourceVersion)
			return e.Type == "DELETED"
		})
	}()
	p.ResourceVersion = "5"
	deadline := time.Now().Add(5 * time.Second)
	for { // the waiter must be subscribed before the DELETED, or it sees it as the latest: either way once
		r.mu.Lock()
		subs := len(r.stream.subs)
		r.mu.Unlock()
		if subs == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r.handle("pods", watch.Event{Type: watch.Deleted, Object: p.DeepCopy()})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "held@3 other@4 held@5" {
		t.Errorf("visited %s, want held@3 other@4 held@5", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.WaitPod(ctx, "held", "turn purple", func(evidence.PodEvent) bool { return false }); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last seen: DELETED rv=5") {
		t.Errorf("WaitPod on disk: %v", err)
	}
	if e, err := r.WaitPod(context.Background(), "held", "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" }); err != nil || e.ResourceVersion != "5" {
		t.Errorf("WaitPod after the DELETED: %+v %v", e, err)
	}

	// A LIST's versions: an older one of a pod counts, one never recorded does not.
	if missing, err := r.WaitVersions(context.Background(), "the listed states", map[string]string{"held": "2", "other": "4"}); err != nil || missing != 0 {
		t.Errorf("WaitVersions of recorded versions: %d missing, %v", missing, err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if missing, err := r.WaitVersions(ctx2, "the listed states", map[string]string{"held": "9", "other": "4"}); err == nil || missing != 1 {
		t.Errorf("WaitVersions of a version never recorded: %d missing, %v", missing, err)
	}

	rec := r.Record()
	var all []string
	if err := rec.EachPodEvent(func(e evidence.PodEvent) bool {
		all = append(all, e.Name+"@"+e.ResourceVersion+"/"+e.Labels["termlab.dev/stage-set"])
		if e.Object != nil {
			t.Errorf("an event read back carries its object")
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(all, " "); got != "held@1/faithful held@2/faithful held@3/faithful other@4/faithful held@5/faithful" || rec.PodEventCount() != 5 || rec.PodEvents != nil {
		t.Errorf("Record's pod events: %s (count %d, %d in memory)", got, rec.PodEventCount(), len(rec.PodEvents))
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestAuditTailKeepsTheLatest(t *testing.T) {
	r := newTestRecorder(t)
	r.auditTail = &auditTail{}
	var batch []evidence.AuditEvent
	for i := 0; i < 3*auditTailKeep; i++ {
		batch = append(batch, evidence.AuditEvent{Name: "p", Code: i})
	}
	r.auditTail.add(batch[:10])
	got, next := r.auditSinceLocked(0)
	if len(got) != 10 || next != 10 {
		t.Fatalf("after 10: %d events, next %d", len(got), next)
	}
	r.auditTail.add(batch[10:])
	got, next = r.auditSinceLocked(5)
	if next != 3*auditTailKeep || len(got) < auditTailKeep || len(r.auditTail.events) > 2*auditTailKeep || got[len(got)-1].Code != 3*auditTailKeep-1 {
		t.Fatalf("after all: %d events from 5 (kept %d), next %d", len(got), len(r.auditTail.events), next)
	}
	if got, _ := r.auditSinceLocked(next - 2); len(got) != 2 || got[0].Code != next-2 {
		t.Fatalf("the last two: %+v", got)
	}
}

// HandOver gives the record away and drops the recorder's own copy: decide
// must not hold the pods' latest events twice.
func TestHandOverLetsGoOfTheRecordersCopy(t *testing.T) {
	r := newTestRecorder(t)
	r.cfg.EventsOnDisk = true
	r.stream, r.auditTail = newPodStream(), &auditTail{}
	p := testPod()
	for i, rv := range []string{"1", "2"} {
		q := p.DeepCopy()
		q.Name, q.ResourceVersion = fmt.Sprintf("pod-%d", i), rv
		r.handle("pods", watch.Event{Type: watch.Added, Object: q})
	}
	r.Notef("a note")
	rec := r.HandOver()
	if rec.PodEventCount() != 2 || len(rec.Notes) != 1 {
		t.Fatalf("handed over %d pod events and %d notes, want 2 and 1", rec.PodEventCount(), len(rec.Notes))
	}
	if len(r.stream.latest) != 0 || len(r.stream.versions) != 0 || len(r.rec.Notes) != 0 {
		t.Errorf("the recorder kept %d latest events, %d version lists, %d notes after HandOver", len(r.stream.latest), len(r.stream.versions), len(r.rec.Notes))
	}
	if again := r.Record(); again.PodEventCount() != 2 || len(again.Notes) != 1 {
		t.Errorf("Record after HandOver has %d pod events and %d notes, want the handed-over 2 and 1", again.PodEventCount(), len(again.Notes))
	}
}

// resourceVersions are kept as integers where they are (etcd revisions) and
// whole where not; a LIST's version is found either way, and a version no
// event carried is not.
func TestPodStreamVersions(t *testing.T) {
	s := newPodStream()
	for _, rv := range []string{"1200", "1300", "opaque-7"} {
		s.add(evidence.PodEvent{Type: "MODIFIED", PodState: evidence.PodState{Name: "p", ResourceVersion: rv}})
	}
	for rv, want := range map[string]bool{"1200": true, "1300": true, "opaque-7": true, "1250": false, "opaque-8": false, "": false} {
		if got := s.has("p", rv); got != want {
			t.Errorf("has(p, %q) = %v, want %v", rv, got, want)
		}
	}
	if s.has("q", "1200") {
		t.Error("another pod's version counted")
	}
	if len(s.versions["p"]) != 2 || len(s.oddVersions["p"]) != 1 {
		t.Errorf("kept %v and %v", s.versions["p"], s.oddVersions["p"])
	}
}
