package claims

import (
	"slices"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
)

// orderRecord is a pod p's events, created at 1 s and deleted at 12 s, as
// the recorder writes them when its watch stays up; node n is listed at the
// start and turns NotReady.
func orderRecord() *evidence.Record {
	rec := newRecord()
	p := &podSeq{rec: rec, state: evidence.PodState{Name: "p", UID: "u-p", Phase: "Pending"}, rv: 100}
	p.event(1, "ADDED", nil).event(2, "MODIFIED", running).event(10, "MODIFIED", deleting(30)).
		event(11, "MODIFIED", terminated(0, "Completed")).event(12, "DELETED", nil)
	rec.NodeEvents = []evidence.NodeEvent{
		{ObservedAt: at(0), Type: "LISTED", Name: "n", ResourceVersion: "50", Ready: "True"},
		{ObservedAt: at(20), Type: "MODIFIED", Name: "n", ResourceVersion: "200", Ready: "Unknown"},
	}
	return rec
}

// swapEvents exchanges what pod events i and j said, keeping their times:
// the way internal/mutants swaps two events of one object.
func swapEvents(rec *evidence.Record, i, j int) {
	x, y := &rec.PodEvents[i], &rec.PodEvents[j]
	*x, *y = *y, *x
	x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
}

func TestWatchOrderPassesInOrder(t *testing.T) {
	c := WatchOrder(orderRecord(), "test")
	if !c.Passed() || c.ID != "test.watch_order" {
		t.Fatalf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
	}
	if !slices.Equal(c.Evidence, []string{evidence.EventsFile, evidence.NodesFile}) {
		t.Errorf("evidence %v, want the two files it read", c.Evidence)
	}
	if got := c.Observed[WatchOrderStreams].([]string); len(got) != 2 || !strings.HasPrefix(got[0], "events.jsonl: 5 events of 1 objects in 1 session") {
		t.Errorf("streams %v", got)
	}
}

// Each kind of break fails the claim, naming the file, the object and the
// first offending pair: both lines, types and resourceVersions.
func TestWatchOrderFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*evidence.Record)
		wants  []string
	}{
		{"the resourceVersion goes down", func(rec *evidence.Record) {
			rec.PodEvents[3].ResourceVersion = "102"
		}, []string{"events.jsonl: pod p (uid u-p): line 3 MODIFIED at resourceVersion 103", "then line 4 MODIFIED at resourceVersion 102", `breaks "resourceVersions strictly increasing"`}},
		{"ADDED after MODIFIED", func(rec *evidence.Record) { swapEvents(rec, 0, 1) },
			[]string{"line 1 MODIFIED at resourceVersion 102 (observed 2026-12-02T10:00:01Z)", "then line 2 ADDED at resourceVersion 101 (observed 2026-12-02T10:00:02Z)", `"ADDED (or LISTED) first"`}},
		{"an event after DELETED", func(rec *evidence.Record) { swapEvents(rec, 3, 4) },
			[]string{"line 4 DELETED at resourceVersion 105", "then line 5 MODIFIED at resourceVersion 104", `"DELETED last"`}},
		{"an event after DELETED, at a higher resourceVersion", func(rec *evidence.Record) {
			e := rec.PodEvents[3]
			e.ObservedAt, e.ResourceVersion = at(13), "106"
			rec.PodEvents = append(rec.PodEvents, e)
		}, []string{"line 5 DELETED at resourceVersion 105", "then line 6 MODIFIED at resourceVersion 106", `"DELETED last"`}},
		{"its ADDED lost", func(rec *evidence.Record) { rec.PodEvents = rec.PodEvents[1:] },
			[]string{"its first event, line 1 MODIFIED at resourceVersion 102", "neither ADDED nor LISTED"}},
		{"a node's Ready condition in the other order", func(rec *evidence.Record) {
			n := rec.NodeEvents
			n[0].ObservedAt, n[1].ObservedAt = n[1].ObservedAt, n[0].ObservedAt
			rec.NodeEvents = []evidence.NodeEvent{n[1], n[0]}
		}, []string{"nodes.jsonl: node n: line 1 MODIFIED at resourceVersion 200", "then line 2 LISTED at resourceVersion 50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := orderRecord()
			tc.break_(rec)
			c := WatchOrder(rec, "test")
			if c.Verdict != Fail {
				t.Fatalf("%s on a record out of order (%s)", c.Verdict, c.Reason)
			}
			for _, w := range tc.wants {
				if !strings.Contains(c.Reason, w) {
					t.Errorf("reason lacks %q:\n%s", w, c.Reason)
				}
			}
			if c.Observed[WatchOrderBroken] != 1 {
				t.Errorf("%s = %v, want 1", WatchOrderBroken, c.Observed[WatchOrderBroken])
			}
		})
	}
}

// The watch went down twice: once it came back from the last
// resourceVersion, once the server no longer had it and it re-listed, the
// re-list stating p again at the resourceVersion of its last event (a
// repeat) and q, created meanwhile. The order holds, and the gaps file is
// cited.
func TestWatchOrderAcrossAGapAndARelist(t *testing.T) {
	rec := orderRecord()
	p := rec.PodEvents
	rec.PodEvents = nil
	q := evidence.PodEvent{ObservedAt: at(6.5), Type: "LISTED", PodState: evidence.PodState{Name: "q", UID: "u-q", ResourceVersion: "150"}}
	relisted := p[1]
	relisted.ObservedAt, relisted.Type = at(6.4), "LISTED"
	rec.PodEvents = append(rec.PodEvents, p[0], p[1], relisted, q, p[2], p[3], p[4])
	rec.Gaps = []evidence.WatchGap{
		{Source: evidence.WatchPods, From: at(3), To: at(3.1), ResumedFrom: "102"},
		{Source: evidence.WatchPods, From: at(6), To: at(7), Why: "too old resource version; re-listed at resourceVersion 150"},
	}
	// p's next change came after the re-list's resourceVersion.
	for i := 4; i < 7; i++ {
		rec.PodEvents[i].ResourceVersion = []string{"151", "152", "153"}[i-4]
	}
	c := WatchOrder(rec, "test")
	if !c.Passed() {
		t.Fatalf("%s: %s", c.Verdict, c.Reason)
	}
	if c.Observed[WatchOrderRepeats] != 1 || !slices.Contains(c.Evidence, evidence.WatchGapsFile) {
		t.Errorf("repeats %v, evidence %v: want 1 repeat and the gaps file cited", c.Observed[WatchOrderRepeats], c.Evidence)
	}
	if got := c.Observed[WatchOrderStreams].([]string)[0]; !strings.Contains(got, "in 3 session(s)") {
		t.Errorf("streams: %s", got)
	}

	// The same repeat with no gap before it is a state stated twice.
	rec.Gaps = nil
	if c := WatchOrder(rec, "test"); c.Verdict != Fail || !strings.Contains(c.Reason, "line 3 LISTED at resourceVersion 102") {
		t.Errorf("a LISTED with no re-list: %s (%s)", c.Verdict, c.Reason)
	}
}

// A resourceVersion that is not a decimal integer: the claim says not
// checked rather than guess an order; a break of the types still fails it.
func TestWatchOrderNotCheckedWithoutDecimalVersions(t *testing.T) {
	rec := orderRecord()
	rec.PodEvents[2].ResourceVersion = "a3f"
	c := WatchOrder(rec, "test")
	if c.Verdict != NotChecked || !strings.Contains(c.Reason, "events.jsonl: pod p (uid u-p)") {
		t.Errorf("%s (%s), want not checked naming pod p", c.Verdict, c.Reason)
	}
	swapEvents(rec, 3, 4)
	if c := WatchOrder(rec, "test"); c.Verdict != Fail {
		t.Errorf("an event after DELETED: %s (%s)", c.Verdict, c.Reason)
	}
}

// A record with no watch events checked nothing, and proves nothing.
func TestWatchOrderOnNoEvents(t *testing.T) {
	if c := WatchOrder(newRecord(), "test"); c.Verdict != Fail {
		t.Errorf("%s on an empty record", c.Verdict)
	}
}

// A pod the run created is first seen after its create was sent; one seen
// before it (the create moved later than the ADDED) is not the run's, and
// a name created twice pairs each create with its own object.
func TestWatchOrderCreatedPodsFirstSeenAfterTheirCreate(t *testing.T) {
	create := func(sec float64) evidence.Action {
		return evidence.Action{Kind: evidence.ActionCreate, Target: "p", StartedAt: at(sec), FinishedAt: at(sec + 0.05)}
	}
	rec := orderRecord()
	rec.Actions = []evidence.Action{create(0.9)}
	if c := WatchOrder(rec, "test"); !c.Passed() {
		t.Fatalf("created at 0.9 s, ADDED at 1 s: %s (%s)", c.Verdict, c.Reason)
	} else if got := c.Observed[WatchOrderCreated].([]string); len(got) != 1 || got[0] != "p: ADDED 0.100 s after its create was sent" {
		t.Errorf("observed %v", got)
	}

	rec.Actions = []evidence.Action{create(1.5)}
	c := WatchOrder(rec, "test")
	if c.Verdict != Fail || !strings.Contains(c.Reason, "pod p was first seen (ADDED at resourceVersion 101, observed 2026-12-02T10:00:01Z) 0.500 s before the run's create request for it was sent") {
		t.Errorf("create sent 0.5 s after the ADDED: %s (%s)", c.Verdict, c.Reason)
	}

	// p deleted at 12 s, created again at 13 s: the second create pairs
	// with the second object.
	again := &podSeq{rec: rec, state: evidence.PodState{Name: "p", UID: "u-p2", Phase: "Pending"}, rv: 300}
	again.event(13.2, "ADDED", nil)
	rec.Actions = []evidence.Action{create(0.9), create(13)}
	if c := WatchOrder(rec, "test"); !c.Passed() {
		t.Errorf("p created again at 13 s, ADDED at 13.2 s: %s (%s)", c.Verdict, c.Reason)
	}
	rec.Actions = []evidence.Action{create(0.9), create(13.5)}
	if c := WatchOrder(rec, "test"); c.Verdict != Fail {
		t.Errorf("the second p's ADDED before its create: %s (%s)", c.Verdict, c.Reason)
	}
}
