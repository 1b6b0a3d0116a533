package scale

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// replayReady adds, after the pod's first Running event, one like it whose
// container runs since a later time: what kwok's pod-ready played again on a
// stale state writes.
func replayReady(t *testing.T, rec *evidence.Record, pod string) {
	t.Helper()
	for i, e := range rec.PodEvents {
		if e.Name != pod || !isRunning(e) {
			continue
		}
		u := e
		u.Containers = slices.Clone(e.Containers)
		later := u.Containers[0].StartedAt.Add(20 * time.Second)
		u.Containers[0].StartedAt = &later
		u.ResourceVersion = e.ResourceVersion + "1"
		u.ObservedAt = e.ObservedAt.Add(time.Millisecond)
		rec.PodEvents = slices.Insert(rec.PodEvents, i+1, u)
		return
	}
	t.Fatalf("no Running event of %s", pod)
}

func TestReplaysNoneInTheRecordedRun(t *testing.T) {
	fig := FiguresOf(load(t))
	if fig.Replays.Pods != 0 || fig.Replays.RefusedKnown {
		t.Errorf("replays in the recorded run (no audit log): %+v", fig.Replays)
	}
	if !slices.ContainsFunc(fig.Rows(), func(r []string) bool {
		return strings.HasPrefix(r[0], "kwok playing stages on stale pod states") && strings.HasPrefix(r[1], "no running container's startedAt changed")
	}) {
		t.Errorf("no row saying there were no replays: %v", fig.Rows())
	}
	if rec := load(t); strings.Contains(Answer(rec, Claims(rec)), "no kubelet does") {
		t.Error("the answer speaks of replays in a run without any")
	}
}

// A pod whose running container gets a new startedAt, and a refused write
// of kwok's, are counted and named; others' refused writes and kwok's
// accepted ones are not.
func TestReplaysCounted(t *testing.T) {
	rec := load(t)
	pod := plainPod(t, rec)
	replayReady(t, rec, pod)
	fig := FiguresOf(rec)
	if r := fig.Replays; r.Pods != 1 || r.Pod != pod || r.First.IsZero() {
		t.Fatalf("replays %+v, want 1 (%s)", r, pod)
	}
	if s := fig.Replays.String(); !strings.Contains(s, "1 pods' running container got a new startedAt") || !strings.Contains(s, pod) || !strings.Contains(s, "not known (no audit log)") {
		t.Errorf("row: %s", s)
	}
	kwokPatch := func(code int, agent string) evidence.AuditEvent {
		return evidence.AuditEvent{User: "system:serviceaccount:kube-system:kwok-controller", UserAgent: agent,
			Verb: "patch", Resource: "pods", Subresource: "status", Namespace: rec.Namespace, Name: pod, Code: code, ReceivedAt: rec.PodEvents[0].ObservedAt}
	}
	kwokDelete := kwokPatch(404, "kwok/v0.8.0 (linux/amd64)")
	kwokDelete.Verb, kwokDelete.Subresource = "delete", ""
	rec.Audit = append(rec.Audit, kwokPatch(422, "kwok/v0.8.0 (linux/amd64)"), kwokPatch(200, "kwok/v0.8.0 (linux/amd64)"), kwokPatch(422, "kubectl/v1.37.2"), kwokDelete)
	fig = FiguresOf(rec)
	if r := fig.Replays; r.Refused != 2 || r.DeletesOfGone != 1 || !r.RefusedKnown {
		t.Errorf("refused %d, %d of them DELETEs of a pod gone (known %t), want kwok's two, one a DELETE", r.Refused, r.DeletesOfGone, r.RefusedKnown)
	}
	if s := fig.Replays.String(); !strings.Contains(s, "refused 2 of kwok's writes on the run's pods: 1 DELETEs of a pod already gone") || !strings.Contains(s, "1 others") {
		t.Errorf("row: %s", s)
	}
	if a := Answer(rec, Claims(rec)); !strings.Contains(a, "kwok did what no kubelet does: 1 pods' running container") {
		t.Errorf("the answer does not say kwok replayed: %s", a)
	}
}
