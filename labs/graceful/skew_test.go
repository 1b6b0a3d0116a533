package graceful

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/workloadlog"
)

// The recorded run's nodes: the client ran on one, every victim on the other.
const (
	clientsNode = "termlab-worker2"
	serversNode = "termlab-worker"
)

// nodeOff moves every time the node's clock read by off: the client's
// requests (its own log) when the client ran there, the workloads' log
// lines, crictl's and containerd's times of its containers. The record is
// then a run reached through node pods (its machines not the host's), with
// clocks the offsets the run measured.
func nodeOff(t *testing.T, rec *evidence.Record, node string, off time.Duration, clocks ...evidence.ClockOffset) *evidence.Record {
	t.Helper()
	if clientNode(rec) != clientsNode || byName(factsOf(rec), "exit-now").ServerNode != serversNode {
		t.Fatalf("the recorded run's client ran on %s, exit-now on %s", clientNode(rec), byName(factsOf(rec), "exit-now").ServerNode)
	}
	rec.NodeAccess, rec.Clocks = evidence.NodeAccessPod, clocks
	shift := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		s := t.Add(off)
		return &s
	}
	if node == clientsNode {
		for i := range rec.Requests {
			q := &rec.Requests[i]
			q.Start, q.End = q.Start.Add(off), q.End.Add(off)
		}
	}
	for i := range rec.Containers {
		o := &rec.Containers[i]
		if o.Node != node {
			continue
		}
		o.StartedAt, o.FinishedAt = shift(o.StartedAt), shift(o.FinishedAt)
		if o.Log != nil {
			l := *o.Log
			l.LastBeatAt, l.SignalAt, l.ExitAt = shift(l.LastBeatAt), shift(l.SignalAt), shift(l.ExitAt)
			l.PreStopStartAt, l.PreStopEndAt = shift(l.PreStopStartAt), shift(l.PreStopEndAt)
			o.Log = &l
		}
	}
	for i := range rec.TaskExits {
		if e := &rec.TaskExits[i]; e.Node == node {
			e.ExitedAt = e.ExitedAt.Add(off)
		}
	}
	return rec
}

// measured is a node's clock as the recorder's probe records it.
func measured(node string, off time.Duration) evidence.ClockOffset {
	return evidence.ClockOffset{Clock: evidence.ClockNode(node), Offset: off.Seconds(), Uncertainty: 0.002, Samples: 5}
}

// The recorded run with the client's node, or the victims' node, 2 s ahead
// or behind: measured, every claim decides as recorded and every failed
// request keeps its window (uncorrected, a client 2 s behind has exit-now's
// in-flight requests fail before the process stopped accepting).
func TestANodeTwoSecondsOff(t *testing.T) {
	want := map[evidence.Request]string{}
	plain := load(t)
	f := byName(factsOf(plain), "exit-now")
	for _, q := range f.Failed() {
		want[q] = f.Window(q)
	}
	for _, node := range []string{clientsNode, serversNode} {
		other := map[string]string{clientsNode: serversNode, serversNode: clientsNode}[node]
		for _, off := range []time.Duration{2 * time.Second, -2 * time.Second} {
			rec := nodeOff(t, load(t), node, off, measured(node, off), measured(other, 0))
			labtest.AllPass(t, Claims(rec), 9)
			g := byName(factsOf(rec), "exit-now")
			for i, q := range g.Failed() {
				if orig := f.Failed()[i]; g.Window(q) != want[orig] {
					t.Errorf("%s %v off: request seq=%d is %q, recorded %q", node, off, q.Seq, g.Window(q), want[orig])
				}
			}
		}
	}
}

// Not measured, on a cluster reached through node pods, the claims that
// put the client's requests against the process's stop and the rules' reads
// are not checked, naming the clock; those that need it not still decide.
func TestAnUnmeasuredNodeClockLeavesTheWindowsNotChecked(t *testing.T) {
	rec := nodeOff(t, load(t), clientsNode, -2*time.Second, measured(serversNode, 0))
	byID := labtest.ByID(Claims(rec))
	open := []string{idNoPreStopFails, idPreStopNoFailures, idFailuresAttributed}
	for id, c := range byID {
		switch {
		case slices.Contains(open, id) && (c.Verdict != claims.NotChecked || !strings.Contains(c.Reason, "node/"+clientsNode)):
			t.Errorf("%s with the client's clock not measured: %s (%s)", id, c.Verdict, c.Reason)
		case !slices.Contains(open, id) && !c.Passed():
			t.Errorf("%s needs no client clock: %s (%s)", id, c.Verdict, c.Reason)
		}
	}
}

// plantFailure makes the exit-now request that started nearest at
// fromStop from the process's stop (both by the host's clock, in the
// recorded run) fail with outcome, answered at once.
func plantFailure(t *testing.T, rec *evidence.Record, fromStop time.Duration, outcome string) evidence.Request {
	t.Helper()
	f := byName(factsOf(rec), "exit-now")
	stopped, _ := f.StoppedAccepting()
	at := stopped.Add(fromStop)
	best := -1
	for i, q := range rec.Requests {
		if q.Target == "exit-now" && (best < 0 || q.Start.Sub(at).Abs() < rec.Requests[best].Start.Sub(at).Abs()) {
			best = i
		}
	}
	q := &rec.Requests[best]
	if q.Start.Sub(at).Abs() > 100*time.Millisecond {
		t.Fatalf("the recorded run has no exit-now request %v from its stop", fromStop)
	}
	q.Outcome, q.Backend, q.End = outcome, "", q.Start.Add(time.Millisecond)
	return *q
}

// A failed request is attributed by the host's clock, whichever way the
// client's node's clock is off. One that failed 1.5 s before the process
// stopped accepting is not the deletion's: it fails the claims with the
// client 2 s ahead, though its raw time lies after the stop. One that failed
// 0.6 s after the stop, before the rules dropped the pod, is the deletion's:
// with the client 2 s behind the claims pass, though its raw time lies before
// the stop.
func TestAFailedRequestAcrossTheClientsClock(t *testing.T) {
	for _, tc := range []struct {
		off, fromStop time.Duration
		window        string
	}{
		{2 * time.Second, -1500 * time.Millisecond, windowBefore},
		{-2 * time.Second, 600 * time.Millisecond, windowUnreachable},
	} {
		rec := load(t)
		plantFailure(t, rec, tc.fromStop, workloadlog.OutcomeRefused)
		nodeOff(t, rec, clientsNode, tc.off, measured(clientsNode, tc.off), measured(serversNode, 0))
		f := byName(factsOf(rec), "exit-now")
		found := false
		for _, q := range f.Failed() {
			if w := f.Window(q); w == tc.window {
				found = true
			}
		}
		if !found {
			t.Errorf("client %v off, a failure %v from the stop: no failed request is %q: %v", tc.off, tc.fromStop, tc.window, f.Windows())
		}
		if explained(tc.window) {
			labtest.AllPass(t, Claims(rec), 9)
		} else {
			labtest.OnlyFail(t, Claims(rec), idNoPreStopFails, idFailuresAttributed)
		}
	}
}

// The victims' node 2 s behind, measured: native-sleep's SIGTERM came 10 s
// after the delete, not 8 s. Read 2 s ahead instead while the node is not
// off, it came before the preStop sleep could end: the claim fails.
func TestTheSigtermAcrossTheServersClock(t *testing.T) {
	rec := nodeOff(t, load(t), serversNode, 0, measured(serversNode, 2*time.Second), measured(clientsNode, 0))
	c := labtest.ByID(Claims(rec))[idSigtermAfterPreStop]
	if c.Verdict != claims.Fail || !strings.Contains(c.Reason, "native-sleep: SIGTERM") {
		t.Fatalf("native-sleep's SIGTERM read 2 s early: %s (%s)", c.Verdict, c.Reason)
	}
}

// The measured clocks' uncertainty, not a fixed slack, decides how near the
// stop a failure may lie and still count as before it: refused 0.3 s before
// the process stopped accepting, by clocks measured to ± 2 ms it is not the
// deletion's; by a client's clock measured only to ± 0.5 s it may be, and
// no claim is failed on it.
func TestTheClocksUncertaintyDecidesNearTheStop(t *testing.T) {
	for _, tc := range []struct {
		uncertainty float64
		window      string
	}{{0.002, windowBefore}, {0.5, windowUnreachable}} {
		rec := load(t)
		planted := plantFailure(t, rec, -300*time.Millisecond, workloadlog.OutcomeRefused)
		client := measured(clientsNode, 0)
		client.Uncertainty = tc.uncertainty
		nodeOff(t, rec, clientsNode, 0, client, measured(serversNode, 0))
		if w := byName(factsOf(rec), "exit-now").Window(planted); w != tc.window {
			t.Errorf("± %.3f s: the failure 0.3 s before the stop is %q, want %q", tc.uncertainty, w, tc.window)
		}
		if explained(tc.window) {
			for _, id := range []string{idNoPreStopFails, idFailuresAttributed} {
				if c := labtest.ByID(Claims(rec))[id]; c.Verdict == claims.Fail {
					t.Errorf("± %.3f s: %s failed: %s", tc.uncertainty, id, c.Reason)
				}
			}
		} else {
			labtest.OnlyFail(t, Claims(rec), idNoPreStopFails, idFailuresAttributed)
		}
	}
}

// A timeout that another Service's timeout accompanies is a stall of the
// client's node only where the deletion does not explain it: one that
// failed before the process stopped accepting is the stall's; one in the
// window between the stop and the drop stays the deletion's.
func TestAStallExplainsOnlyWhatTheDeletionDoesNot(t *testing.T) {
	for _, tc := range []struct {
		fromStop time.Duration
		window   string
	}{{-1500 * time.Millisecond, windowStall}, {600 * time.Millisecond, windowUnreachable}} {
		rec := load(t)
		q := plantFailure(t, rec, tc.fromStop, workloadlog.OutcomeTimeout)
		for i, o := range rec.Requests {
			if o.Target == "ignore-term" && o.Start.Sub(q.Start).Abs() <= stallSpan {
				rec.Requests[i].Outcome, rec.Requests[i].Backend = workloadlog.OutcomeTimeout, ""
				break
			}
		}
		if w := byName(factsOf(rec), "exit-now").Window(q); w != tc.window {
			t.Errorf("a timeout %v from the stop with another Service's: %q, want %q", tc.fromStop, w, tc.window)
		}
	}
}
