package evidence

import (
	"encoding/json"
	"testing"
	"time"
)

func TestOffsetFromIntersectsTheProbes(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// The remote clock is 800 ms ahead. Probe 1 is wide (100 ms in flight),
	// probe 2 tight (10 ms): it decides.
	probes := []ClockProbe{
		{Before: t0, After: t0.Add(100 * ms), Remote: t0.Add(850 * ms)},
		{Before: t0.Add(time.Second), After: t0.Add(time.Second + 10*ms), Remote: t0.Add(time.Second + 805*ms)},
	}
	o, ok := OffsetFrom("node/w1", "test", probes)
	if !ok || o.Inconsistent {
		t.Fatalf("%+v", o)
	}
	// Probe 1 allows [0.750, 0.850], probe 2 [0.795, 0.805]: 0.800 ± 0.005.
	if o.Offset != 0.8 || o.Uncertainty != 0.005 || o.Samples != 2 {
		t.Errorf("offset %v ± %v from %d samples, want 0.8 ± 0.005 from 2", o.Offset, o.Uncertainty, o.Samples)
	}
	// A probe that contradicts the others (the clock stepped): flagged, and
	// the span covers every probe.
	probes = append(probes, ClockProbe{Before: t0.Add(2 * time.Second), After: t0.Add(2*time.Second + 10*ms), Remote: t0.Add(2 * time.Second)})
	o, _ = OffsetFrom("node/w1", "test", probes)
	if !o.Inconsistent || o.Offset-o.Uncertainty > -0.01 || o.Offset+o.Uncertainty < 0.85 {
		t.Errorf("a contradicting probe: %+v", o)
	}
	if _, ok := OffsetFrom("node/w1", "test", nil); ok {
		t.Error("an offset without probes")
	}
}

// The API server's offset comes from termlab's own requests matched in the
// audit log; requests recorded from the audit log itself measure nothing.
func TestAPIServerOffsetFromTheAuditLog(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	rec := &Record{
		Actions: []Action{
			{Kind: "delete", Target: "p", Request: del("p"), StartedAt: t0, FinishedAt: t0.Add(20 * ms)},
			{Kind: "force-delete", Target: "q", Request: del("q"), StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(time.Second + 30*ms)},
		},
		Audit: []AuditEvent{
			{User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "p", Code: 200, ReceivedAt: t0.Add(12 * ms), CompletedAt: t0.Add(15 * ms)},
			{User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "q", Code: 200, ReceivedAt: t0.Add(time.Second + 5*ms), CompletedAt: t0.Add(time.Second + 9*ms)},
		},
	}
	o, ok := rec.APIServerOffset()
	// p allows [-0.008, 0.012], q [-0.025, 0.005]: [-0.008, 0.005].
	if !ok || o.Samples != 2 || o.Offset != -0.0015 || o.Uncertainty != 0.0065 {
		t.Errorf("%+v", o)
	}
	// A script's request, recorded with the server's own times.
	rec.Actions = []Action{{Kind: "delete", Target: "p", Request: del("p"), StartedAt: t0.Add(12 * ms), FinishedAt: t0.Add(15 * ms)}}
	if o, ok := rec.APIServerOffset(); ok {
		t.Errorf("measured from the server's own times: %+v", o)
	}
}

func del(pod string) json.RawMessage {
	return json.RawMessage(`{"verb":"DELETE","path":"/api/v1/namespaces/ns/pods/` + pod + `"}`)
}

func TestBetweenCorrectsEachEndByItsClock(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	rec := &Record{Clocks: []ClockOffset{
		{Clock: ClockNode("w1"), Offset: 0.5, Uncertainty: 0.01},
		{Clock: ClockAPIServer, Offset: -0.25, Uncertainty: 0.02},
	}}
	node := OnNode("w1", t0.Add(3*time.Second))                       // 2.5 s host time
	server := Stamp{Time: t0.Add(time.Second), Clock: ClockAPIServer} // 1.25 s host time
	iv := rec.Between(server, node)
	if iv.D != 1250*time.Millisecond || iv.Uncertainty != 30*time.Millisecond || iv.Correction != -750*time.Millisecond || len(iv.Clocks) != 2 {
		t.Fatalf("between the API server and the node: %+v", iv)
	}
	// Two readings of one clock need no correction, whatever its offset.
	if iv := rec.Between(OnNode("w1", t0), node); iv.D != 3*time.Second || iv.Uncertainty != 0 || len(iv.Clocks) != 0 {
		t.Fatalf("on one clock: %+v", iv)
	}
	// A clock the run did not measure is taken as the host's (a record of
	// kind's own cluster, or from before NodeAccess was recorded).
	if iv := rec.Between(OnHost(t0), OnNode("w2", t0.Add(time.Second))); iv.D != time.Second || iv.Uncertainty != 0 {
		t.Fatalf("an unmeasured clock: %+v", iv)
	}
}

// An API server 2 s behind the host: the offset comes from termlab's
// requests matched by verb and object (one of each), not by time, and
// AuditFor then finds them with the times corrected. Two requests of one
// verb on one object are ambiguous and measure nothing.
func TestAPIServerTwoSecondsBehind(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	behind := -2 * time.Second
	rec := &Record{
		Actions: []Action{
			{Kind: "delete", Target: "p", Request: del("p"), StartedAt: t0, FinishedAt: t0.Add(20 * ms)},
			{Kind: "force-delete", Target: "q", Request: del("q"), StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(time.Second + 30*ms)},
		},
		Audit: []AuditEvent{
			{AuditID: "p", User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "p", Code: 200, ReceivedAt: t0.Add(12 * ms).Add(behind)},
			{AuditID: "q", User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "q", Code: 200, ReceivedAt: t0.Add(time.Second + 5*ms).Add(behind)},
		},
	}
	o, ok := rec.APIServerOffset()
	if !ok || o.Samples != 2 || o.Offset != -2.0015 || o.Uncertainty != 0.0065 {
		t.Fatalf("%+v", o)
	}
	for i, want := range []string{"p", "q"} {
		if e, ok := rec.AuditFor(rec.Actions[i]); !ok || e.AuditID != want {
			t.Errorf("AuditFor(%s) = %+v %v", want, e, ok)
		}
	}
	// termlab's own request is timed from its send, on the host's clock,
	// whatever the server's receipt says.
	if s := rec.ActionStamp(rec.Actions[0]); s.Clock != ClockHost || !s.Time.Equal(rec.Actions[0].StartedAt) {
		t.Errorf("ActionStamp = %+v", s)
	}
	// A second delete of p, by termlab and in the log: p is ambiguous.
	rec.Actions = append(rec.Actions, Action{Kind: "delete", Target: "p", Request: del("p"), StartedAt: t0.Add(3 * time.Second), FinishedAt: t0.Add(3*time.Second + 20*ms)})
	rec.Audit = append(rec.Audit, AuditEvent{AuditID: "p2", User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "p", Code: 200, ReceivedAt: t0.Add(3*time.Second + 10*ms).Add(behind)})
	if o, ok := rec.APIServerOffset(); !ok || o.Samples != 1 {
		t.Fatalf("with p ambiguous: %+v", o)
	}
	if e, ok := rec.AuditFor(rec.Actions[2]); !ok || e.AuditID != "p2" {
		t.Errorf("AuditFor(second delete of p) = %+v %v", e, ok)
	}
}

// On a cluster reached through a kubeconfig, a clock not measured is named,
// not taken as the host's.
func TestBetweenNamesAnUnmeasuredRemoteClock(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	for access, want := range map[string]int{"": 0, NodeAccessDocker: 0, NodeAccessPod: 1, NodeAccessNone: 1} {
		rec := &Record{NodeAccess: access}
		if iv := rec.Between(OnHost(t0), OnNode("w2", t0.Add(time.Second))); len(iv.Unmeasured) != want || iv.D != time.Second {
			t.Errorf("node access %q: %+v", access, iv)
		}
	}
}
