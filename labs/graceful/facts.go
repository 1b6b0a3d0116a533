package graceful

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/workloadlog"
)

// facts is one variant's timeline, built once from the record; the claims,
// the answer and the report read it, never the record's raw lists again.
type facts struct {
	v variant
	// Deleted is when the delete reached the API server: the request's
	// start (termlab) or the audit log's receipt (a script, a person), the
	// clock every mechanism starts from; the pod watch shows it later, by as
	// much as 0.4 s on a loaded machine. Without the action, the watch event.
	// DeletionTimestamp is the grace deadline the API server set (whole seconds).
	Deleted           time.Time
	DeletionTimestamp *time.Time
	// DeletedOn is the clock that read Deleted; ServerNode the node whose
	// clock stamps the workload's log lines and exit; ClientNode the node
	// whose clock stamps the client's requests (its own log).
	DeletedOn, ServerNode, ClientNode string
	// Endpoint is the pod's "ip:port" as its EndpointSlice lists it.
	Endpoint string
	// Terminating is the first slice event after the delete with the pod's
	// endpoint ready=false, terminating=true; Serving its serving condition.
	Terminating *evidence.EndpointSliceEvent
	Serving     bool
	// ForwardedBefore is the last read of the client node's rules before the
	// delete that forwarded to the pod; LastForwarding the last read after it
	// that still did (nil: none) and Dropped the first read that no longer
	// did: the node stopped forwarding between LastForwarding.StartedAt (or
	// the delete) and Dropped.FinishedAt.
	ForwardedBefore, LastForwarding, Dropped *evidence.ProxyRulesRead
	// LastRouted is the start of the last request the client's node sent to
	// the pod, by the client's own log: answered by the pod, or refused (the
	// steady pod refuses nothing). The node forwarded to it until then at least.
	LastRouted time.Time
	// ContainerID is the pod's container as the API reported it.
	ContainerID string
	// Exit is the crictl observation of the exited container (nil: none);
	// TaskExit containerd's exit event of it (nil: none).
	Exit     *evidence.ContainerObservation
	TaskExit *evidence.TaskExit
	// Log is the workload's own log, as the last crictl look read it.
	Log *evidence.LogSummary
	// Requests are the client's requests to the variant's Service; all
	// every request of the client.
	Requests []evidence.Request
	all      []evidence.Request
	// rec is the record the facts come from: its measured clocks put the
	// three clocks' times on one (onHost). deletedHost is Deleted put there
	// once (the API server's offset is measured from the whole record).
	rec         *evidence.Record
	deletedHost hostTime
}

// record paths the claims cite.
const (
	eventsFile   = evidence.EventsFile
	slicesFile   = evidence.EndpointSlicesFile
	requestsFile = evidence.RequestsFile
	recordFile   = evidence.RecordFile
)

// clientNode is the node the client ran on.
func clientNode(rec *evidence.Record) string {
	for _, e := range rec.PodEvents {
		if e.Name == client && e.NodeName != "" {
			return e.NodeName
		}
	}
	return ""
}

// victimEndpoints maps each variant to its pod's endpoint ("ip:port") as
// the EndpointSlices listed it.
func victimEndpoints(rec *evidence.Record) map[string]string {
	out := map[string]string{}
	for _, e := range rec.EndpointSlices {
		for _, ep := range e.Endpoints {
			for _, v := range variants {
				if ep.Pod == v.Name && len(ep.Addresses) > 0 {
					out[v.Name] = fmt.Sprintf("%s:%d", ep.Addresses[0], port)
				}
			}
		}
	}
	return out
}

// factsOf builds every variant's facts.
func factsOf(rec *evidence.Record) []facts {
	endpoints := victimEndpoints(rec)
	node := clientNode(rec)
	var out []facts
	for _, v := range variants {
		f := facts{v: v, Endpoint: endpoints[v.Name], ClientNode: node, rec: rec}
		for _, e := range rec.PodEvents {
			if e.Name == v.Name && e.DeletionTimestamp != nil {
				f.Deleted, f.DeletionTimestamp, f.DeletedOn = e.ObservedAt, e.DeletionTimestamp, evidence.ClockHost
				f.ServerNode = e.NodeName
				break
			}
		}
		if a, ok := rec.Action(evidence.ActionDelete, v.Name); ok && a.Succeeded() && !f.Deleted.IsZero() {
			at := rec.ActionStamp(a)
			f.Deleted, f.DeletedOn = at.Time, at.Clock
		}
		f.deletedHost = f.onHost(f.DeletedOn, f.Deleted)
		if !f.Deleted.IsZero() {
			for i := range rec.EndpointSlices {
				e := &rec.EndpointSlices[i]
				ep, ok := e.Endpoint(v.Name)
				if e.Service != v.Name || !ok || e.ObservedAt.Before(f.Deleted) {
					continue
				}
				if isFalse(ep.Ready) && isTrue(ep.Terminating) {
					f.Terminating, f.Serving = e, isTrue(ep.Serving)
					break
				}
			}
			svc := servicePort(rec.Namespace, v.Name)
			for i := range rec.ProxyRules {
				p := &rec.ProxyRules[i]
				// A read that lists no endpoint of the Service says nothing of
				// it: the steady pod stays in every Service's rules.
				if p.Node != node || p.Error != "" || f.Endpoint == "" || len(p.Forwards[svc]) == 0 {
					continue
				}
				forwards := p.ForwardsTo(svc, f.Endpoint)
				switch {
				case p.FinishedAt.Before(f.Deleted):
					if forwards {
						f.ForwardedBefore = p
					}
				case f.Dropped != nil:
				case forwards:
					f.LastForwarding = p
				default:
					f.Dropped = p
				}
			}
		}
		if e, ok := lastEvent(rec, v.Name); ok {
			c, _ := e.Container("")
			f.ContainerID = c.ContainerID
		}
		for i := range rec.TaskExits {
			if e := &rec.TaskExits[i]; e.ContainerID == f.ContainerID && f.ContainerID != "" {
				f.TaskExit = e
			}
		}
		for i := range rec.Containers {
			o := &rec.Containers[i]
			if o.Pod != v.Name {
				continue
			}
			if o.Log != nil {
				f.Log = o.Log
			}
			if o.State == evidence.ContainerExited && o.FinishedAt != nil {
				f.Exit = o
			}
		}
		f.all = rec.Requests
		for _, q := range rec.Requests {
			if q.Target == v.Name {
				f.Requests = append(f.Requests, q)
			}
		}
		sort.SliceStable(f.Requests, func(i, j int) bool { return f.Requests[i].Start.Before(f.Requests[j].Start) })
		for _, q := range f.Requests {
			if q.Backend == v.Name || q.Outcome == workloadlog.OutcomeRefused {
				f.LastRouted = q.Start
			}
		}
		out = append(out, f)
	}
	return out
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// SignalAt is when the workload logged SIGTERM.
func (f facts) SignalAt() (time.Time, bool) {
	if f.Log == nil || f.Log.SignalAt == nil {
		return time.Time{}, false
	}
	return *f.Log.SignalAt, true
}

// ExitAt is when the container exited and with which code, as the runtime
// says: crictl inspect, or containerd's exit event when the kubelet removed
// the container before crictl looked. from names the source and its file.
func (f facts) ExitAt() (at time.Time, code int32, from string, ok bool) {
	switch {
	case f.Exit != nil && f.Exit.ExitCode != nil:
		return *f.Exit.FinishedAt, *f.Exit.ExitCode, f.Exit.InspectPath, true
	case f.TaskExit != nil:
		return f.TaskExit.ExitedAt, f.TaskExit.ExitStatus, f.TaskExit.Path, true
	}
	return time.Time{}, 0, "", false
}

// EndedAt is when the process ended: the runtime's word (ExitAt), or,
// without it, the process's own exit line (a clean exit logs one; a SIGKILL
// leaves none).
func (f facts) EndedAt() (time.Time, string, bool) {
	if t, _, from, ok := f.ExitAt(); ok {
		return t, from, true
	}
	if f.Log != nil && f.Log.ExitAt != nil {
		return *f.Log.ExitAt, "its exit line", true
	}
	return time.Time{}, "", false
}

// StoppedAccepting is when the process stopped accepting connections: at
// its SIGTERM when it exits or drains on it, at its exit when it ignores it.
func (f facts) StoppedAccepting() (time.Time, bool) {
	if f.v.OnTerm == workloadlog.OnTermIgnore {
		t, _, _, ok := f.ExitAt()
		return t, ok
	}
	return f.SignalAt()
}

// DroppedBetween is the interval, on the host's clock, in which the client's
// node stopped forwarding to the pod: after the last read that still
// forwarded to it began, or the last request the client's log shows sent to
// it, or the delete (the latest of them), before the first read that no
// longer did ended. A time of another clock is taken at the earliest its
// clock's uncertainty allows, so the interval holds the drop whatever the
// clocks' error.
func (f facts) DroppedBetween() (from, to time.Time, ok bool) {
	if f.Dropped == nil {
		return time.Time{}, time.Time{}, false
	}
	to = f.Dropped.FinishedAt
	from = f.deletedOnHost().earliest()
	if f.LastForwarding != nil && f.LastForwarding.StartedAt.After(from) {
		from = f.LastForwarding.StartedAt
	}
	if !f.LastRouted.IsZero() {
		if routed := f.client(f.LastRouted).earliest(); routed.After(from) && routed.Before(to) {
			from = routed
		}
	}
	return from, to, true
}

// Propagation is the delete-to-rules time at most: from the delete to the
// end of the first read that no longer forwarded to the pod, on the host's
// clock (the delete read on the API server's, for a script's or a person's).
func (f facts) Propagation() (evidence.Interval, bool) {
	_, to, ok := f.DroppedBetween()
	return f.rec.Between(evidence.Stamp{Time: f.Deleted, Clock: f.DeletedOn}, evidence.OnHost(to)), ok
}

// Failed returns the variant's failed requests.
func (f facts) Failed() []evidence.Request {
	var out []evidence.Request
	for _, q := range f.Requests {
		if q.Failed() {
			out = append(out, q)
		}
	}
	return out
}

// FailedByDeletion returns the failed requests not lost in a stall of the
// client's node: those the pod's own deletion must account for.
func (f facts) FailedByDeletion() []evidence.Request {
	var out []evidence.Request
	for _, q := range f.Failed() {
		if f.Window(q) != windowStall {
			out = append(out, q)
		}
	}
	return out
}

// The windows a failed request is attributed to.
const (
	windowUnreachable = "after the process stopped accepting and before the client's node removed the endpoint"
	windowInFlight    = "in flight when the process stopped accepting"
	windowBefore      = "before the process stopped accepting (not explained by the deletion)"
	windowAfter       = "after the client's node removed the endpoint (not explained by the deletion)"
	windowUnknown     = "not attributable: the record lacks the process's stop or the rule change"
	// windowStall: not this pod's deletion at all: new connections to
	// several Services timed out together, the client's node stalled.
	windowStall = "in a stall of the client's node (requests to several Services timed out together)"
	// windowStaleConntrack: a new connection after the drop that timed out,
	// on the source port of a connection to the deleted pod that was never
	// answered and had ended. The node's conntrack entry of the old one
	// (SYN_SENT, translated to the pod's address, kept synSentLifetime)
	// sends the new SYN of the same source port to the deleted pod again,
	// whatever the rules say: kube-proxy clears such entries for UDP, not
	// TCP (kubernetes/kubernetes#101607). The client logs each connection's
	// source port, so the reuse is seen.
	windowStaleConntrack = "after the client's node removed the endpoint, on the source port of an unanswered connection to the deleted pod: its conntrack entry still sends there (kubernetes#101607)"
	// windowStaleConntrackInferred: the same, in a record whose client
	// logged no ports (before 2026-12-07): the reuse is inferred from an
	// unanswered connection ending before the new one began.
	windowStaleConntrackInferred = "after the client's node removed the endpoint, on a source port an unanswered connection to the deleted pod had freed: its conntrack entry still sends there (kubernetes#101607; inferred, the client logged no ports)"
)

// synSentLifetime is how long the node keeps the conntrack entry of a SYN
// never answered: nf_conntrack_tcp_timeout_syn_sent's default, 120 s
// (kube-proxy does not set it).
const synSentLifetime = 120 * time.Second

// explained reports whether a window is one the pod's deletion accounts for.
func explained(w string) bool {
	return w == windowUnreachable || w == windowInFlight || w == windowStaleConntrack || w == windowStaleConntrackInferred
}

// staleConntrackWindow says whether q, a timeout begun after the drop, took
// the source port of a request to the deleted pod sent before the drop that
// timed out unanswered and ended before q began, within synSentLifetime of
// its own start: that connection's conntrack entry may still have been in
// place. With ports logged the port must be the same; a record without
// them can only say one was freed ("" when neither holds).
func (f facts) staleConntrackWindow(q evidence.Request, dropped hostTime) string {
	for _, o := range f.Requests {
		// o sent before the drop: unless after it whatever the clocks' error.
		if o.Outcome != workloadlog.OutcomeTimeout || dropped.before(f.client(o.Start)) || o.End.After(q.Start) || q.Start.Sub(o.Start) > synSentLifetime {
			continue
		}
		switch {
		case q.SourcePort == 0 && o.SourcePort == 0:
			return windowStaleConntrackInferred
		case q.SourcePort != 0 && q.SourcePort == o.SourcePort:
			return windowStaleConntrack
		}
	}
	return ""
}

// stallSpan: timeouts of two Services whose starts are this close are one
// stall of the client's node (seen: 0.1 s, three Services, during a kube-proxy
// sync on a loaded machine); a pod's own window never spans two Services.
const stallSpan = 250 * time.Millisecond

// inStall reports whether a timed-out request started within stallSpan of a
// timed-out request to another Service.
func inStall(q evidence.Request, all []evidence.Request) bool {
	if q.Outcome != workloadlog.OutcomeTimeout {
		return false
	}
	for _, o := range all {
		if o.Target != q.Target && o.Outcome == workloadlog.OutcomeTimeout && o.Start.Sub(q.Start).Abs() <= stallSpan {
			return true
		}
	}
	return false
}

// Window attributes a failed request to a window of the variant's
// timeline. Its start and end are the client's clock, the process's stop
// the server's node's, the drop the host's: each is put on the host's
// clock, and a request is before the stop, or after the drop, only when it
// is so whatever the clocks' uncertainty (an explanation is never taken
// away by the clocks). Without the clocks measured (Unmeasured) the window
// is that of the raw times: a claim that rests on it is not checked.
func (f facts) Window(q evidence.Request) string {
	stoppedAt, ok := f.StoppedAccepting()
	_, droppedAt, dok := f.DroppedBetween()
	if !ok || !dok {
		return windowUnknown
	}
	stopped, dropped := f.server(stoppedAt), hostTime{T: droppedAt}
	start, end := f.client(q.Start), f.client(q.End)
	startedBefore, endedBefore := start.before(stopped), end.before(stopped)
	startedAfterDrop := dropped.before(start)
	// A stall explains only what the deletion does not.
	if (startedBefore && endedBefore || startedAfterDrop) && inStall(q, f.all) {
		return windowStall
	}
	switch {
	case startedBefore && endedBefore:
		return windowBefore
	case startedBefore:
		return windowInFlight
	case !startedAfterDrop:
		return windowUnreachable
	case q.Outcome == workloadlog.OutcomeTimeout:
		if w := f.staleConntrackWindow(q, dropped); w != "" {
			return w
		}
	}
	return windowAfter
}

// Windows counts the failed requests per window.
func (f facts) Windows() map[string]int {
	out := map[string]int{}
	for _, q := range f.Failed() {
		out[f.Window(q)]++
	}
	return out
}

// LongestGap is the longest time between two request starts from the delete
// to the process's end at until (a time of the server's node's clock), and
// how many requests there were in that span. The delete, the requests (the
// client's clock) and the end are put on the host's clock; the gap is exact
// to the uncertainty of the two clocks at its ends at most.
func (f facts) LongestGap(until time.Time) (evidence.Interval, int) {
	deleted, end := f.deletedOnHost(), f.server(until)
	var gap evidence.Interval
	prev := deleted
	n := 0
	longer := func(from, to hostTime) {
		if d := to.T.Sub(from.T); d > gap.D {
			gap = evidence.Interval{D: d, Uncertainty: from.U + to.U}
		}
	}
	for _, q := range f.Requests {
		start := f.client(q.Start)
		if start.T.Before(deleted.T) || start.T.After(end.T) {
			continue
		}
		longer(prev, start)
		prev = start
		n++
	}
	if n > 0 {
		longer(prev, end)
	}
	return gap, n
}

// sinceDelete is the time from the delete to t, a time the server's node
// read (its workload's log), on the host's clock: corrected by the measured
// offsets, exact to their uncertainty.
func (f facts) sinceDelete(rec *evidence.Record, t time.Time) evidence.Interval {
	return rec.Between(evidence.Stamp{Time: f.Deleted, Clock: f.DeletedOn}, evidence.OnNode(f.ServerNode, t))
}

// hostTime is a time put on the host's clock, exact to ±U.
type hostTime struct {
	T time.Time
	U time.Duration
}

// before reports whether a came before b whatever the clocks' error.
func (a hostTime) before(b hostTime) bool { return a.T.Add(a.U).Before(b.T.Add(-b.U)) }

// earliest is the earliest the moment can have been by the host's clock.
func (a hostTime) earliest() time.Time { return a.T.Add(-a.U) }

// onHost puts t, read on the clock, on the host's: corrected by the clock's
// measured offset (evidence.Record.Between), exact to its uncertainty; a
// clock the run did not measure is taken as read (Unmeasured names it).
func (f facts) onHost(clock string, t time.Time) hostTime {
	iv := f.rec.Between(evidence.OnHost(t), evidence.Stamp{Time: t, Clock: clock})
	return hostTime{T: t.Add(iv.D), U: iv.Uncertainty}
}

// deletedOnHost is the delete on the host's clock.
func (f facts) deletedOnHost() hostTime { return f.deletedHost }

// client and server put a time of the client's node (its requests) and of
// the server's node (the workload's log, its exit) on the host's clock.
func (f facts) client(t time.Time) hostTime { return f.onHost(evidence.ClockNode(f.ClientNode), t) }
func (f facts) server(t time.Time) hostTime { return f.onHost(evidence.ClockNode(f.ServerNode), t) }

// Unmeasured names the clocks a failed request's window compares (the
// client's node's, the server's node's; the host's needs none), and the more
// given, that the run did not measure and cannot take as the host's (a
// cluster reached through node pods): a claim that compares their times is
// not checked, naming them.
func (f facts) Unmeasured(more ...string) []string {
	var out []string
	for _, c := range append([]string{evidence.ClockNode(f.ClientNode), evidence.ClockNode(f.ServerNode)}, more...) {
		if c == "" || c == evidence.ClockNode("") {
			continue // a time the record lacks: the claim that needs it says so
		}
		iv := f.rec.Between(evidence.Stamp{Clock: evidence.ClockHost}, evidence.Stamp{Clock: c})
		for _, u := range iv.Unmeasured {
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}
