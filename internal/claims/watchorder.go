package claims

import (
	"fmt"
	"strings"

	"github.com/termlab/termlab/internal/evidence"
)

// WatchOrderID is the id of a lab's WatchOrder claim: "<lab>.watch_order".
func WatchOrderID(lab string) string { return lab + ".watch_order" }

// Observed keys of WatchOrder.
const (
	// WatchOrderStreams: per file read, its events, objects and sessions.
	WatchOrderStreams = "watch_streams"
	// WatchOrderRepeats: re-listed states at the object's last resourceVersion.
	WatchOrderRepeats = "relisted_repeats"
	// WatchOrderBroken: the objects whose events break the order.
	WatchOrderBroken = "objects_out_of_order"
	// WatchOrderCreated: per pod the run created, how long after its
	// create request was sent its first event was observed.
	WatchOrderCreated = "created_pods_first_seen"
)

const watchOrderStatement = "Every watch the run recorded — its pods (events.jsonl), the nodes (nodes.jsonl) and, where the lab watches them, its namespaces, EndpointSlices and kwok's controller pods — delivered each object's events (by UID, else by name) in an order a watch can send: ADDED (or the state the first LIST returned, LISTED) first; resourceVersions strictly increasing, compared as the decimal integers etcd gives them; DELETED last, nothing after it (of an object known by name alone, an ADDED after it is another object of that name). A watch gap begins a new session: a re-list then states each object again as LISTED, at a resourceVersion no lower than its last, equal when it did not change (a repeat). The Kubernetes Events are not checked: the record does not name an Event itself. Each pod the run created (its create request, sent by termlab in every mode) is first seen after that request was sent, by termlab's one clock: a pod seen before it would not be the run's."

// WatchOrder decides that every watch stream of the record is in the
// order a watch sends (evidence.WatchOrders). Each lab states it once, as
// WatchOrderID(lab): the other claims read the same events and take that
// order for granted.
func WatchOrder(rec *evidence.Record, lab string) Claim {
	k := newCheck(WatchOrderID(lab), watchOrderStatement)
	var streams, unversioned []string
	repeats, broken := 0, 0
	for _, o := range rec.WatchOrders() {
		k.cite(o.File)
		if o.Sessions > 1 {
			k.cite(gapsFile)
		}
		streams = append(streams, fmt.Sprintf("%s: %d events of %d objects in %d session(s)", o.File, o.Events, o.Objects, o.Sessions))
		repeats += o.Repeats
		broken += len(o.Breaks)
		k.require(o.Err == nil, "%s could not be read back whole: %v", o.File, o.Err)
		k.require(len(o.Breaks) == 0, "%s", firstBreak(o))
		for _, u := range o.Unversioned {
			unversioned = append(unversioned, o.File+": "+u)
		}
	}
	k.observe(WatchOrderStreams, streams)
	createdFirstSeen(k, rec)
	k.observe(WatchOrderRepeats, repeats)
	k.observe(WatchOrderBroken, broken)
	if len(unversioned) > 0 {
		k.notChecked = fmt.Sprintf("not checked: the resourceVersions of %d object(s) are not decimal integers, so whether they rise is not known (%s); the order of their event types was checked",
			len(unversioned), firstFew(unversioned))
	}
	return k.done()
}

// firstBreak names the stream's first pair of events out of order: the
// object, each event's line, type, resourceVersion and time ("" when none).
func firstBreak(o evidence.WatchOrder) string {
	if len(o.Breaks) == 0 {
		return ""
	}
	b := o.Breaks[0]
	var what string
	if b.Before == nil {
		what = fmt.Sprintf("%s: %s: its first event, %s, is neither ADDED nor LISTED", o.File, b.Object, orderedEvent(b.After))
	} else {
		what = fmt.Sprintf("%s: %s: %s, then %s", o.File, b.Object, orderedEvent(*b.Before), orderedEvent(b.After))
	}
	what += fmt.Sprintf(", which breaks %q", b.Rule)
	if n := len(o.Breaks); n > 1 {
		what += fmt.Sprintf(" (%d objects of %s out of order, the first named)", n, o.File)
	}
	return what
}

func orderedEvent(e evidence.OrderedEvent) string {
	s := fmt.Sprintf("line %d %s at resourceVersion %s (observed %s", e.Line, e.Type, e.ResourceVersion, stamp(e.ObservedAt))
	if e.Session > 0 {
		s += fmt.Sprintf(", after %d watch gap(s)", e.Session)
	}
	return s + ")"
}

// firstFew joins up to three items, saying how many there are in all.
func firstFew(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s … (%d in all)", strings.Join(items[:3], "; "), len(items))
}

// createdFirstSeen requires each pod the run created to be first seen
// after its create request was sent: the send time and the event's
// receipt are both termlab's clock, and the API server cannot store a pod
// before the request that makes it arrives. A name created again is paired
// in turn: the n-th create of a name with the n-th object (UID) of it.
func createdFirstSeen(k *check, rec *evidence.Record) {
	firsts := map[string][]evidence.PodEvent{}
	uids := map[string]bool{}
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		id := e.UID
		if id == "" {
			id = e.Name + "@" + e.ResourceVersion
		}
		if !uids[id] && (e.UID != "" || len(firsts[e.Name]) == 0) {
			uids[id] = true
			firsts[e.Name] = append(firsts[e.Name], e)
		}
		return true
	})
	var seen []string
	creates := map[string]int{}
	for _, a := range rec.Actions {
		if a.Kind != evidence.ActionCreate || !a.Succeeded() {
			continue
		}
		n := creates[a.Target]
		creates[a.Target]++
		if n >= len(firsts[a.Target]) {
			continue // never seen: what the pod's other claims need, they require
		}
		e := firsts[a.Target][n]
		after := e.ObservedAt.Sub(a.StartedAt)
		seen = append(seen, fmt.Sprintf("%s: %s %.3f s after its create was sent", a.Target, e.Type, after.Seconds()))
		k.require(after >= 0, "pod %s was first seen (%s at resourceVersion %s, observed %s) %.3f s before the run's create request for it was sent (%s): it is not the run's pod",
			a.Target, e.Type, e.ResourceVersion, stamp(e.ObservedAt), -after.Seconds(), stamp(a.StartedAt))
	}
	if len(seen) > 0 {
		k.cite(actionsFile)
		k.observe(WatchOrderCreated, seen)
	}
}
