package claims

import (
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
}

// DeletedByUser decides, from the audit log, that the request that removed
// the pod was sent by the user with gracePeriodSeconds 0, and received
// before the watch showed the pod DELETED (where it did). Only the audit log
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
		return k.done()
	}
	return k.missing("the audit log has no request that removed pod %s", d.Pod)
}
