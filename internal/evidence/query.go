package evidence

import (
	"slices"
	"time"
)

// EventsFor returns the watch events of the named pod, in the order observed.
func (r *Record) EventsFor(pod string) []PodEvent {
	var out []PodEvent
	_ = r.EachPodEvent(func(e PodEvent) bool {
		if e.Name == pod {
			out = append(out, e)
		}
		return true
	})
	return out
}

// EventsOfPods is EventsFor of each of the pods, in one pass over the events.
func (r *Record) EventsOfPods(pods []string) map[string][]PodEvent {
	out := make(map[string][]PodEvent, len(pods))
	for _, p := range pods {
		out[p] = nil
	}
	_ = r.EachPodEvent(func(e PodEvent) bool {
		if _, ok := out[e.Name]; ok {
			out[e.Name] = append(out[e.Name], e)
		}
		return true
	})
	return out
}

// Action returns the first action of the given kind on target.
func (r *Record) Action(kind ActionKind, target string) (Action, bool) {
	for _, a := range r.Actions {
		if a.Kind == kind && a.Target == target {
			return a, true
		}
	}
	return Action{}, false
}

// TargetOf is the target of the first action of the kind (for example the
// node of "stop-kubelet"), or "(no <kind>)" when there was none.
func (r *Record) TargetOf(kind ActionKind) string {
	for _, a := range r.Actions {
		if a.Kind == kind {
			return a.Target
		}
	}
	return "(no " + string(kind) + ")"
}

// Step returns the named step.
func (r *Record) Step(name string) (Step, bool) {
	for _, s := range r.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// ContainersFor returns the crictl observations of the pod's containers, in order.
func (r *Record) ContainersFor(pod string) []ContainerObservation {
	return where(r.Containers, func(o ContainerObservation) bool { return o.Pod == pod })
}

// SnapshotsFor returns the snapshots of the pod, in order.
func (r *Record) SnapshotsFor(pod string) []Snapshot {
	return where(r.Snapshots, func(s Snapshot) bool { return s.Pod == pod })
}

// NodeEventsFor returns the Ready-condition records of the node, in order.
func (r *Record) NodeEventsFor(node string) []NodeEvent {
	return where(r.NodeEvents, func(e NodeEvent) bool { return e.Name == node })
}

// FirstEvent returns the first event of the pod observed at or after from that satisfies match.
func (r *Record) FirstEvent(pod string, from time.Time, match func(PodEvent) bool) (PodEvent, bool) {
	for _, e := range r.EventsFor(pod) {
		if !e.ObservedAt.Before(from) && match(e) {
			return e, true
		}
	}
	return PodEvent{}, false
}

// Deleted returns the pod's DELETED event, if one was observed.
func (r *Record) Deleted(pod string) (PodEvent, bool) {
	return r.FirstEvent(pod, time.Time{}, func(e PodEvent) bool { return e.Type == "DELETED" })
}

// Latest returns the last event of the pod observed at or before t.
func (r *Record) Latest(pod string, t time.Time) (PodEvent, bool) {
	var last PodEvent
	found := false
	for _, e := range r.EventsFor(pod) {
		if e.ObservedAt.After(t) {
			break
		}
		last, found = e, true
	}
	return last, found
}

// GapsOverlapping returns the gaps of the source's watch that share at least
// an instant with the window [from, to], in the order they were recorded. An
// open gap (zero To) lasts to the end of the record.
func (r *Record) GapsOverlapping(source string, from, to time.Time) []WatchGap {
	return where(r.Gaps, func(g WatchGap) bool {
		return g.Source == source && g.Overlaps(from, to)
	})
}

// Overlaps says whether the gap shares at least an instant with the window
// [from, to]; an open gap (zero To) lasts to the end of the record.
func (g WatchGap) Overlaps(from, to time.Time) bool {
	return !g.From.After(to) && (g.To.IsZero() || !g.To.Before(from))
}

// Pods returns the names of the pods seen in the record, in order of first appearance.
func (r *Record) Pods() []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	_ = r.EachPodEvent(func(e PodEvent) bool { add(e.Name); return true })
	for _, o := range r.Containers {
		add(o.Pod)
	}
	return out
}

// where returns the items that keep, in order (nil when none do).
func where[T any](items []T, keep func(T) bool) []T {
	var out []T
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}

// LastLedger returns the last read of the ledger: it holds every write the
// earlier reads did (the ledger only appends).
func (r *Record) LastLedger() (LedgerRead, bool) {
	if len(r.Ledgers) == 0 {
		return LedgerRead{}, false
	}
	return r.Ledgers[len(r.Ledgers)-1], true
}

// UIDsOf returns the distinct UIDs the pod's watch events carried, in order of first appearance.
func (r *Record) UIDsOf(pod string) []string {
	var out []string
	for _, e := range r.EventsFor(pod) {
		if e.UID != "" && !slices.Contains(out, e.UID) {
			out = append(out, e.UID)
		}
	}
	return out
}
