package stuck

import (
	"slices"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:stuck run on the termlab cluster (kubelet v1.37.2);
// the whole objects are left out of events.jsonl.
const recorded = "testdata/20261204-023938-30a1"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 8)
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  []string
	}{
		{
			name: "something finished the deletion before the taint (the object went at its grace deadline)",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.Type == "DELETED" {
						rec.PodEvents[i].ObservedAt = del.StartedAt.Add(grace)
					}
				}
			},
			// …and so the pod GC's delete, received after it, did not remove it.
			fails: []string{"stuck.stays_terminating", "stuck.pod_gc_deleted", idDeletedByPodGC},
		},
		{
			name: "the pod watch was down while the object was Terminating",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: del.FinishedAt, To: del.FinishedAt.Add(grace), Why: "test: connection reset"})
			},
			fails: []string{"stuck.stays_terminating"},
		},
		{
			// Recorded: 0.028 s; the claim allows 1 s (claims.WatchAllowance).
			name: "the delete's update was seen 2 s after the request",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				late := del.StartedAt.Add(2 * time.Second)
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.DeletionTimestamp != nil && e.ObservedAt.Before(late) {
						rec.PodEvents[i].ObservedAt = late
					}
				}
			},
			fails: []string{"stuck.stays_terminating"},
		},
		{
			name: "the node never got the unreachable taint",
			mutate: func(rec *evidence.Record) {
				for i := range rec.NodeEvents {
					rec.NodeEvents[i].Taints = nil
				}
			},
			fails: []string{"stuck.node_unreachable_taint"},
		},
		{
			name: "the node turned NotReady at once (not the node controller's grace period)",
			mutate: func(rec *evidence.Record) {
				stop, _ := rec.Action("stop-kubelet", rec.TargetOf("stop-kubelet"))
				for i, e := range rec.NodeEvents {
					if e.Ready != "True" {
						rec.NodeEvents[i].ObservedAt = stop.StartedAt.Add(grace / 10)
					}
				}
			},
			fails: []string{"stuck.node_not_ready", "stuck.node_unreachable_taint"},
		},
		{
			name: "deleted without being marked Failed (not the pod GC)",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.Phase == "Failed" {
						rec.PodEvents[i].Phase = "Running"
					}
				}
			},
			fails: []string{"stuck.pod_gc_deleted"},
		},
		{
			name: "the container had stopped when the object went (the node really was shut down)",
			mutate: func(rec *evidence.Record) {
				gone, _ := rec.Deleted(pod)
				for i, o := range rec.Containers {
					if o.ObservedAt.After(gone.ObservedAt) && o.State == evidence.ContainerRunning {
						rec.Containers[i].State = evidence.ContainerExited
					}
				}
			},
			// …and so the kubelet's return did not stop it.
			fails: []string{"stuck.container_running_after_gone", "stuck.container_stopped_after_kubelet_restart"},
		},
		{
			name: "the container still ran long after the kubelet came back",
			mutate: func(rec *evidence.Record) {
				for i, o := range rec.Containers {
					if o.FinishedAt != nil {
						t := o.FinishedAt.Add(killedWithin * 2)
						rec.Containers[i].FinishedAt = &t
					}
				}
			},
			fails: []string{"stuck.container_stopped_after_kubelet_restart"},
		},
		{
			// The statement says the kubelet kills it: a clean 0 the workload
			// reached by itself, with no SIGTERM in its log, is no kill.
			name: "the container exited 0 by itself after the kubelet's return",
			mutate: func(rec *evidence.Record) {
				zero := int32(0)
				for i, o := range rec.Containers {
					if o.ExitCode != nil {
						rec.Containers[i].ExitCode = &zero
					}
					if l := o.Log; l != nil {
						l.Signal, l.SignalAt = "", nil
						if l.ExitCodeLogged != nil {
							logged := 0
							l.ExitCodeLogged = &logged
						}
					}
				}
				for i := range rec.TaskExits {
					rec.TaskExits[i].ExitStatus = 0
				}
			},
			fails: []string{"stuck.container_stopped_after_kubelet_restart"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

// A pod's watch events in an order a watch never sends fail stuck.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "stuck")
}

// Without an audit log nothing says who sent the delete: the claim that the
// pod GC did is not checked (it passed on "deleted_by: not recorded" before),
// the rest still holds, and the run is partial.
func TestNoAuditLogLeavesWhoDeletedItOpen(t *testing.T) {
	rec := load(t)
	rec.Audit = nil
	decided := Claims(rec)
	for _, c := range decided {
		switch {
		case c.ID == idDeletedByPodGC:
			if c.Verdict != claims.NotChecked {
				t.Errorf("%s without an audit log: %s (%s), want not checked", c.ID, c.Verdict, c.Reason)
			}
		case !c.Passed():
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
	if got := claims.Overall(decided); got != claims.Partial {
		t.Errorf("run verdict %s, want %s", got, claims.Partial)
	}
}

// With the audit log, a delete sent by anyone but the pod GC, with a grace
// period, or received after the watch showed the pod gone, fails the claim
// on who deleted it, and only that one.
func TestDeletedBySomebodyElseFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(e *evidence.AuditEvent)
	}{
		{"sent by a person", func(e *evidence.AuditEvent) { e.User = "kubernetes-admin" }},
		{"sent with a grace period", func(e *evidence.AuditEvent) { g := int64(30); e.GracePeriodSeconds = &g }},
		// Recorded: the DELETED read 0.035 s after the receipt, or
		// -0.004 s ± 0.042 s once the API server's measured offset
		// (-0.040 s ± 0.042 s) corrects the receipt: within the clocks'
		// uncertainty of 0, as a caused event is.
		{"received 2 s after the watch showed the pod DELETED", func(e *evidence.AuditEvent) {
			e.ReceivedAt = e.ReceivedAt.Add(2 * time.Second)
			e.CompletedAt = e.CompletedAt.Add(2 * time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			n := 0
			for i, e := range rec.Audit {
				if e.Verb == "delete" && e.Resource == "pods" && e.Name == pod && e.Result == evidence.AuditGone {
					tc.mutate(&rec.Audit[i])
					n++
				}
			}
			if n == 0 {
				t.Fatal("the recorded run's audit log has no request that removed the pod")
			}
			labtest.OnlyFail(t, Claims(rec), idDeletedByPodGC)
		})
	}
}

// The pod GC patches the phase to Failed before its force delete: with the
// audit log, a Failed written by anyone else, or received only after the
// watch showed it, fails the claim on who deleted it, and only that one.
func TestMarkedFailedBySomebodyElseFails(t *testing.T) {
	isPodGCStatusWrite := func(e evidence.AuditEvent) bool {
		return e.Resource == "pods" && e.Name == pod && e.Subresource == "status" && e.User == claims.PodGCUser
	}
	for _, tc := range []struct {
		name   string
		mutate func(rec *evidence.Record) int
	}{
		{"written by a person", func(rec *evidence.Record) (n int) {
			for i, e := range rec.Audit {
				if isPodGCStatusWrite(e) {
					rec.Audit[i].User = "kubernetes-admin"
					n++
				}
			}
			return n
		}},
		{"not in the audit log", func(rec *evidence.Record) int {
			n := len(rec.Audit)
			rec.Audit = slices.DeleteFunc(rec.Audit, isPodGCStatusWrite)
			return n - len(rec.Audit)
		}},
		// Recorded: received 0.058 s ± 0.042 s before the watch showed the pod
		// Failed (0.098 s by the two clocks' own readings).
		{"received 2 s after the watch showed the pod Failed", func(rec *evidence.Record) (n int) {
			for i, e := range rec.Audit {
				if isPodGCStatusWrite(e) {
					rec.Audit[i].ReceivedAt = e.ReceivedAt.Add(2 * time.Second)
					rec.Audit[i].CompletedAt = e.CompletedAt.Add(2 * time.Second)
					n++
				}
			}
			return n
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			if tc.mutate(rec) == 0 {
				t.Fatal("the recorded run's audit log has no status write of the pod by the pod GC")
			}
			labtest.OnlyFail(t, Claims(rec), idDeletedByPodGC)
		})
	}
}

// A cluster's audit policy may keep no status writes: then the log cannot
// say who marked the pod Failed, and the claim rests on the delete alone.
func TestAuditLogWithoutStatusWritesLeavesWhoMarkedItFailedOpen(t *testing.T) {
	rec := load(t)
	rec.Audit = slices.DeleteFunc(rec.Audit, func(e evidence.AuditEvent) bool { return e.Subresource == "status" })
	labtest.AllPass(t, Claims(rec), 8)
}
