package scale

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

// ClaimPace: the scheduler's client limit sets the pace at which the run's
// pods are bound under the default limits, and raising it raises that pace.
const ClaimPace = "scale.bind_pace_follows_scheduler_limit"

// Who paces a phase is read from the audit log: each sender's writes on the
// run's pods, in its busiest paceWindow, against its client's limit.
const (
	// paceWindow is long enough that a token bucket's burst adds little to
	// its rate (the scheduler's 100 over 30 s: 3.3/s on 50/s), and shorter
	// than the binding of the sizes the claim is made for (paceMinPods at
	// 50/s: 40 s).
	paceWindow = 30 * time.Second
	// atLimit is how near its limit a sender's busiest window must be to
	// count as held by it: requests reach the API server a little unevenly
	// (queued behind others), so a client sending at its limit shows
	// slightly under it.
	atLimit = 0.9
	// paceSlack is how far over qps + burst/window the audit log may show a
	// client at its limit: the server's receipt times bunch requests the
	// client spaced.
	paceSlack = 1.05
	// paceMinPods is the size from which the pace claim is made: below it
	// the scheduler's burst, not its rate, binds a good part of the pods
	// (the quick size's 300 bind in a few seconds), and no window of
	// paceWindow is spent binding.
	paceMinPods = 2000
)

// Pacer is one sender of writes on the run's pods (create, update, patch,
// delete of a pod or its subresources: binding, status), from the audit log.
type Pacer struct {
	Sender    string
	UserAgent string
	Requests  int
	// Busiest is its requests per second in its busiest paceWindow.
	Busiest float64
	// Limit is its client's limit where the run knows it (the scheduler's
	// and the controller-manager's from their command lines, termlab's
	// own); kwok's is not known.
	Limit      cluster.ClientLimit
	LimitKnown bool
	// AtLimit: its busiest window reached atLimit of its limit's QPS.
	AtLimit bool
	// InFlight is how many of its requests the API server was working at
	// once (received, not yet answered), over the time it had any.
	InFlight InFlight
}

// InFlight sums up a sender's requests in flight over the time it had any.
type InFlight struct {
	Median, Max int
	// Seconds it had any in flight.
	Seconds float64
	// at is how long (ns) it had each number in flight.
	at map[int]int64
}

// ShareAtLeast is the share of Seconds with n or more in flight.
func (f InFlight) ShareAtLeast(n int) float64 {
	var at, all int64
	for k, d := range f.at {
		all += d
		if k >= n {
			at += d
		}
	}
	if all == 0 {
		return 0
	}
	return float64(at) / float64(all)
}

// inFlight sweeps the requests' receipt and answer times (UnixNano).
func inFlight(received, answered []int64) InFlight {
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(received))
	for i := range received {
		edges = append(edges, edge{received[i], 1}, edge{max(answered[i], received[i]), -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta) // an answer before a receipt at the same instant
	})
	f := InFlight{at: map[int]int64{}}
	n := 0
	for i, e := range edges {
		if i > 0 && n > 0 {
			f.at[n] += e.at - edges[i-1].at
		}
		n += e.delta
		f.Max = max(f.Max, n)
	}
	var all int64
	counts := make([]int, 0, len(f.at))
	for k, d := range f.at {
		all += d
		counts = append(counts, k)
	}
	slices.Sort(counts)
	f.Seconds = float64(all) / 1e9
	var acc int64
	for _, k := range counts {
		if acc += f.at[k]; 2*acc >= all {
			f.Median = k
			break
		}
	}
	return f
}

// writeLog is one sender's writes on the run's pods, as the facts collect
// them.
type writeLog struct {
	sender, agent string
	limit         cluster.ClientLimit
	limitKnown    bool
	at            []int64 // ReceivedAt, UnixNano
	answered      []int64 // CompletedAt, UnixNano
}

// clientLimitOf is the limit the sender of e ran under, where the run knows
// it: the scheduler's and the controller-manager's are on their command
// lines (each controller has a client of its own at that limit); termlab's
// own requests go through the lab's client.
func clientLimitOf(e evidence.AuditEvent, l cluster.ControlPlaneLimits) (cluster.ClientLimit, bool) {
	switch {
	case e.User == "system:kube-scheduler":
		return l.Scheduler, true
	case strings.HasPrefix(e.UserAgent, "kube-controller-manager/"):
		return l.ControllerManager, true
	case e.UserAgent == cluster.UserAgent || strings.HasPrefix(e.UserAgent, cluster.UserAgent+"/"):
		return cluster.ClientLimit{QPS: requestRate, Burst: requestRate}, true
	}
	return cluster.ClientLimit{}, false
}

// isKwok: the sender is kwok's controller.
func isKwok(p Pacer) bool { return isKwokAgent(p.UserAgent) }

// isKwokAgent: the user agent is kwok's controller's.
func isKwokAgent(agent string) bool { return strings.HasPrefix(agent, "kwok/") }

// isPodWrite: a write on a pod of the namespace, its subresources included.
func isPodWrite(e evidence.AuditEvent, namespace string) bool {
	if e.Resource != "pods" || e.Namespace != namespace || e.DryRun {
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// isBind: the scheduler's binding of a pod.
func isBind(e evidence.AuditEvent) bool {
	return e.Subresource == "binding" && e.Verb == "create" && e.User == "system:kube-scheduler"
}

// addWrite files one write; limits are the control plane's as recorded.
func (f *facts) addWrite(e evidence.AuditEvent) {
	who := e.Sender()
	w := f.writes[who]
	if w == nil {
		agent, _, _ := strings.Cut(e.UserAgent, " ")
		w = &writeLog{sender: who, agent: agent}
		w.limit, w.limitKnown = clientLimitOf(e, f.limits)
		f.writes[who] = w
	}
	w.at = append(w.at, e.ReceivedAt.UnixNano())
	w.answered = append(w.answered, e.CompletedAt.UnixNano())
	if isBind(e) {
		f.binds = append(f.binds, e.ReceivedAt.UnixNano())
	}
}

// busiest is the most of at (sorted in place) in any window of length w,
// per second of w.
func busiest(at []int64, w time.Duration) float64 {
	slices.Sort(at)
	most := 0
	for i, j := 0, 0; j < len(at); j++ {
		for at[j]-at[i] >= int64(w) {
			i++
		}
		most = max(most, j-i+1)
	}
	return float64(most) / w.Seconds()
}

// pacersOf sums up the writes, most requests first.
func pacersOf(f *facts) []Pacer {
	var ps []Pacer
	for _, w := range f.writes {
		p := Pacer{Sender: w.sender, UserAgent: w.agent, Requests: len(w.at), InFlight: inFlight(w.at, w.answered), Limit: w.limit, LimitKnown: w.limitKnown}
		p.Busiest = round1(busiest(w.at, paceWindow)) // sorts w.at: after inFlight, which pairs it with answered
		p.AtLimit = p.LimitKnown && p.Busiest >= atLimit*p.Limit.QPS
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Requests != ps[j].Requests {
			return ps[i].Requests > ps[j].Requests
		}
		return ps[i].Sender < ps[j].Sender
	})
	return ps
}

// pace decides ClaimPace by the scheduler's limit the run found:
//   - below the rate the lab creates pods (the default 50/s against 100/s),
//     the scheduler binds at it: its busiest paceWindow between atLimit of
//     its QPS and what its token bucket allows (qps + burst/window, with
//     paceSlack);
//   - at or above that rate (raised), it binds faster than the default
//     limit's bucket allows: raising the limit raised the pace.
func pace(rec *evidence.Record, f *facts) claims.Claim {
	def := cluster.DefaultSchedulerLimit
	bucket := func(l cluster.ClientLimit) float64 { return l.QPS + float64(l.Burst)/paceWindow.Seconds() }
	statement := fmt.Sprintf("The scheduler's client limit sets the pace at which the run's pods are bound (pods/binding in the audit log, its busiest %s): under a limit below the %d pods/s the lab creates, at %.0f %%–%.0f %% of what the limit's token bucket allows (QPS + burst/%s); under a limit raised above it, faster than the default limit (%g/s, burst %d) allows.",
		paceWindow, requestRate, 100*atLimit, 100*paceSlack, paceWindow, def.QPS, def.Burst)
	v := newVerdict(ClaimPace, statement, recordFile)
	if !v.Require(f.auditErr == nil, "reading the audit log back: %v", f.auditErr) {
		return v.Done()
	}
	if f.audited == 0 {
		v.NotChecked(claims.NeedsAuditLog(rec, "who bound each pod and when"))
		return v.Done()
	}
	v.Cite(evidence.AuditFile) // only a run with an audit log has one
	if !v.Require(f.limitsOK, "the run did not record the control plane's limits (its scheduler's command line)") {
		return v.Done()
	}
	l := f.limits.Scheduler
	v.Observe("scheduler_qps", l.QPS)
	v.Observe("scheduler_burst", l.Burst)
	v.Observe("limits_asked", orDefault(f.size.Limits))
	v.Observe("binds", len(f.binds))
	rate := round1(busiest(f.binds, paceWindow))
	v.Observe("bind_busiest_per_second", rate)
	if !v.Require(len(f.binds) >= f.size.Pods, "the audit log holds %d binds of the run's %d pods", len(f.binds), f.size.Pods) {
		return v.Done()
	}
	asked := orDefault(f.size.Limits)
	switch limited := l.QPS < requestRate; {
	case limited && asked == string(cluster.LimitsRaised):
		v.Require(false, "the run asked for raised limits, but its scheduler runs at %g requests/s", l.QPS)
	case limited:
		lo, hi := atLimit*l.QPS, paceSlack*bucket(l)
		v.Observe("bind_pace_low_per_second", round1(lo))
		v.Observe("bind_pace_high_per_second", round1(hi))
		v.Require(rate >= lo && rate <= hi, "the scheduler bound %.1f pods/s in its busiest %s, outside %.1f–%.1f/s: its limit of %g/s did not set the pace", rate, paceWindow, lo, hi, l.QPS)
	default:
		over := bucket(def)
		v.Observe("default_bucket_per_second", round1(over))
		v.Require(rate > over, "the scheduler, its limit raised to %g/s, bound %.1f pods/s in its busiest %s: no faster than the default limit allows (%.1f/s)", l.QPS, rate, paceWindow, over)
	}
	return v.Done()
}
