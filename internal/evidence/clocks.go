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

// ClockLedger is the clock of a lab's ledger served by the Service (its
// writes' received_at stamps), as ledger.TimePath reads it.
func ClockLedger(service string) string { return "ledger/" + service }

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

// maxAuditProbes bounds the work: the tightest of this many requests is
// tight enough, and lab:scale sends thousands.
const maxAuditProbes = 50

// APIServerOffset measures the API server's clock from the record itself:
// each of termlab's own requests the audit log holds was received by the
// server (its clock) while termlab's request was in flight (the host's).
// The requests are matched by what they asked, not by when: a request is
// taken only where termlab sent one request of its verb on its object and
// the audit log holds one such request by a person or script, both
// answered 2xx. So a server clock seconds off the host's is measured, not
// missed (AuditFor's matching by time then uses the offset).
func (r *Record) APIServerOffset() (ClockOffset, bool) {
	sent := map[string]int{}
	for _, a := range r.Actions {
		if k, ok := requestKey(a); ok {
			sent[k]++
		}
	}
	var probes []ClockProbe
	for _, a := range r.Actions {
		if len(probes) == maxAuditProbes {
			break
		}
		k, ok := requestKey(a)
		if !ok || sent[k] != 1 || !a.Succeeded() || a.fromAudit() {
			continue
		}
		verb, resource := actionVerb(a)
		got := r.personRequests(verb, resource, a.Target)
		// A script's or a person's request is recorded from the audit log
		// itself (its times are the server's): it measures nothing.
		if len(got) != 1 || !got[0].Succeeded() || a.StartedAt.Equal(got[0].ReceivedAt) {
			continue
		}
		probes = append(probes, ClockProbe{Before: a.StartedAt, After: a.FinishedAt, Remote: got[0].ReceivedAt})
	}
	return OffsetFrom(ClockAPIServer, "requestReceivedTimestamp of termlab's own requests in the audit log (each the only one of its verb on its object), against their send and answer times", probes)
}

// requestKey names an API action's request by verb and object.
func requestKey(a Action) (string, bool) {
	verb, resource := actionVerb(a)
	if verb == "" {
		return "", false
	}
	return verb + " " + resource + " " + a.Target, true
}

// ClockHost is the clock of the machine termlab runs on: the recorder's
// observation times and termlab's own requests.
const ClockHost = "host"

// Stamp is a time as one clock read it.
type Stamp struct {
	Time  time.Time
	Clock string
}

// OnHost is a time read on the host's clock.
func OnHost(t time.Time) Stamp { return Stamp{Time: t, Clock: ClockHost} }

// OnNode is a time read on a node's clock (crictl's times, the workload's
// log, containerd's events).
func OnNode(node string, t time.Time) Stamp { return Stamp{Time: t, Clock: ClockNode(node)} }

// ActionStamp is when an action is timed from, on the clock that read it.
// termlab's own request: its send, on the host's clock, the clock of
// everything the recorder observes after it. A time from the send is exact
// (no offset between two clocks to allow for) and never shorter than the
// time from the API server's receipt, which comes later: a bound the time
// from the send meets is met. (Timing from the receipt instead puts the
// API server's offset, measured only to tens of milliseconds here, into
// every such interval, and a claim whose interval lands that near a bound
// could not be decided.) A script's or a person's request, recorded from
// the audit log: the API server's receipt, on its clock.
func (r *Record) ActionStamp(a Action) Stamp {
	if a.fromAudit() {
		return Stamp{Time: a.StartedAt, Clock: ClockAPIServer}
	}
	return OnHost(a.StartedAt)
}

// Interval is the time between two stamps on the host's clock: each end is
// corrected by its clock's measured offset, and the result is exact only to
// ±Uncertainty (the two offsets' uncertainties added; zero on one clock).
type Interval struct {
	D           time.Duration
	Uncertainty time.Duration
	// Correction is what the offsets changed: D minus the raw difference.
	Correction time.Duration
	// Clocks are the offsets used, for a reason that names them.
	Clocks []ClockOffset
	// Unmeasured are the clocks of its ends the run did not measure and
	// the record cannot take as the host's (SharesHostClock): D is then
	// the raw difference, of unknown error.
	Unmeasured []string
}

// Seconds is D in seconds, to the millisecond.
func (iv Interval) Seconds() float64 { return roundSeconds(iv.D.Round(time.Millisecond)) }

// Between is to − from on the host's clock. A clock the run did not measure
// is taken as the host's where the record says it is (SharesHostClock);
// elsewhere it is named in Unmeasured.
func (r *Record) Between(from, to Stamp) Interval {
	iv := Interval{D: to.Time.Sub(from.Time)}
	if from.Clock == to.Clock {
		return iv
	}
	for _, s := range []struct {
		clock string
		sign  time.Duration
	}{{to.Clock, -1}, {from.Clock, 1}} {
		o, ok := r.ClockOffsetOf(s.clock)
		if !ok {
			if s.clock != ClockHost && !r.SharesHostClock() {
				iv.Unmeasured = append(iv.Unmeasured, s.clock)
			}
			continue
		}
		iv.Correction += s.sign * seconds(o.Offset)
		iv.Uncertainty += seconds(o.Uncertainty)
		iv.Clocks = append(iv.Clocks, o)
	}
	iv.D += iv.Correction
	return iv
}

// SharesHostClock reports whether the run's other clocks are the host's own
// kernel clock: termlab's own kind cluster, reached by docker exec (its
// nodes, the API server among them, are containers on the host), and a
// record from before NodeAccess was recorded (all were). A cluster reached
// through a kubeconfig (a node pod, or no node access) runs on machines of
// its own: a clock there not measured is not known.
func (r *Record) SharesHostClock() bool {
	return r.NodeAccess == "" || r.NodeAccess == NodeAccessDocker
}

// ClockOffsetOf is the named clock's measured offset; the host's is zero.
func (r *Record) ClockOffsetOf(clock string) (ClockOffset, bool) {
	if clock == ClockHost {
		return ClockOffset{}, false
	}
	for _, o := range r.Clocks {
		if o.Clock == clock {
			return o, true
		}
	}
	if clock == ClockAPIServer { // measured from the record, while it is decided
		return r.APIServerOffset()
	}
	return ClockOffset{}, false
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
