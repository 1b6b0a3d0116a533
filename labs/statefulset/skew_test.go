package statefulset

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// The ledger stamps writes with its own node's clock (the control plane's).
// Moved 2 s behind and measured, the claim decides as recorded; not
// measured on a cluster reached through a node pod (termlab probes only the
// workers' clocks), it is not checked, where the old code passed it on the
// raw times.
func TestTheLedgersClockTwoSecondsBehind(t *testing.T) {
	const id = "statefulset.one_writer_again"
	skewed := func(clocks ...evidence.ClockOffset) *evidence.Record {
		rec := load(t)
		rec.NodeAccess, rec.Clocks = evidence.NodeAccessPod, clocks
		entries := ledgerEntries(rec)
		for i := range *entries {
			(*entries)[i].ReceivedAt = (*entries)[i].ReceivedAt.Add(-2 * time.Second)
		}
		return rec
	}
	behind := evidence.ClockOffset{Clock: evidence.ClockNode("termlab-control-plane"), Offset: -2, Uncertainty: 0.002, Samples: 5}
	if c := labtest.ByID(Claims(skewed(behind)))[id]; c.Verdict != claims.Pass {
		t.Fatalf("measured: %s (%s)", c.Verdict, c.Reason)
	}
	if c := labtest.ByID(Claims(skewed()))[id]; c.Verdict != claims.NotChecked || !strings.Contains(c.Reason, "node/termlab-control-plane") {
		t.Fatalf("not measured: %s (%s)", c.Verdict, c.Reason)
	}
}
