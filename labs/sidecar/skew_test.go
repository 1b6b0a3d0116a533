package sidecar

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// nodeAhead moves every time the node read (crictl's, the workloads' log
// lines) by d: the recorded run on a node whose clock reads d ahead.
func nodeAhead(rec *evidence.Record, d time.Duration) {
	shift := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		s := t.Add(d)
		return &s
	}
	for i := range rec.Containers {
		o := &rec.Containers[i]
		o.StartedAt, o.FinishedAt = shift(o.StartedAt), shift(o.FinishedAt)
		if o.Log != nil {
			l := *o.Log
			l.SignalAt, l.ExitAt, l.LastBeatAt = shift(l.SignalAt), shift(l.ExitAt), shift(l.LastBeatAt)
			o.Log = &l
		}
	}
}

// The recorded run on a node reached through a node pod, its clock 2 s
// ahead or behind: measured, every claim decides as on the host's clock
// (uncorrected, a node 2 s behind has the main container killed before its
// grace period ended); not measured, the claims that time a container from
// the delete or from a Killing event are not checked, naming the clock.
func TestANodeTwoSecondsOff(t *testing.T) {
	node := shutdownOf(load(t), podOverrun).Node
	if node == "" {
		t.Fatal("the recorded run names no node")
	}
	for _, off := range []time.Duration{2 * time.Second, -2 * time.Second} {
		skewed := func(clocks ...evidence.ClockOffset) *evidence.Record {
			rec := load(t)
			rec.NodeAccess, rec.Clocks = evidence.NodeAccessPod, clocks
			nodeAhead(rec, off)
			return rec
		}
		labtest.AllPass(t, Claims(skewed(evidence.ClockOffset{Clock: evidence.ClockNode(node), Offset: off.Seconds(), Uncertainty: 0.002, Samples: 5})), 6)

		byID := labtest.ByID(Claims(skewed()))
		for _, id := range []string{"sidecar.prestop_with_main", "sidecar.overrun_main_killed_at_grace_end"} {
			c := byID[id]
			if c.Verdict != claims.NotChecked || !strings.Contains(c.Reason, "node/"+node) {
				t.Errorf("%s with the node's clock %v off, not measured: %s (%s)", id, off, c.Verdict, c.Reason)
			}
		}
	}
}
