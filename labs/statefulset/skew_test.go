package statefulset

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/ledger"
)

// ledgerOff is the recorded run on a cluster reached through node pods (its
// machines not the host's) whose ledger's clock reads off from the host's:
// every write's stamp moved by off. clocks are the offsets the run measured;
// the workers' own clocks are the host's, measured as such.
func ledgerOff(t *testing.T, off time.Duration, clocks ...evidence.ClockOffset) *evidence.Record {
	rec := load(t)
	rec.NodeAccess = evidence.NodeAccessPod
	rec.Clocks = append([]evidence.ClockOffset{
		{Clock: evidence.ClockNode("termlab-worker"), Uncertainty: 0.002, Samples: 5},
		{Clock: evidence.ClockNode("termlab-worker2"), Uncertainty: 0.002, Samples: 5},
	}, clocks...)
	entries := ledgerEntries(rec)
	for i := range *entries {
		(*entries)[i].ReceivedAt = (*entries)[i].ReceivedAt.Add(off)
	}
	return rec
}

// measuredLedger is the ledger's clock as recorder.ProbeLedgerClock records it.
func measuredLedger(off time.Duration) evidence.ClockOffset {
	return evidence.ClockOffset{Clock: evidence.ClockLedger(ledgerName), Offset: off.Seconds(), Uncertainty: 0.005, Samples: 5}
}

// The ledger stamps writes with its own clock (the control plane's). On a
// cluster reached through node pods, 2 s ahead or behind and measured by
// asking the ledger itself, every claim decides as recorded, reading the
// writes on the ledger's clock.
func TestTheLedgersClockTwoSecondsOffMeasured(t *testing.T) {
	for _, off := range []time.Duration{2 * time.Second, -2 * time.Second} {
		cs := Claims(ledgerOff(t, off, measuredLedger(off)))
		labtest.AllPass(t, cs, 9)
		if got := labtest.ByID(cs)["statefulset.one_writer_again"].Observed["ledger_clock"]; got != evidence.ClockLedger(ledgerName) {
			t.Errorf("ledger %v off: the writes were read on %v, not the ledger's measured clock", off, got)
		}
	}
}

// Not measured, neither by asking the ledger nor by a node pod on its node,
// the claims that put the ledger's stamps against the host's times are not
// checked, naming the clock, where the old code passed them on raw times.
// The control plane's clock measured (a node pod there) serves as well.
func TestTheLedgersClockNotMeasured(t *testing.T) {
	byID := labtest.ByID(Claims(ledgerOff(t, -2*time.Second)))
	for _, id := range []string{"statefulset.one_writer_again", "statefulset.no_replacement_while_terminating", "statefulset.split_brain"} {
		if c := byID[id]; c.Verdict != claims.NotChecked || !strings.Contains(c.Reason, "node/termlab-control-plane") {
			t.Errorf("%s, not measured: %s (%s)", id, c.Verdict, c.Reason)
		}
	}
	node := evidence.ClockOffset{Clock: evidence.ClockNode("termlab-control-plane"), Offset: -2, Uncertainty: 0.002, Samples: 5}
	labtest.AllPass(t, Claims(ledgerOff(t, -2*time.Second, node)), 9)
}

// On termlab's own kind cluster the ledger's node is a container on the
// host: its clock is the host's, exact, whatever a probe through the
// service proxy measured (its round trips' uncertainty would only blur it).
func TestTheLedgerOnTheHostsKernelIsExact(t *testing.T) {
	rec := load(t)
	rec.NodeAccess = evidence.NodeAccessDocker
	rec.Clocks = append(rec.Clocks, evidence.ClockOffset{Clock: evidence.ClockLedger(ledgerName), Uncertainty: 30, Samples: 5})
	cs := Claims(rec)
	labtest.AllPass(t, cs, 9)
	if got := labtest.ByID(cs)["statefulset.one_writer_again"].Observed["ledger_clock"]; got != evidence.ClockNode("termlab-control-plane") {
		t.Errorf("the writes were read on %v, want the control plane's (the host's) clock", got)
	}
}

// A second writer inside the window from the ordinary delete to the force
// delete, by the host's clock, fails the claim whichever way the ledger's
// clock is off; the same write outside the window does not, though its raw
// stamp, uncorrected, lies on the other side of the force delete.
func TestAWriterInTheWindowAcrossTheLedgersClock(t *testing.T) {
	const id = "statefulset.no_replacement_while_terminating"
	for _, tc := range []struct {
		off, fromForce time.Duration // the write, on the host's clock, from the force delete
		want           claims.Verdict
	}{
		{off: 2 * time.Second, fromForce: -time.Second, want: claims.Fail},  // raw: 1 s after the force delete
		{off: -2 * time.Second, fromForce: -time.Second, want: claims.Fail}, // raw: 3 s before it
		{off: -2 * time.Second, fromForce: time.Second, want: claims.Pass},  // raw: 1 s before it
		{off: 2 * time.Second, fromForce: time.Second, want: claims.Pass},   // raw: 3 s after it
	} {
		rec := ledgerOff(t, tc.off, measuredLedger(tc.off))
		force, _ := rec.Action(evidence.ActionForceDelete, pod)
		_, replacement := incarnations(t, rec)
		entries := ledgerEntries(rec)
		at := force.StartedAt.Add(tc.fromForce + tc.off)
		stray := ledger.Entry{ReceivedAt: at, Write: ledger.Write{Pod: pod, UID: replacement, Node: "termlab-worker", Seq: 1}}
		i := 0
		for i < len(*entries) && (*entries)[i].ReceivedAt.Before(at) {
			i++
		}
		*entries = append((*entries)[:i], append([]ledger.Entry{stray}, (*entries)[i:]...)...)
		if c := labtest.ByID(Claims(rec))[id]; c.Verdict != tc.want {
			t.Errorf("ledger %v off, a replacement's write %v from the force delete: %s (%s), want %s", tc.off, tc.fromForce, c.Verdict, c.Reason, tc.want)
		}
	}
}

// The original's last write against the kubelet's start: stamped 2.174 s
// after it, by a ledger's clock measured 3 s ahead, it came 0.826 s before
// it by the host's: the original had stopped writing already.
func TestTheOriginalsLastWriteAcrossTheLedgersClock(t *testing.T) {
	const id = "statefulset.one_writer_again"
	rec := ledgerOff(t, 0, measuredLedger(3*time.Second))
	if c := labtest.ByID(Claims(rec))[id]; c.Verdict != claims.Fail || !strings.Contains(c.Reason, "826ms before the start-kubelet: it had stopped writing already") {
		t.Fatalf("the original's last write, read 3 s ahead: %s (%s)", c.Verdict, c.Reason)
	}
}
