package claims

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// stuckRecord is lab:stuck: kubelet stopped at 5 s, ordinary delete at 10 s
// (grace 30: deadline 40 s), NotReady and tainted unreachable at 55 s,
// out-of-service taint at 60 s, the pod GC marks it Failed at 72 s and
// deletes it at 72.1 s, the kubelet starts at 80 s and kills it at 83 s.
func stuckRecord() *evidence.Record {
	rec := newRecord()
	p := &podSeq{rec: rec, state: evidence.PodState{Name: "stuck"}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(1.2, "MODIFIED", running)
	rec.NodeEvents = append(rec.NodeEvents, evidence.NodeEvent{ObservedAt: at(0), Type: "LISTED", Name: "worker2", Ready: "True"})
	act(rec, "stop-kubelet", "worker2", 5)
	act(rec, "delete", "stuck", 10)
	p.event(10.05, "MODIFIED", deleting(30))
	rec.NodeEvents = append(rec.NodeEvents, evidence.NodeEvent{ObservedAt: at(55), Type: "MODIFIED", Name: "worker2", Ready: "Unknown", Reason: "NodeStatusUnknown",
		Taints: []string{"node.kubernetes.io/unreachable:NoExecute"}})
	observe(rec, "stuck", 56, evidence.ContainerRunning, nil, nil, beats(55, 55.5, "", false))
	act(rec, "taint-node", "worker2", 60)
	p.event(72, "MODIFIED", func(s *evidence.PodState) { s.Phase = "Failed" })
	p.event(72.1, "DELETED", nil)
	observe(rec, "stuck", 73, evidence.ContainerRunning, nil, nil, beats(72, 72.5, "", false))
	act(rec, "start-kubelet", "worker2", 80)
	observe(rec, "stuck", 83.2, evidence.ContainerExited, i32(137), tp(83), beats(82, 82.5, "", false))
	return rec
}

var (
	stuckSpec = Stuck{ID: "stays", Pod: "stuck", Node: "worker2", Delete: "delete", Until: "taint-node", PastDeadline: 15 * time.Second}
	taintSpec = Tainted{ID: "tainted", Node: "worker2", Taint: "node.kubernetes.io/unreachable:NoExecute", After: "stop-kubelet", Within: 85 * time.Second}
	gcSpec    = Collected{ID: "gc", Pod: "stuck", After: "taint-node", Within: 30 * time.Second, KubeletStopped: "stop-kubelet", KubeletStarted: "start-kubelet"}
	gcByPodGC = DeletedBy{ID: "gc_by", Pod: "stuck", User: PodGCUser}
)

// podGone is the audit log's record of the request that removed pod stuck.
func podGone(user string, grace *int64) evidence.AuditEvent {
	return evidence.AuditEvent{ReceivedAt: at(72.05), CompletedAt: at(72.06), User: user, Verb: "delete", Resource: "pods", Name: "stuck",
		Code: 200, GracePeriodSeconds: grace, Result: evidence.AuditGone}
}

// The pod GC's own request, in the audit log, passes; without an audit log
// who deleted the pod is not checked (not passed on "not recorded"), and the
// phase-and-DELETED claim neither needs nor observes it.
func TestPodGCNamedByTheAuditLog(t *testing.T) {
	rec := stuckRecord()
	if c := DeletedByUser(rec, gcByPodGC); c.Verdict != NotChecked || !strings.Contains(c.Reason, "no audit log") {
		t.Errorf("without an audit log: %s (%s), want not checked for want of the audit log", c.Verdict, c.Reason)
	}
	if c := FailedAndDeletedWithin(rec, gcSpec); !c.Passed() || c.Observed["deleted_by"] != nil {
		t.Errorf("phase Failed and DELETED without an audit log: %s (%s), deleted_by %v", c.Verdict, c.Reason, c.Observed["deleted_by"])
	}
	rec.Audit = append(rec.Audit, podGone(PodGCUser, i64(0)))
	if c := DeletedByUser(rec, gcByPodGC); !c.Passed() || c.Observed["deleted_by"] != PodGCUser {
		t.Errorf("with the pod GC's request: %s (%s), deleted_by %v", c.Verdict, c.Reason, c.Observed["deleted_by"])
	}
}

func TestStuckClaimsPassOnTheStuckSequence(t *testing.T) {
	rec := stuckRecord()
	for _, c := range []Claim{StaysTerminating(rec, stuckSpec), NodeTaintedWithin(rec, taintSpec), FailedAndDeletedWithin(rec, gcSpec)} {
		if !c.Passed() {
			t.Errorf("%s: %s", c.ID, c.Reason)
		}
	}
	s := stuckSpec
	s.PastNotReady = 5 * time.Second
	c := StaysTerminating(rec, s)
	if len(c.Preconditions) != 2 || *c.Preconditions[0].ActualSeconds != 20.0 || *c.Preconditions[1].ActualSeconds != 5.0 || !c.Passed() {
		t.Errorf("%s (%s): preconditions %+v", c.Verdict, c.Reason, c.Preconditions)
	}
}

func TestStuckClaimsFailOnContradictingRecords(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		claim  func(*evidence.Record) Claim
		reason string
	}{
		{"deleted before the taint (someone finished it)", func(rec *evidence.Record) {
			for i, e := range rec.PodEvents {
				if e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = at(45)
				}
			}
		}, func(r *evidence.Record) Claim { return StaysTerminating(r, stuckSpec) }, "DELETED event arrived"},
		{"the node never turned NotReady", func(rec *evidence.Record) {
			rec.NodeEvents = rec.NodeEvents[:1]
		}, func(r *evidence.Record) Claim { return StaysTerminating(r, stuckSpec) }, "not seen NotReady"},
		{"the container had stopped while Terminating", func(rec *evidence.Record) {
			rec.Containers[0].State = evidence.ContainerExited
		}, func(r *evidence.Record) Claim { return StaysTerminating(r, stuckSpec) }, "while the object was Terminating"},
		{"the pod watch was down during the hold", func(rec *evidence.Record) {
			rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at(30), To: at(35), Why: "test"})
		}, func(r *evidence.Record) Claim { return StaysTerminating(r, stuckSpec) }, "watch was down"},
		{"no unreachable taint", func(rec *evidence.Record) {
			rec.NodeEvents[1].Taints = nil
		}, func(r *evidence.Record) Claim { return NodeTaintedWithin(r, taintSpec) }, "showed taint"},
		{"tainted at once (not by the node controller's grace period)", func(rec *evidence.Record) {
			rec.NodeEvents[1].ObservedAt = at(6)
		}, func(r *evidence.Record) Claim {
			s := taintSpec
			s.NotBefore = 39 * time.Second
			return NodeTaintedWithin(r, s)
		}, "sooner than"},
		{"tainted too late", func(rec *evidence.Record) {
			rec.NodeEvents[1].ObservedAt = at(95)
		}, func(r *evidence.Record) Claim { return NodeTaintedWithin(r, taintSpec) }, "later than"},
		{"deleted too late after the out-of-service taint", func(rec *evidence.Record) {
			rec.PodEvents[len(rec.PodEvents)-1].ObservedAt = at(95)
		}, func(r *evidence.Record) Claim { return FailedAndDeletedWithin(r, gcSpec) }, "later than"},
		{"never marked Failed", func(rec *evidence.Record) {
			for i := range rec.PodEvents {
				if rec.PodEvents[i].Phase == "Failed" {
					rec.PodEvents[i].Phase = "Running"
				}
			}
		}, func(r *evidence.Record) Claim { return FailedAndDeletedWithin(r, gcSpec) }, "phase Failed"},
		{"the kubelet was back before the deletion", func(rec *evidence.Record) {
			rec.Actions[len(rec.Actions)-1].StartedAt = at(65)
		}, func(r *evidence.Record) Claim { return FailedAndDeletedWithin(r, gcSpec) }, "kubelet was started again"},
		{"removed by somebody else than the pod GC (audit log)", func(rec *evidence.Record) {
			rec.Audit = append(rec.Audit, podGone("kubernetes-admin", i64(0)))
		}, func(r *evidence.Record) Claim { return DeletedByUser(r, gcByPodGC) }, "sent by kubernetes-admin"},
		{"removed by the pod GC with a grace period (audit log)", func(rec *evidence.Record) {
			rec.Audit = append(rec.Audit, podGone(PodGCUser, i64(30)))
		}, func(r *evidence.Record) Claim { return DeletedByUser(r, gcByPodGC) }, "gracePeriodSeconds 30"},
		{"an audit log without the request that removed it", func(rec *evidence.Record) {
			rec.Audit = append(rec.Audit, evidence.AuditEvent{User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "stuck", Code: 200, Result: evidence.AuditMarked})
		}, func(r *evidence.Record) Claim { return DeletedByUser(r, gcByPodGC) }, "no request that removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := stuckRecord()
			tc.mutate(rec)
			c := tc.claim(rec)
			if c.Passed() || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("%s: verdict %s, reason %q; want a failure about %q", c.ID, c.Verdict, c.Reason, tc.reason)
			}
		})
	}
}
