package evidence

import (
	"fmt"
	"testing"
	"time"
)

// pe is a pod event at second s of the run: "ADDED a@10" is pod a's ADDED
// at resourceVersion 10; the pod's UID is its name, unless noUID.
func pe(s int, event string, noUID bool) PodEvent {
	var typ, name, rv string
	if _, err := fmt.Sscanf(event, "%s %s", &typ, &name); err != nil {
		panic(event)
	}
	for i := range name {
		if name[i] == '@' {
			name, rv = name[:i], name[i+1:]
			break
		}
	}
	uid := name
	if noUID {
		uid = ""
	}
	return PodEvent{ObservedAt: orderStart.Add(time.Duration(s) * time.Second), Type: typ, PodState: PodState{Name: name, UID: uid, ResourceVersion: rv}}
}

var orderStart = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// podsOrder checks the order of the pod events, one a second from second 0,
// with the pods watch down over the gaps ({from, to} seconds; to 0: open).
func podsOrder(t *testing.T, events []string, gaps [][2]int, noUID bool) WatchOrder {
	t.Helper()
	rec := &Record{Namespace: "ns"}
	for i, e := range events {
		rec.PodEvents = append(rec.PodEvents, pe(i, e, noUID))
	}
	for _, g := range gaps {
		gap := WatchGap{Source: WatchPods, From: orderStart.Add(time.Duration(g[0])*time.Second - time.Millisecond)}
		if g[1] > 0 {
			gap.To = orderStart.Add(time.Duration(g[1])*time.Second - time.Millisecond)
		}
		rec.Gaps = append(rec.Gaps, gap)
	}
	// Another watch's gap begins no session of the pods watch.
	rec.Gaps = append(rec.Gaps, WatchGap{Source: WatchNodes, From: orderStart.Add(1500 * time.Millisecond)})
	orders := rec.WatchOrders()
	if len(orders) != 1 || orders[0].Source != WatchPods || orders[0].File != EventsFile {
		t.Fatalf("orders %+v, want the pods watch's alone", orders)
	}
	return orders[0]
}

func TestWatchOrderBreaks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
		gaps   [][2]int // the pods watch down from, to (seconds)
		noUID  bool
		rule   OrderRule
		lines  [2]int // the pair's lines; 0 for no event before
	}{
		{"the resourceVersion goes down", []string{"ADDED a@10", "MODIFIED a@12", "MODIFIED a@11", "DELETED a@13"}, nil, false,
			OrderVersionsRise, [2]int{2, 3}},
		{"a resourceVersion twice in one session", []string{"ADDED a@10", "MODIFIED a@11", "MODIFIED a@11"}, nil, false,
			OrderVersionsRise, [2]int{2, 3}},
		{"ADDED after MODIFIED (the two swapped)", []string{"MODIFIED a@11", "ADDED a@10", "DELETED a@12"}, nil, false,
			OrderAddedFirst, [2]int{1, 2}},
		{"ADDED again, resourceVersions rising", []string{"ADDED a@10", "MODIFIED a@11", "ADDED a@12"}, nil, false,
			OrderAddedFirst, [2]int{2, 3}},
		{"the first event MODIFIED, its ADDED never seen", []string{"ADDED b@9", "MODIFIED a@11", "DELETED b@12"}, nil, false,
			OrderAddedFirst, [2]int{0, 2}},
		{"LISTED with no re-list before it", []string{"ADDED a@10", "LISTED a@11"}, nil, false,
			OrderAddedFirst, [2]int{1, 2}},
		{"MODIFIED after DELETED", []string{"ADDED a@10", "DELETED a@12", "MODIFIED a@11"}, nil, false,
			OrderDeletedLast, [2]int{2, 3}},
		{"MODIFIED after DELETED, resourceVersions rising", []string{"ADDED a@10", "DELETED a@11", "MODIFIED a@12"}, nil, false,
			OrderDeletedLast, [2]int{2, 3}},
		{"ADDED of the same UID after DELETED", []string{"ADDED a@10", "DELETED a@11", "ADDED a@12"}, nil, false,
			OrderDeletedLast, [2]int{2, 3}},
		{"a re-listed state older than the last event", []string{"LISTED a@10", "MODIFIED a@12", "LISTED a@11"}, [][2]int{{2, 3}}, false,
			OrderVersionsRise, [2]int{2, 3}},
		{"a gap resumed, then the resourceVersion goes down", []string{"ADDED a@10", "MODIFIED a@12", "MODIFIED a@11"}, [][2]int{{2, 2}}, false,
			OrderVersionsRise, [2]int{2, 3}},
		{"by name: a MODIFIED after DELETED", []string{"ADDED a@10", "DELETED a@11", "MODIFIED a@12"}, nil, true,
			OrderDeletedLast, [2]int{2, 3}},
		{"by name: another object of the name, at an older resourceVersion", []string{"ADDED a@10", "DELETED a@12", "ADDED a@11"}, nil, true,
			OrderVersionsRise, [2]int{2, 3}},
		// Two objects out of order: the first break in the file comes first.
		{"the earlier of two breaks", []string{"ADDED b@9", "ADDED a@10", "MODIFIED a@12", "MODIFIED b@8", "MODIFIED a@11"}, nil, false,
			OrderVersionsRise, [2]int{1, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := podsOrder(t, tc.events, tc.gaps, tc.noUID)
			if len(o.Breaks) == 0 {
				t.Fatalf("no break found in %v", tc.events)
			}
			b := o.Breaks[0]
			before := 0
			if b.Before != nil {
				before = b.Before.Line
			}
			if b.Rule != tc.rule || before != tc.lines[0] || b.After.Line != tc.lines[1] {
				t.Errorf("first break: %s at lines %d → %d, want %s at %d → %d", b.Rule, before, b.After.Line, tc.rule, tc.lines[0], tc.lines[1])
			}
			if b.After.ResourceVersion == "" || b.After.Type == "" || b.After.ObservedAt.IsZero() || b.Object == "" {
				t.Errorf("the break does not name its event fully: %+v", b)
			}
		})
	}
}

func TestWatchOrderHolds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		events   []string
		gaps     [][2]int
		noUID    bool
		sessions int
		repeats  int
	}{
		{"one session", []string{"LISTED b@5", "ADDED a@10", "MODIFIED b@11", "MODIFIED a@12", "DELETED a@13"}, nil, false, 1, 0},
		// The watch resumed from 12 at second 3 (events arrive late, none
		// missing), then expired: the re-list at second 5 states a again at
		// the resourceVersion it had (a repeat) and c, created meanwhile; b
		// was deleted meanwhile, its DELETED lost; the watch from the
		// re-list's resourceVersion goes on.
		{"a gap resumed and a re-list", []string{
			"LISTED a@10", "LISTED b@11", "MODIFIED a@12", // session 0
			"MODIFIED a@14",              // session 1, from 12
			"LISTED a@14", "LISTED c@15", // session 2: the re-list, inside the gap
			"MODIFIED c@17", "DELETED a@18", "ADDED d@19",
		}, [][2]int{{3, 3}, {4, 6}}, false, 3, 1},
		{"a re-list after a change", []string{"ADDED a@10", "LISTED a@15", "MODIFIED a@16"}, [][2]int{{1, 2}}, false, 2, 0},
		{"a gap still open at the end", []string{"ADDED a@10", "MODIFIED a@11"}, [][2]int{{2, 0}}, false, 2, 0},
		{"by name: another object of the name after DELETED", []string{"ADDED a@10", "DELETED a@11", "ADDED a@12", "MODIFIED a@13"}, nil, true, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := podsOrder(t, tc.events, tc.gaps, tc.noUID)
			for _, b := range o.Breaks {
				t.Errorf("%s: %s at line %d", b.Object, b.Rule, b.After.Line)
			}
			if o.Events != len(tc.events) || o.Sessions != tc.sessions || o.Repeats != tc.repeats || len(o.Unversioned) > 0 {
				t.Errorf("events %d, sessions %d, repeats %d, unversioned %v; want %d, %d, %d, none", o.Events, o.Sessions, o.Repeats, o.Unversioned, len(tc.events), tc.sessions, tc.repeats)
			}
		})
	}
}

// A resourceVersion that is not a decimal integer leaves that object's rise
// unchecked, and says so; the order of its types is still checked.
func TestWatchOrderUnversioned(t *testing.T) {
	o := podsOrder(t, []string{"ADDED a@x7", "MODIFIED a@x5", "ADDED b@1", "MODIFIED b@2"}, nil, false)
	if len(o.Breaks) > 0 || len(o.Unversioned) != 1 || o.Unversioned[0] != "pod a (uid a)" {
		t.Errorf("breaks %+v, unversioned %v; want none and pod a", o.Breaks, o.Unversioned)
	}
	o = podsOrder(t, []string{"ADDED a@x7", "DELETED a@x8", "MODIFIED a@x9"}, nil, false)
	if len(o.Breaks) != 1 || o.Breaks[0].Rule != OrderDeletedLast {
		t.Errorf("breaks %+v, want DELETED last broken", o.Breaks)
	}
}

// Every stream that names its objects is checked, each by its file.
func TestWatchOrdersOfEveryStream(t *testing.T) {
	rec := &Record{
		NodeEvents:       []NodeEvent{{Type: "LISTED", Name: "n", ResourceVersion: "5"}, {Type: "MODIFIED", Name: "n", ResourceVersion: "4"}},
		NamespaceEvents:  []NamespaceEvent{{Type: "ADDED", Name: "x", ResourceVersion: "5"}},
		EndpointSlices:   []EndpointSliceEvent{{Type: "ADDED", Name: "s", ResourceVersion: "5"}},
		ControllerEvents: []ControllerEvent{{Type: "LISTED", Pod: "kwok", UID: "k", ResourceVersion: "5"}},
		KubeEvents:       []KubeEvent{{Type: "ADDED", ResourceVersion: "5"}},
	}
	var files []string
	for _, o := range rec.WatchOrders() {
		files = append(files, o.File)
		if (len(o.Breaks) > 0) != (o.Source == WatchNodes) {
			t.Errorf("%s: breaks %+v", o.File, o.Breaks)
		}
	}
	if fmt.Sprint(files) != "[nodes.jsonl namespaces.jsonl endpointslices.jsonl controllers.jsonl]" {
		t.Errorf("checked %v", files)
	}
}
