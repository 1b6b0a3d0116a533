package recorder

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/ledger"
)

// A ledger whose clock reads 2 s ahead of the host's is measured 2 s ahead,
// within the probes' round trips.
func TestLedgerProbesMeasureTheLedgersClock(t *testing.T) {
	probes, err := ledgerProbes(context.Background(), func(context.Context) ([]byte, error) {
		return []byte(ledger.TimeBody(time.Now().Add(2 * time.Second))), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != ledgerClockSamples {
		t.Fatalf("%d probes, want %d", len(probes), ledgerClockSamples)
	}
	o, _ := evidence.OffsetFrom(evidence.ClockLedger("ledger"), "test", probes)
	if math.Abs(o.Offset-2) > o.Uncertainty+0.001 || o.Uncertainty > 0.1 || o.Inconsistent {
		t.Fatalf("offset %s, want +2 s", o)
	}
}

// An answer that is not the ledger's clock (a ledger image from before
// ledger.TimePath answers its whole log there) measures nothing.
func TestLedgerProbesRefuseWhatIsNotAClock(t *testing.T) {
	_, err := ledgerProbes(context.Background(), func(context.Context) ([]byte, error) {
		return []byte(`{"received_at":"2026-12-07T18:00:00Z","pod":"ident-0"}` + "\n"), nil
	})
	if err == nil {
		t.Fatal("a ledger line was taken for the ledger's clock")
	}
}
