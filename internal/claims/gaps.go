package claims

import (
	"fmt"
	"slices"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// gapsFile is where the record lists the times its watches were down.
var gapsFile = evidence.WatchGapsFile

// watchedThroughout requires the source's watch to have been up throughout
// the window [from, to], for a claim that passes because something was NOT
// seen in it. While a watch is down, a change is seen late (when the watch
// is back) or, after a re-list, not at all: so an absence over a window that
// a gap overlaps cannot be shown. Each such gap fails the claim once, and
// the gaps file is cited.
func (k *check) watchedThroughout(rec *evidence.Record, source string, from, to time.Time) bool {
	gaps := rec.GapsOverlapping(source, from, to)
	for _, g := range gaps {
		// The claim's observed watch_gaps lists the gaps that already failed it.
		seen, _ := k.c.Observed["watch_gaps"].([]string)
		gap := fmt.Sprintf("%s watch down %s–%s", g.Source, stamp(g.From), gapEnd(g))
		if slices.Contains(seen, gap) {
			continue
		}
		k.observe("watch_gaps", append(seen, gap))
		k.cite(gapsFile)
		k.require(false, "the %s watch was down from %s to %s, inside the window %s–%s: an absence cannot be shown (%s)",
			g.Source, stamp(g.From), gapEnd(g), stamp(from), stamp(to), g.Why)
	}
	return len(gaps) == 0
}

func gapEnd(g evidence.WatchGap) string {
	if g.To.IsZero() {
		return "the end of the record"
	}
	return stamp(g.To)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// deletionWindow is when the pod's deletion sequence (DeletionTransitions)
// was watched: from the baseline event before deletion began (or the first
// one) to the DELETED event; ok is false when no DELETED was recorded.
func deletionWindow(events []evidence.PodEvent) (from, to time.Time, ok bool) {
	if len(events) == 0 || events[len(events)-1].Type != "DELETED" {
		return time.Time{}, time.Time{}, false
	}
	start := len(events) - 1
	for i, e := range events {
		if e.DeletionTimestamp != nil || e.Type == "DELETED" {
			start = i
			break
		}
	}
	return events[max(start-1, 0)].ObservedAt, events[len(events)-1].ObservedAt, true
}

// existedFrom is when the pod can first have existed: the lab's create
// request, else the start of the record.
func existedFrom(rec *evidence.Record, pod string) time.Time {
	if a, ok := rec.Action(evidence.ActionCreate, pod); ok {
		return a.StartedAt
	}
	return rec.StartedAt
}
