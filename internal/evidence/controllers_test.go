package evidence

import (
	"strings"
	"testing"
	"time"
)

func TestControllerOutages(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	ev := func(sec int, typ, pod, uid string, ready bool, restarts int32) ControllerEvent {
		return ControllerEvent{ObservedAt: at(sec), Type: typ, Pod: pod, UID: uid, Ready: ready, Restarts: restarts}
	}
	listed := ev(0, "LISTED", "kwok-a", "a", true, 2) // restarted before the run: not this run's outage
	for _, tc := range []struct {
		name   string
		events []ControllerEvent
		gaps   []WatchGap
		want   []string // each outage's why, in order
		open   bool     // the last outage lasts to the end
	}{
		{"serving throughout", []ControllerEvent{listed, ev(5, "MODIFIED", "kwok-a", "a", true, 2)}, nil, nil, false},
		{"killed and restarted", []ControllerEvent{listed, ev(5, "MODIFIED", "kwok-a", "a", false, 2), ev(9, "MODIFIED", "kwok-a", "a", false, 3), ev(12, "MODIFIED", "kwok-a", "a", true, 3)},
			nil, []string{"pod kwok-a not Ready"}, false},
		{"restarted between two looks", []ControllerEvent{listed, ev(7, "MODIFIED", "kwok-a", "a", true, 3)}, nil, []string{"restart count 2 → 3"}, false},
		{"deleted and replaced", []ControllerEvent{listed, ev(5, "DELETED", "kwok-a", "a", false, 2), ev(6, "ADDED", "kwok-b", "b", false, 0), ev(15, "MODIFIED", "kwok-b", "b", true, 0)},
			nil, []string{"pod kwok-a deleted"}, false},
		{"down at the end", []ControllerEvent{listed, ev(5, "MODIFIED", "kwok-a", "a", false, 2)}, nil, []string{"not Ready"}, true},
		{"no controller", nil, nil, []string{"no controller pod was seen"}, true},
		{"watch lost changes", []ControllerEvent{listed}, []WatchGap{{Source: WatchControllers, From: at(3), To: at(4), Why: "re-listed"}}, []string{"re-list"}, false},
		{"watch resumed: nothing lost", []ControllerEvent{listed}, []WatchGap{{Source: WatchControllers, From: at(3), To: at(4), ResumedFrom: "9"}}, nil, false},
		{"after the window", []ControllerEvent{listed, ev(90, "MODIFIED", "kwok-a", "a", false, 3)}, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Record{ControllerEvents: tc.events, Gaps: tc.gaps}
			got := rec.ControllerOutages(at(0), at(60))
			if len(got) != len(tc.want) {
				t.Fatalf("outages %+v, want %d", got, len(tc.want))
			}
			for i, o := range got {
				if !strings.Contains(o.Why, tc.want[i]) {
					t.Errorf("outage %d: %q, want it to say %q", i, o.Why, tc.want[i])
				}
				if last := i == len(got)-1; last && tc.open != o.To.IsZero() {
					t.Errorf("outage %v: open %v, want %v", o, o.To.IsZero(), tc.open)
				}
			}
		})
	}
}
