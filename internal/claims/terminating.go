package claims

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Stuck: a pod whose deletion nobody completes, because its kubelet is down.
type Stuck struct {
	ID, Statement string
	Pod           string
	// Node is the pod's node, whose kubelet was stopped.
	Node string
	// Delete is the action kind that asked for deletion; Until is the action
	// kind that ends the window in which the object must stay.
	Delete, Until evidence.ActionKind
	// PastDeadline is a precondition (see Precondition): termlab sends the
	// Until request no sooner than this past the pod's grace deadline (its
	// deletionTimestamp).
	PastDeadline time.Duration
	// PastNotReady, if set, is a precondition too: termlab sends the Until
	// request no sooner than this after the node watch saw the node leave
	// Ready.
	PastNotReady time.Duration
	// MarkedWithin, if set, needs the watch to show the deletionTimestamp
	// within this of the Delete request: the API server writes it before
	// it answers (the kubelet being down changes nothing there), so only
	// the watch delivery remains.
	MarkedWithin time.Duration
}

// StaysTerminating decides that after the delete the object got a
// deletionTimestamp and then stayed, with no DELETED event, until the Until
// action, which came after its node turned NotReady, while crictl still
// showed its container running after the deadline. How long termlab waits
// past the deadline and past NotReady before the Until request is the
// claim's precondition, not a finding.
func StaysTerminating(rec *evidence.Record, s Stuck) Claim {
	k := newCheck(s.ID, s.Statement)
	if !k.needsNode(rec) {
		return k.done()
	}
	del, ok := action(k, rec, s.Delete, s.Pod)
	if !ok {
		return k.done()
	}
	until, ok := action(k, rec, s.Until, targetOf(rec, s.Until, s.Pod))
	if !ok {
		return k.done()
	}
	k.cite(eventsFile)
	marked, ok := rec.FirstEvent(s.Pod, del.StartedAt, func(e evidence.PodEvent) bool { return e.DeletionTimestamp != nil })
	if !ok {
		return k.missing("no watch event after the %s request showed a deletionTimestamp", s.Delete)
	}
	deadline := *marked.DeletionTimestamp
	k.observe("deletionTimestamp", stamp(deadline))
	if s.MarkedWithin > 0 {
		iv := since(rec, del, marked.ObservedAt)
		k.observeInterval("marked_after_seconds", iv)
		k.require(k.withinClocks(iv, noLowerBound, s.MarkedWithin, fmt.Sprintf("the time from the %s request to the watch event showing its deletionTimestamp", s.Delete)),
			"the watch showed the deletionTimestamp %s after the %s request, later than %s", iv.D.Round(time.Millisecond), s.Delete, s.MarkedWithin)
	}
	k.observe("deletionGracePeriodSeconds", marked.DeletionGracePeriodSeconds)
	// The deadline is the API server's (it set the deletionTimestamp).
	past := rec.Between(evidence.Stamp{Time: deadline, Clock: evidence.ClockAPIServer}, rec.ActionStamp(until))
	k.precondition("until_past_deadline_seconds", fmt.Sprintf("termlab sends the %s request no sooner than %s past the pod's grace deadline (its deletionTimestamp)", s.Until, InSeconds(s.PastDeadline)), s.PastDeadline, past.D, true)
	if gone, ok := rec.Deleted(s.Pod); ok && gone.ObservedAt.Before(until.StartedAt) {
		k.contradicts(false, "a DELETED event arrived at %s, before the %s request", stamp(gone.ObservedAt), s.Until)
	}
	k.watchedThroughout(rec, evidence.WatchPods, del.StartedAt, until.StartedAt)
	if last, ok := rec.Latest(s.Pod, until.StartedAt); ok {
		k.observe("phase_before_"+strings.ReplaceAll(string(s.Until), "-", "_"), last.Phase)
	}

	k.cite(nodesFile)
	notReady, ok := firstNodeEvent(rec, s.Node, del.StartedAt, func(e evidence.NodeEvent) bool { return e.Ready != "True" })
	seen := k.require(ok && notReady.ObservedAt.Before(until.StartedAt), "node %s was not seen NotReady before the %s request", s.Node, s.Until)
	if seen {
		k.observe("node_not_ready_at", stamp(notReady.ObservedAt))
	}
	if s.PastNotReady > 0 {
		k.precondition("until_past_not_ready_seconds", fmt.Sprintf("termlab sends the %s request no sooner than %s after the node watch saw node %s leave Ready", s.Until, InSeconds(s.PastNotReady), s.Node), s.PastNotReady, until.StartedAt.Sub(notReady.ObservedAt), seen)
	}

	id, ok := ContainerID(rec, s.Pod)
	if !k.require(ok, "the API never reported a container ID for pod %s", s.Pod) {
		return k.done()
	}
	running := 0
	for _, o := range rec.ContainersFor(s.Pod) {
		if o.ContainerID == id && o.ObservedAt.After(deadline) && o.ObservedAt.Before(until.StartedAt) {
			k.cite(o.InspectPath)
			if o.State == evidence.ContainerRunning {
				running++
			} else {
				k.contradicts(false, "crictl showed %s at %s, while the object was Terminating", o.State, stamp(o.ObservedAt))
			}
		}
	}
	k.observe("running_looks_past_deadline", running)
	k.require(running >= 1, "no crictl look after the grace deadline showed the container running")
	return k.done()
}

// Tainted: a node gets a taint after an action.
type Tainted struct {
	ID, Statement string
	Node          string
	// Taint is "key:Effect", as the record keeps taints.
	Taint string
	// After is the action kind the bounds count from.
	After  evidence.ActionKind
	Within time.Duration
	// NotBefore, if set, needs the taint to come at least this long after the action.
	NotBefore time.Duration
}

// NodeTaintedWithin decides from the recorded node changes that the node
// carried the taint within the bound after the action.
func NodeTaintedWithin(rec *evidence.Record, t Tainted) Claim {
	k := newCheck(t.ID, t.Statement)
	act, ok := action(k, rec, t.After, t.Node)
	if !ok {
		return k.done()
	}
	k.cite(nodesFile)
	e, ok := firstNodeEvent(rec, t.Node, act.StartedAt, func(e evidence.NodeEvent) bool { return e.HasTaint(t.Taint) })
	if !ok {
		return k.missing("no recorded change of node %s after the %s showed taint %s", t.Node, t.After, t.Taint)
	}
	after := since(rec, act, e.ObservedAt)
	what := fmt.Sprintf("the time from the %s to taint %s", t.After, t.Taint)
	k.observe("tainted_at", stamp(e.ObservedAt))
	k.observeInterval("tainted_after_seconds", after)
	k.observe("taints", e.Taints)
	k.observe("ready", e.Ready)
	k.require(k.withinClocks(after, noLowerBound, t.Within, what), "the node carried %s %s after the %s, later than %s", t.Taint, after.D.Round(time.Millisecond), t.After, t.Within)
	k.require(k.withinClocks(after, t.NotBefore, noUpperBound, what), "the node carried %s %s after the %s, sooner than %s", t.Taint, after.D.Round(time.Millisecond), t.After, t.NotBefore)
	return k.done()
}

// Collected: a controller fails and deletes a terminating pod after an action.
type Collected struct {
	ID, Statement string
	Pod           string
	// After is the action kind the bound counts from (e.g. the taint).
	After  evidence.ActionKind
	Within time.Duration
	// KubeletStopped and KubeletStarted are the action kinds that stopped and
	// started the pod's kubelet: in between, a phase change cannot come from it.
	KubeletStopped, KubeletStarted evidence.ActionKind
}

// FailedAndDeletedWithin decides that, within the bound after the action,
// the pod was marked phase Failed and then DELETED, while its kubelet was
// stopped: a controller's doing (the pod garbage collector patches the phase
// to Failed, then deletes with grace 0).
func FailedAndDeletedWithin(rec *evidence.Record, c Collected) Claim {
	k := newCheck(c.ID, c.Statement)
	act, ok := action(k, rec, c.After, targetOf(rec, c.After, c.Pod))
	if !ok {
		return k.done()
	}
	stopped, ok := action(k, rec, c.KubeletStopped, targetOf(rec, c.KubeletStopped, c.Pod))
	if !ok {
		return k.done()
	}
	k.cite(eventsFile)
	gone, ok := rec.Deleted(c.Pod)
	if !ok {
		return k.missing("no DELETED event of pod %s was recorded", c.Pod)
	}
	delay := since(rec, act, gone.ObservedAt)
	what := fmt.Sprintf("the time from the %s to the DELETED event", c.After)
	k.observe("deleted_at", stamp(gone.ObservedAt))
	k.observeInterval("deleted_after_seconds", delay)
	k.observe("deletionGracePeriodSeconds_in_deleted_object", gone.DeletionGracePeriodSeconds)
	k.require(k.notBeforeCause(delay, 0), "the DELETED event arrived %s before the %s", (-delay.D).Round(time.Millisecond), c.After)
	k.require(k.withinClocks(delay, noLowerBound, c.Within, what), "the DELETED event arrived %s after the %s, later than %s", delay.D.Round(time.Millisecond), c.After, c.Within)
	failed, ok := rec.FirstEvent(c.Pod, act.StartedAt, func(e evidence.PodEvent) bool { return e.Phase == "Failed" })
	if k.require(ok && !failed.ObservedAt.After(gone.ObservedAt), "the pod was not reported phase Failed before it was deleted") {
		k.observe("failed_at", stamp(failed.ObservedAt))
		k.observe("failed_resourceVersion", failed.ResourceVersion)
	}
	if restart, ok := rec.Action(c.KubeletStarted, stopped.Target); ok {
		k.require(restart.StartedAt.After(gone.ObservedAt), "the kubelet was started again (%s) before the pod was deleted: the kubelet may have done it", stamp(restart.StartedAt))
	}
	k.observe("kubelet_stopped_since", stamp(stopped.StartedAt))
	return k.done()
}

// firstNodeEvent is the node's first recorded change at or after from that satisfies match.
func firstNodeEvent(rec *evidence.Record, node string, from time.Time, match func(evidence.NodeEvent) bool) (evidence.NodeEvent, bool) {
	for _, e := range rec.NodeEventsFor(node) {
		if !e.ObservedAt.Before(from) && match(e) {
			return e, true
		}
	}
	return evidence.NodeEvent{}, false
}
