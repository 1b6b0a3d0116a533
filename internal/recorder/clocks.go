package recorder

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// clockSamples is how many `date` readings a node's offset is bounded from:
// the tightest decides, so a few absorb one slow exec.
const clockSamples = 3

// ProbeClock bounds the node's clock against the host's: `date +%s.%N` on
// the node between two host readings, clockSamples times, through the same
// exec seam as crictl. The offset is kept in the record.
func (r *Recorder) ProbeClock(ctx context.Context, node Node) (evidence.ClockOffset, error) {
	if err := unreachable(node, "", ""); err != nil {
		return evidence.ClockOffset{}, err
	}
	var probes []evidence.ClockProbe
	for range clockSamples {
		before := now()
		out := run(ctx, node, "date", "+%s.%N")
		if out.err != nil {
			return evidence.ClockOffset{}, fmt.Errorf("reading the clock of %s: %w", node, out.err)
		}
		remote, err := parseEpoch(strings.TrimSpace(string(out.stdout)))
		if err != nil {
			return evidence.ClockOffset{}, fmt.Errorf("reading the clock of %s: %w", node, err)
		}
		probes = append(probes, evidence.ClockProbe{Before: before, After: out.at, Remote: remote})
	}
	o, _ := evidence.OffsetFrom(evidence.ClockNode(node.String()), "`date +%s.%N` on the node between two host readings", probes)
	r.mu.Lock()
	r.rec.Clocks = append(r.rec.Clocks, o)
	r.mu.Unlock()
	return o, nil
}

// parseEpoch reads date's "<seconds>.<nanoseconds>".
func parseEpoch(s string) (time.Time, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 9 {
		return time.Time{}, fmt.Errorf("date printed %q, not <seconds>.<nanoseconds>", s)
	}
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	nanos, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("date printed %q, not <seconds>.<nanoseconds>", s)
	}
	return time.Unix(secs, nanos).UTC(), nil
}
