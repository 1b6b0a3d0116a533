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
	k.observe("deletionGracePeriodSeconds", marked.DeletionGracePeriodSeconds)
	k.precondition("until_past_deadline_seconds", fmt.Sprintf("termlab sends the %s request no sooner than %s past the pod's grace deadline (its deletionTimestamp)", s.Until, InSeconds(s.PastDeadline)), s.PastDeadline, until.StartedAt.Sub(deadline), true)
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
	after := e.ObservedAt.Sub(act.StartedAt)
	k.observe("tainted_at", stamp(e.ObservedAt))
	k.observe("tainted_after_seconds", seconds(after))
	k.observe("taints", e.Taints)
	k.observe("ready", e.Ready)
	k.require(after <= t.Within, "the node carried %s %s after the %s, later than %s", t.Taint, after.Round(time.Millisecond), t.After, t.Within)
	k.require(after >= t.NotBefore, "the node carried %s %s after the %s, sooner than %s", t.Taint, after.Round(time.Millisecond), t.After, t.NotBefore)
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
	// DeletedBy, if set, is the user whose request removed the object, as
	// the API server's audit log must name it (with gracePeriodSeconds 0)
	// when the run has one.
	DeletedBy string
}

// PodGCUser is the pod garbage collector's identity: kube-controller-manager
// runs each controller with its own service account
// (--use-service-account-credentials, which kubeadm sets).
const PodGCUser = "system:serviceaccount:kube-system:pod-garbage-collector"

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
	delay := gone.ObservedAt.Sub(act.StartedAt)
	k.observe("deleted_at", stamp(gone.ObservedAt))
	k.observe("deleted_after_seconds", seconds(delay))
	k.observe("deletionGracePeriodSeconds_in_deleted_object", gone.DeletionGracePeriodSeconds)
	k.require(delay >= 0, "the DELETED event arrived before the %s", c.After)
	k.require(delay <= c.Within, "the DELETED event arrived %s after the %s, later than %s", delay.Round(time.Millisecond), c.After, c.Within)
	failed, ok := rec.FirstEvent(c.Pod, act.StartedAt, func(e evidence.PodEvent) bool { return e.Phase == "Failed" })
	if k.require(ok && !failed.ObservedAt.After(gone.ObservedAt), "the pod was not reported phase Failed before it was deleted") {
		k.observe("failed_at", stamp(failed.ObservedAt))
		k.observe("failed_resourceVersion", failed.ResourceVersion)
	}
	if restart, ok := rec.Action(c.KubeletStarted, stopped.Target); ok {
		k.require(restart.StartedAt.After(gone.ObservedAt), "the kubelet was started again (%s) before the pod was deleted: the kubelet may have done it", stamp(restart.StartedAt))
	}
	k.observe("kubelet_stopped_since", stamp(stopped.StartedAt))
	if c.DeletedBy != "" {
		deletedBy(k, rec, c.Pod, c.DeletedBy)
	}
	return k.done()
}

// deletedBy checks, in the audit log, the request that removed the pod: it
// was sent by user with gracePeriodSeconds 0. Without an audit log the claim
// says who deleted it was not recorded.
func deletedBy(k *check, rec *evidence.Record, pod, user string) {
	if rec.AuditCount() == 0 {
		k.observe("deleted_by", "not recorded: the run read no audit log")
		return
	}
	k.cite(evidence.AuditFile)
	for _, e := range rec.Audit {
		if e.Verb != "delete" || e.Resource != "pods" || e.Name != pod || e.Subresource != "" || e.Result != evidence.AuditGone {
			continue
		}
		k.observe("deleted_by", e.User)
		k.observe("deleted_with_grace_period_seconds", int64String(e.GracePeriodSeconds))
		k.require(e.User == user, "the request that removed pod %s was sent by %s, not %s (audit log, %s)", pod, e.User, user, stamp(e.ReceivedAt))
		k.require(e.GracePeriodSeconds != nil && *e.GracePeriodSeconds == 0, "the request that removed pod %s carried gracePeriodSeconds %s, not 0 (audit log)", pod, int64String(e.GracePeriodSeconds))
		return
	}
	k.require(false, "the audit log has no request that removed pod %s", pod)
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
