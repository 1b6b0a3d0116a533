package evidence

import (
	"fmt"
	"time"
)

// ClockOffset is how far another machine's clock reads from the host's (the
// machine termlab runs on): remote − host, within ±Uncertainty. Timings that
// subtract times of two clocks (the node's crictl and workload log, the API
// server's audit stamps, the host's own) are only as exact as these.
type ClockOffset struct {
	// Clock names the clock: ClockAPIServer, or ClockNode(name).
	Clock       string  `json:"clock"`
	Offset      float64 `json:"offset_seconds"`
	Uncertainty float64 `json:"uncertainty_seconds"`
	Samples     int     `json:"samples"`
	// How says what was measured.
	How string `json:"how"`
	// Inconsistent: the samples' intervals do not overlap (the clock moved
	// between them, or a sample is not what it seems); Offset and
	// Uncertainty then span them all.
	Inconsistent bool `json:"inconsistent,omitempty"`
}

// ClockAPIServer is the API server's clock (its audit stamps).
const ClockAPIServer = "apiserver"

// ClockNode is a node's clock (crictl's times, the workload's log).
func ClockNode(name string) string { return "node/" + name }

func (o ClockOffset) String() string {
	s := fmt.Sprintf("%s %+.3f s ± %.3f s (%d samples: %s)", o.Clock, o.Offset, o.Uncertainty, o.Samples, o.How)
	if o.Inconsistent {
		s += "; the samples disagree"
	}
	return s
}

// ClockProbe is one reading of a remote clock taken between two readings of
// the host's: the remote read Remote at some moment within [Before, After].
type ClockProbe struct {
	Before, After, Remote time.Time
}

// OffsetFrom bounds the remote clock's offset by intersecting what each
// probe allows, [Remote−After, Remote−Before]: the tightest probe decides.
// It reports false without probes.
func OffsetFrom(clock, how string, probes []ClockProbe) (ClockOffset, bool) {
	if len(probes) == 0 {
		return ClockOffset{}, false
	}
	var lo, hi, anyLo, anyHi time.Duration
	for i, p := range probes {
		l, h := p.Remote.Sub(p.After), p.Remote.Sub(p.Before)
		if i == 0 {
			lo, hi, anyLo, anyHi = l, h, l, h
			continue
		}
		lo, hi = max(lo, l), min(hi, h)
		anyLo, anyHi = min(anyLo, l), max(anyHi, h)
	}
	o := ClockOffset{Clock: clock, Samples: len(probes), How: how}
	if lo > hi {
		o.Inconsistent = true
		lo, hi = anyLo, anyHi
	}
	o.Offset = roundSeconds((lo + hi) / 2)
	o.Uncertainty = roundSeconds((hi - lo) / 2)
	return o, true
}

func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Second)
}

// maxAuditProbes bounds the work (each match scans the audit log): the
// tightest of this many requests is tight enough, and lab:scale sends
// thousands.
const maxAuditProbes = 50

// APIServerOffset measures the API server's clock from the record itself:
// each action of termlab's that the audit log matched was received by the
// server (its clock) while termlab's request was in flight (the host's).
func (r *Record) APIServerOffset() (ClockOffset, bool) {
	var probes []ClockProbe
	for _, a := range r.Actions {
		if len(probes) == maxAuditProbes {
			break
		}
		if a.FinishedAt.IsZero() {
			continue
		}
		e, ok := r.AuditFor(a)
		// A script's or a person's request is recorded from the audit log
		// itself (its times are the server's): it measures nothing.
		if !ok || a.StartedAt.Equal(e.ReceivedAt) {
			continue
		}
		probes = append(probes, ClockProbe{Before: a.StartedAt, After: a.FinishedAt, Remote: e.ReceivedAt})
	}
	return OffsetFrom(ClockAPIServer, "requestReceivedTimestamp of termlab's own requests in the audit log, against their send and answer times", probes)
}
