package scale

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

var raisedLimits = cluster.ControlPlaneLimits{
	Scheduler:         cluster.ClientLimit{QPS: cluster.RaisedQPS, Burst: cluster.RaisedBurst},
	ControllerManager: cluster.ClientLimit{QPS: cluster.RaisedQPS, Burst: cluster.RaisedBurst},
}

var defaultLimits = cluster.ControlPlaneLimits{
	Scheduler:         cluster.DefaultSchedulerLimit,
	ControllerManager: cluster.DefaultControllerManagerLimit,
}

// paceRecord is a run of pods whose every pod the scheduler bound at
// perSecond, its first burst pods at once, with the control plane's limits
// noted (nil: not recorded).
func paceRecord(pods int, asked string, limits *cluster.ControlPlaneLimits, perSecond float64, burst int) *evidence.Record {
	rec := &evidence.Record{Namespace: "scale-ns"}
	note := func(prefix string, v any) {
		b, _ := json.Marshal(v)
		rec.Notes = append(rec.Notes, evidence.Note{Text: prefix + string(b)})
	}
	note(sizeNote, Size{FakeNodes: 100, Pods: pods, FinalizerPercent: 20, StageSet: "faithful", Limits: asked})
	if limits != nil {
		note(limitsNote, *limits)
	}
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for i := range pods {
		at := t0
		if i >= burst {
			at = t0.Add(time.Duration(float64(i-burst+1) / perSecond * float64(time.Second)))
		}
		rec.Audit = append(rec.Audit, evidence.AuditEvent{
			User: "system:kube-scheduler", UserAgent: "kube-scheduler/v1.37.2 (linux/amd64) kubernetes/abcdef/scheduler",
			Verb: "create", Resource: "pods", Subresource: "binding", Namespace: rec.Namespace, Name: PodName(i), Code: 201, ReceivedAt: at,
		})
	}
	return rec
}

func paceVerdict(t *testing.T, rec *evidence.Record) claims.Claim {
	t.Helper()
	for _, c := range Claims(rec) {
		if c.ID == ClaimPace {
			return c
		}
	}
	t.Fatal("no pace claim")
	return claims.Claim{}
}

func TestPaceClaim(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rec       *evidence.Record
		want      claims.Verdict
		reasonHas string
	}{
		{"default limits, bound at the scheduler's 50/s after its burst of 100", paceRecord(5000, "", &defaultLimits, 50, 100), claims.Pass, ""},
		{"default limits, bound at 30/s: something else set the pace", paceRecord(5000, "", &defaultLimits, 30, 100), claims.Fail, "did not set the pace"},
		{"default limits, bound at 80/s: more than the limit lets through", paceRecord(5000, "", &defaultLimits, 80, 100), claims.Fail, "did not set the pace"},
		{"raised limits, bound at 95/s", paceRecord(5000, "raised", &raisedLimits, 95, 100), claims.Pass, ""},
		{"raised limits, still bound at 50/s", paceRecord(5000, "raised", &raisedLimits, 50, 100), claims.Fail, "no faster than the default limit"},
		{"raised asked, the scheduler still at 50/s", paceRecord(5000, "raised", &defaultLimits, 50, 100), claims.Fail, "asked for raised limits"},
		{"no limits recorded", paceRecord(5000, "", nil, 50, 100), claims.Fail, "did not record the control plane's limits"},
		{"binds missing from the audit log", func() *evidence.Record {
			r := paceRecord(5000, "", &defaultLimits, 50, 100)
			r.Audit = r.Audit[:4000]
			return r
		}(), claims.Fail, "holds 4000 binds"},
		{"no audit log", func() *evidence.Record {
			r := paceRecord(5000, "", &defaultLimits, 50, 100)
			r.Audit = nil
			return r
		}(), claims.NotChecked, "audit log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := paceVerdict(t, tc.rec)
			if c.Verdict != tc.want || !strings.Contains(c.Reason, tc.reasonHas) {
				t.Errorf("verdict %s, want %s; reason %q, want it to say %q; observed %v", c.Verdict, tc.want, c.Reason, tc.reasonHas, c.Observed)
			}
			// audit.jsonl is cited when, and only when, the run has one.
			if hasAudit := len(tc.rec.Audit) > 0; slices.Contains(c.Evidence, evidence.AuditFile) != hasAudit {
				t.Errorf("with %d audit events the claim cites %v", len(tc.rec.Audit), c.Evidence)
			}
		})
	}
}

// The claim is made only from paceMinPods: the quick size binds within the
// scheduler's burst and a few seconds.
func TestPaceClaimOnlyForLargeRuns(t *testing.T) {
	for _, c := range Claims(paceRecord(300, "", &defaultLimits, 50, 100)) {
		if c.ID == ClaimPace {
			t.Errorf("a 300-pod run has the pace claim: %+v", c)
		}
	}
}

func TestBusiest(t *testing.T) {
	sec := int64(time.Second)
	// 10 requests in the first second, then one a second for a minute.
	var at []int64
	for i := range 10 {
		at = append(at, int64(i)*sec/10)
	}
	for i := range 60 {
		at = append(at, int64(i+1)*sec)
	}
	if got := busiest(at, 30*time.Second); got != float64(10+29)/30 {
		t.Errorf("busiest = %v, want %v", got, float64(39)/30)
	}
	if busiest(nil, time.Second) != 0 {
		t.Error("no requests: want 0")
	}
}

func TestPacersNameWhoIsAtItsLimit(t *testing.T) {
	rec := paceRecord(3000, "", &defaultLimits, 50, 100)
	t0 := rec.Audit[0].ReceivedAt
	for i := range 3000 { // kwok: no known limit, at 70/s
		rec.Audit = append(rec.Audit, evidence.AuditEvent{User: "kwok-controller", UserAgent: "kwok/v0.8.0", Verb: "patch", Resource: "pods", Subresource: "status",
			Namespace: rec.Namespace, Name: PodName(i), Code: 200, ReceivedAt: t0.Add(time.Duration(i) * time.Second / 70)})
	}
	for i := range 10 { // the namespace controller, one collection DELETE every 6 s
		rec.Audit = append(rec.Audit, evidence.AuditEvent{User: "system:serviceaccount:kube-system:namespace-controller", UserAgent: "kube-controller-manager/v1.37.2 (linux/amd64)",
			Verb: "deletecollection", Resource: "pods", Namespace: rec.Namespace, Code: 200, ReceivedAt: t0.Add(time.Duration(i) * 6 * time.Second)})
	}
	rec.Audit = append(rec.Audit, evidence.AuditEvent{User: "system:kube-scheduler", Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "elsewhere", ReceivedAt: t0})
	got := map[string]Pacer{}
	for _, p := range FiguresOf(rec).Pacers {
		got[p.Sender] = p
	}
	if s := got["system:kube-scheduler"]; !s.LimitKnown || !s.AtLimit || s.Requests != 3000 {
		t.Errorf("scheduler %+v: want at its limit, 3000 binds of the run's namespace", s)
	}
	if k := got["kwok-controller"]; k.LimitKnown || k.AtLimit || k.Busiest < 69 || k.Busiest > 71 {
		t.Errorf("kwok %+v: want 70/s, its limit not known", k)
	}
	if n := got["namespace-controller (kube-controller-manager)"]; !n.LimitKnown || n.Limit.QPS != 20 || n.AtLimit {
		t.Errorf("namespace controller %+v: want the controller-manager's 20/s, far from it", n)
	}
	if a := pacedBy(FiguresOf(rec)); !strings.Contains(a, "system:kube-scheduler (") || strings.Contains(a, "kwok") || strings.Contains(a, "namespace-controller") {
		t.Errorf("the answer names who ran at its limit: %q", a)
	}
}

// The answer says whether the deletion followed the marking, or waited on
// kwok's DELETEs, from the recorded rates and limits.
func TestPacedBySaysWhatSetTheDeletion(t *testing.T) {
	limits := cluster.ControlPlaneLimits{DeleteCollectionWorkers: 1, KwokPodPlayParallelism: 4}
	followed := pacedBy(Figures{MarkedPerSecond: 22.2, DeletedPerSecond: 22.2, Limits: limits, LimitsOK: true})
	if !strings.Contains(followed, "with 1 worker)") || !strings.Contains(followed, "the marking set the deletion's pace") {
		t.Errorf("marked 22.2, DELETED 22.2: %s", followed)
	}
	// kwok with its 4 requests in flight all the time it had any: held by them.
	held := Pacer{Sender: "kwok-controller", UserAgent: "kwok/v0.8.0", InFlight: inFlight([]int64{0, 0, 0, 0}, []int64{10, 10, 10, 10})}
	behind := pacedBy(Figures{MarkedPerSecond: 21.8, DeletedPerSecond: 13.9, Limits: limits, LimitsOK: true, Pacers: []Pacer{held}})
	if strings.Contains(behind, "marking set") || !strings.Contains(behind, "behind kwok, which had all 4 of the requests it sends at once in flight 100 % of the time") {
		t.Errorf("marked 21.8, DELETED 13.9, kwok at its 4: %s", behind)
	}
	// kwok with 64 allowed and 2 in flight: not its parallelism.
	limits.KwokPodPlayParallelism = 64
	free := Pacer{Sender: "kwok-controller", UserAgent: "kwok/v0.8.0", InFlight: inFlight([]int64{0, 0}, []int64{10, 10})}
	slow := pacedBy(Figures{MarkedPerSecond: 79.8, DeletedPerSecond: 42.9, Limits: limits, LimitsOK: true, Pacers: []Pacer{free}})
	if !strings.Contains(slow, "though not its 64 requests at once (a median 2 in flight, all 64 for 0 % of the time)") {
		t.Errorf("marked 79.8, DELETED 42.9, kwok at 2 of 64: %s", slow)
	}
}

// Requests in flight from receipt and answer times: overlaps counted, an
// answer at the instant of the next receipt not counted as an overlap.
func TestInFlight(t *testing.T) {
	// 0–10: one; 10–20: two (a second at 10, the first answered at 20); 20–30: one.
	f := inFlight([]int64{0, 10, 30}, []int64{20, 30, 30})
	if f.Max != 2 || math.Abs(f.Seconds-30e-9) > 1e-12 || f.Median != 1 {
		t.Errorf("got %+v, want max 2, 30 ns, median 1", f)
	}
	if s := f.ShareAtLeast(2); s < 0.33 || s > 0.34 {
		t.Errorf("share at 2 or more: %.3f, want 1/3", s)
	}
	// back to back: the answer at 10 comes before the receipt at 10.
	if f := inFlight([]int64{0, 10}, []int64{10, 20}); f.Max != 1 {
		t.Errorf("back to back: max %d, want 1", f.Max)
	}
	if f := inFlight(nil, nil); f.Max != 0 || f.ShareAtLeast(1) != 0 {
		t.Errorf("none: %+v", f)
	}
}
