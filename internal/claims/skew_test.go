package claims

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// skewAudit moves every audit time of the record by d: the API server's clock
// reads d off the host's.
func skewAudit(rec *evidence.Record, d time.Duration) *evidence.Record {
	for i := range rec.Audit {
		rec.Audit[i].ReceivedAt = rec.Audit[i].ReceivedAt.Add(d)
		rec.Audit[i].CompletedAt = rec.Audit[i].CompletedAt.Add(d)
	}
	return rec
}

// An API server 2 s behind the host: its offset is measured from termlab's
// own request matched by what it asked, and the audit check still reads the
// server's record of the force delete, so a contradicting record fails the
// claim instead of leaving it to termlab's own account.
func TestAuditChecksSurviveAnAPIServerTwoSecondsBehind(t *testing.T) {
	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: 2 * time.Second, RequireGone: true}

	c := DeletedWithin(skewAudit(withAudit(orphan(), "orphan-process", i64(0), 200), -2*time.Second), gone)
	want(t, c, Pass, "")
	if _, fallback := c.Observed["force_delete_source"]; fallback {
		t.Fatalf("the claim fell back on termlab's own record: %v", c.Observed)
	}
	// Timed from termlab's send (10.0 s, the host's clock, as the DELETED
	// event it saw at 10.05 s): 50 ms, not the 2.047 s the server's
	// receipt (8.003 s by its clock) taken raw would give.
	if got := c.Observed["deleted_after_seconds"]; got != 0.05 {
		t.Fatalf("deleted_after_seconds %v, want 0.05 (observed %v)", got, c.Observed)
	}
	// termlab recorded a force delete, the server (2 s behind) an ordinary one.
	want(t, DeletedWithin(skewAudit(withAudit(orphan(), "orphan-process", i64(30), 200), -2*time.Second), gone), Fail, "with gracePeriodSeconds 30, not 0")
}

// A script's force delete is recorded from the audit log, at the server's
// clock; with that clock 2 s behind, the time to the DELETED event the host
// saw is corrected by the offset that termlab's own create measured.
func TestAScriptsRequestIsTimedOnTheServersClock(t *testing.T) {
	const skew = -2 * time.Second
	rec := orphan()
	rec.NodeAccess = evidence.NodeAccessPod
	for i, a := range rec.Actions {
		if a.Kind == "force-delete" {
			rec.Actions[i].Request = json.RawMessage(`{"verb":"DELETE","path":"/api/v1/namespaces/ns/pods/orphan-process","from":"audit log","auditID":"s1"}`)
			rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = a.StartedAt.Add(skew), a.StartedAt.Add(skew+5*time.Millisecond)
			rec.Audit = append(rec.Audit, evidence.AuditEvent{AuditID: "s1", ReceivedAt: rec.Actions[i].StartedAt, CompletedAt: rec.Actions[i].FinishedAt,
				User: "kubernetes-admin", UserAgent: "kubectl/v1.37.2", Verb: "delete", Resource: "pods", Namespace: "ns", Name: "orphan-process", Code: 200, GracePeriodSeconds: i64(0), Result: evidence.AuditGone})
		}
	}
	// termlab's own create of another pod, received 4 ms into its 10 ms.
	rec.Actions = append(rec.Actions, evidence.Action{Kind: "create", Target: "other", Request: json.RawMessage(`{"verb":"POST","path":"/api/v1/namespaces/ns/pods"}`), StartedAt: at(1), FinishedAt: at(1.01)})
	rec.Audit = append(rec.Audit, evidence.AuditEvent{AuditID: "c1", ReceivedAt: at(1.004).Add(skew), CompletedAt: at(1.006).Add(skew),
		User: "kubernetes-admin", UserAgent: "termlab", Verb: "create", Resource: "pods", Namespace: "ns", Name: "other", Code: 201})

	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: time.Second}
	c := DeletedWithin(rec, gone)
	want(t, c, Pass, "")
	// Sent at 8 s by the server's clock, 10.001 s by the host's (offset
	// −2.001 s ± 5 ms): 49 ms before the DELETED event, not 2.05 s.
	if c.Observed["deleted_after_seconds"] != 0.049 || c.Observed["deleted_after_clock_correction_seconds"] != -2.001 {
		t.Fatalf("observed %v", c.Observed)
	}
	// Without termlab's own request the server's clock is not measured, and
	// on a cluster reached through a kubeconfig it is not the host's.
	rec.Actions, rec.Audit = rec.Actions[:len(rec.Actions)-1], rec.Audit[:len(rec.Audit)-1]
	want(t, DeletedWithin(rec, gone), NotChecked, "clock of apiserver, which the run did not measure")
}

// crictl's logs carry the workload's heartbeats on the node's clock. A node
// 2 s ahead makes a beat logged before the DELETED event read as after it:
// corrected by the measured offset the claim fails; with the clock not
// measured on a node reached through a node pod it is not checked.
func TestHeartbeatTimesAreTheNodes(t *testing.T) {
	const ahead = 2.0
	beating := Beating{ID: "beats", Pod: "orphan-process", Until: "start-kubelet", MinBeats: 2}
	rec := func(lastBeatHost float64, access string, clocks ...evidence.ClockOffset) *evidence.Record {
		r := orphan()
		r.NodeAccess, r.Clocks = access, clocks
		r.Containers = nil
		observe(r, "orphan-process", 10.2, evidence.ContainerRunning, nil, nil, beats(9, 9.9+ahead, "", false))
		observe(r, "orphan-process", 10.4, evidence.ContainerRunning, nil, nil, beats(11, lastBeatHost+ahead, "", false))
		return r
	}
	measured := evidence.ClockOffset{Clock: evidence.ClockNode("worker"), Offset: ahead, Uncertainty: 0.002, Samples: 5}

	// The last beat at 10.0 s host time, before the DELETED event at 10.05 s.
	want(t, HeartbeatAdvancing(rec(10.0, evidence.NodeAccessPod, measured), beating), Fail, "is not after the DELETED event")
	// At 10.3 s, after it.
	c := HeartbeatAdvancing(rec(10.3, evidence.NodeAccessPod, measured), beating)
	want(t, c, Pass, "")
	if c.Observed["last_beat_after_deleted_seconds"] != 0.25 {
		t.Fatalf("observed %v", c.Observed)
	}
	// Not measured, through a node pod: the node's clock is unknown.
	c = HeartbeatAdvancing(rec(10.0, evidence.NodeAccessPod), beating)
	want(t, c, NotChecked, "clock of node/worker, which the run did not measure")
	// On termlab's own kind cluster the node is a container on the host:
	// its clock is the host's, measured or not.
	want(t, HeartbeatAdvancing(rec(10.3-ahead, evidence.NodeAccessDocker), beating), Pass, "")
}

// crictl's stop time on a node reached through a node pod whose clock was
// not measured decides nothing; on kind's own node it is the host's.
func TestAnUnmeasuredNodeClockLeavesTheStopNotChecked(t *testing.T) {
	stops := Stops{ID: "stops", Pod: "held", After: "delete", Within: 2 * time.Second}
	rec := finalizerOnKubelet()
	rec.NodeAccess = evidence.NodeAccessPod
	c := ContainerStopped(rec, stops)
	want(t, c, NotChecked, "node/worker")
	if !strings.Contains(c.Reason, "did not measure") {
		t.Fatalf("reason %q", c.Reason)
	}
	rec.NodeAccess = evidence.NodeAccessDocker
	want(t, ContainerStopped(rec, stops), Pass, "")
}

// The stop after the SIGTERM, when only crictl's look (the host's) bounds
// the stop: the SIGTERM line is the node's time, 2 s ahead. Uncorrected the
// container stopped 0.9 s before its SIGTERM; corrected, 1.1 s after it.
func TestStopAfterSignalAcrossTheNodesClock(t *testing.T) {
	rec := finalizerOnKubelet()
	rec.NodeAccess = evidence.NodeAccessPod
	rec.Clocks = []evidence.ClockOffset{{Clock: evidence.ClockNode("worker"), Offset: 2, Uncertainty: 0.002, Samples: 5}}
	o := &rec.Containers[0]
	o.Log.SignalAt = tp(12.4) // 10.4 s by the host's clock
	o.State, o.ExitCode, o.FinishedAt = evidence.ContainerNotFound, nil, nil
	spec := Stops{ID: "stops", Pod: "held", After: "delete", Within: 2 * time.Second, WantSIGTERM: true,
		SignalWithin: time.Second, StopAfterSignal: &Window{Min: 0, Max: 2 * time.Second}}
	c := ContainerStopped(rec, spec)
	want(t, c, Pass, "")
	if c.Observed["stopped_after_sigterm_seconds"] != 1.1 {
		t.Fatalf("observed %v", c.Observed)
	}
	spec.StopAfterSignal = &Window{Min: 0, Max: time.Second}
	want(t, ContainerStopped(rec, spec), Fail, "stopped 1.1s after the SIGTERM")
}

// A DELETED event the host saw milliseconds after a script's request that
// the API server timed lies within the clocks' uncertainty of it: that is
// what a caused event looks like across two clocks, and the claim is
// decided (TestByYou's lab:finalizer was partial on it: 3 ms ± 5 ms). One
// before the request by more than the uncertainty still fails.
func TestACausedEventWithinTheClocksUncertaintyIsAfter(t *testing.T) {
	const skew = -2 * time.Second
	script := func(serverSend time.Duration) *evidence.Record {
		rec := orphan()
		rec.NodeAccess = evidence.NodeAccessPod
		for i, a := range rec.Actions {
			if a.Kind == "force-delete" {
				start := a.StartedAt.Add(skew + serverSend)
				rec.Actions[i].Request = json.RawMessage(`{"verb":"DELETE","path":"/api/v1/namespaces/ns/pods/orphan-process","from":"audit log","auditID":"s1"}`)
				rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = start, start.Add(5*time.Millisecond)
				rec.Audit = append(rec.Audit, evidence.AuditEvent{AuditID: "s1", ReceivedAt: start, CompletedAt: start.Add(5 * time.Millisecond),
					User: "kubernetes-admin", UserAgent: "kubectl/v1.37.2", Verb: "delete", Resource: "pods", Namespace: "ns", Name: "orphan-process", Code: 200, GracePeriodSeconds: i64(0), Result: evidence.AuditGone})
			}
		}
		rec.Actions = append(rec.Actions, evidence.Action{Kind: "create", Target: "other", Request: json.RawMessage(`{"verb":"POST","path":"/api/v1/namespaces/ns/pods"}`), StartedAt: at(1), FinishedAt: at(1.01)})
		rec.Audit = append(rec.Audit, evidence.AuditEvent{AuditID: "c1", ReceivedAt: at(1.004).Add(skew), CompletedAt: at(1.006).Add(skew),
			User: "kubernetes-admin", UserAgent: "termlab", Verb: "create", Resource: "pods", Namespace: "ns", Name: "other", Code: 201})
		return rec
	}
	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: time.Second}
	// Sent at 10.048 s by the host's clock (± 5 ms), DELETED seen at 10.05 s.
	c := DeletedWithin(script(47*time.Millisecond), gone)
	want(t, c, Pass, "")
	if c.Observed["deleted_after_seconds"] != 0.002 {
		t.Fatalf("observed %v", c.Observed)
	}
	// Sent at 10.101 s: the DELETED came 51 ms before it.
	want(t, DeletedWithin(script(100*time.Millisecond), gone), Fail, "before the force-delete request")
}

// A kubelet's reaction timed 8 ms ± 22 ms after the delete it reacts to is
// decided, not left unchecked (lab:sidecar's Killing event was, in a soak
// of 2026-12-07, while its lower bound was WithinClocks' 0); one before it
// by more than the uncertainty fails, and one straddling its upper bound
// is still not checked.
func TestCausedWithin(t *testing.T) {
	iv := func(d, u time.Duration) evidence.Interval {
		return evidence.Interval{D: d, Uncertainty: u, Clocks: []evidence.ClockOffset{{Clock: "apiserver", Offset: -0.021, Uncertainty: u.Seconds()}}}
	}
	for _, tc := range []struct {
		name    string
		iv      evidence.Interval
		verdict Verdict
		reason  string
	}{
		{"8 ms ± 22 ms after", iv(8*time.Millisecond, 22*time.Millisecond), Pass, ""},
		{"10 ms ± 22 ms before", iv(-10*time.Millisecond, 22*time.Millisecond), Pass, ""},
		{"50 ms ± 22 ms before", iv(-50*time.Millisecond, 22*time.Millisecond), Fail, "reacted"},
		{"1 s ± 22 ms after, bound 1 s", iv(time.Second, 22*time.Millisecond), NotChecked, "its bound 1s lies within that"},
		{"2 s after, bound 1 s", iv(2*time.Second, 22*time.Millisecond), Fail, "reacted"},
	} {
		b := NewBuilder("c", "s", "events.jsonl")
		b.Require(b.CausedWithin(tc.iv, time.Second, "the reaction"), "reacted %s", tc.iv.D)
		c := b.Done()
		if c.Verdict != tc.verdict || !strings.Contains(c.Reason, tc.reason) {
			t.Errorf("%s: %s (%s), want %s (%q)", tc.name, c.Verdict, c.Reason, tc.verdict, tc.reason)
		}
	}
}
