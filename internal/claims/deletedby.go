package claims

import (
	"slices"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// PodGCUser is the pod garbage collector's identity: kube-controller-manager
// runs each controller with its own service account
// (--use-service-account-credentials, which kubeadm sets).
const PodGCUser = "system:serviceaccount:kube-system:pod-garbage-collector"

// DeletedBy: who removed an object, as the API server's audit log names the
// request.
type DeletedBy struct {
	ID, Statement string
	Pod           string
	// User is the user whose request removed the pod, with gracePeriodSeconds 0.
	User string
	// MarkedFailed, if set, needs the same user to have written the pod's
	// status (phase Failed) before the watch showed it Failed: the pod
	// garbage collector patches the phase of a pod it force-deletes first,
	// unless the pod is already Succeeded or Failed
	// (pkg/controller/podgc markFailedAndDeletePodWithCondition).
	MarkedFailed bool
}

// DeletedByUser decides, from the audit log, that the request that removed
// the pod was sent by the user with gracePeriodSeconds 0, and received
// before the watch showed the pod DELETED (where it did); with MarkedFailed,
// that the user wrote its status first (markedFailedBy). Only the audit log
// says who sent a request: without one the claim is not checked (a watch
// event carries no requester, and the DELETED alone cannot tell the pod GC's
// force delete from anyone else's).
func DeletedByUser(rec *evidence.Record, d DeletedBy) Claim {
	k := newCheck(d.ID, d.Statement)
	if rec.AuditCount() == 0 {
		k.notChecked = NeedsAuditLog(rec, "who sent the request that removed pod "+d.Pod+" and with which grace period")
		return k.done()
	}
	k.cite(evidence.AuditFile)
	for _, e := range rec.Audit {
		if e.Verb != "delete" || e.Resource != "pods" || e.Name != d.Pod || e.Subresource != "" || e.Result != evidence.AuditGone {
			continue
		}
		k.observe("deleted_by", e.User)
		k.observe("deleted_with_grace_period_seconds", int64String(e.GracePeriodSeconds))
		k.observe("deleted_request_received_at", stamp(e.ReceivedAt))
		k.require(e.User == d.User, "the request that removed pod %s was sent by %s, not %s (audit log, %s)", d.Pod, e.User, d.User, stamp(e.ReceivedAt))
		k.require(e.GracePeriodSeconds != nil && *e.GracePeriodSeconds == 0, "the request that removed pod %s carried gracePeriodSeconds %s, not 0 (audit log)", d.Pod, int64String(e.GracePeriodSeconds))
		// The removal writes the DELETED the watch shows: the request that
		// removed the pod was received before it. The receipt is the API
		// server's stamp, the DELETED the host's: only an interval below 0
		// by more than the clocks' uncertainty contradicts that.
		if gone, ok := rec.Deleted(d.Pod); ok {
			k.cite(eventsFile)
			iv := rec.Between(evidence.Stamp{Time: e.ReceivedAt, Clock: evidence.ClockAPIServer}, evidence.OnHost(gone.ObservedAt))
			k.require(k.notBeforeCause(iv, 0), "the watch showed pod %s DELETED at %s, %s before the API server received the request that removed it (audit log, %s): that request did not remove it", d.Pod, stamp(gone.ObservedAt), (-iv.D).Round(time.Millisecond), stamp(e.ReceivedAt))
		}
		if d.MarkedFailed {
			markedFailedBy(k, rec, d, e)
		}
		return k.done()
	}
	return k.missing("the audit log has no request that removed pod %s", d.Pod)
}

// markedFailedBy decides that a write of the pod's status by d.User was
// received before the watch first showed the pod phase Failed (the write
// that made it Failed causes that event), or, where the watch never showed
// it Failed (which the claim on the phase decides), before the request
// that removed it (removal). Any such write will do: another controller's
// status write may land between it and the event. An audit log that holds
// no status write of the pod at all (a cluster's policy may leave them out)
// decides nothing here.
func markedFailedBy(k *check, rec *evidence.Record, d DeletedBy, removal evidence.AuditEvent) {
	before := func(e evidence.AuditEvent) bool { return e.ReceivedAt.Before(removal.ReceivedAt) }
	what := "the request that removed it"
	if failed, ok := rec.FirstEvent(d.Pod, time.Time{}, func(e evidence.PodEvent) bool { return e.Phase == "Failed" }); ok {
		k.cite(eventsFile)
		what = "the watch showed it phase Failed (" + stamp(failed.ObservedAt) + ")"
		before = func(e evidence.AuditEvent) bool {
			return k.notBeforeCause(rec.Between(evidence.Stamp{Time: e.ReceivedAt, Clock: evidence.ClockAPIServer}, evidence.OnHost(failed.ObservedAt)), 0)
		}
	}
	statusWrite := func(e evidence.AuditEvent) bool {
		return e.Resource == "pods" && e.Name == d.Pod && e.Subresource == "status" && (e.Verb == "patch" || e.Verb == "update") && e.Succeeded()
	}
	if !slices.ContainsFunc(rec.Audit, statusWrite) {
		// termlab's policy keeps status writes (as metadata); a cluster's
		// own may leave them out, and then the log cannot say who wrote one.
		k.observe("marked_failed_by", "not recorded: the audit log holds no status write of the pod (its policy may leave them out)")
		return
	}
	var writers []string
	for _, e := range rec.Audit {
		if !statusWrite(e) || !before(e) {
			continue
		}
		if e.User == d.User {
			k.observe("marked_failed_by", e.User)
			k.observe("marked_failed_request_received_at", stamp(e.ReceivedAt))
			return
		}
		if !slices.Contains(writers, e.User) {
			writers = append(writers, e.User)
		}
	}
	k.require(false, "no status write of pod %s by %s was received before %s; the audit log names as its writers before then only %v", d.Pod, d.User, what, writers)
}
