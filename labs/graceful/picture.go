package graceful

import (
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// picture is the run's picture: per variant, on its pod's own clock, what
// the answer's "why" rests on, from the same facts the claims decide on.
func picture(rec *evidence.Record, fs []facts) *report.TrafficPicture {
	tp := &report.TrafficPicture{ClientNode: clientNode(rec)}
	for _, f := range fs {
		if f.Deleted.IsZero() {
			continue
		}
		// Every time on the host's clock, the nodes' through their offsets.
		server := func(t time.Time) time.Time {
			if t.IsZero() {
				return t
			}
			return f.server(t).T
		}
		s := report.ServiceTimeline{Name: f.v.Name, Title: f.v.Title, Deleted: f.deletedOnHost().T, Requests: len(f.Requests), Endpoint: endpointConditions(rec, f)}
		if from, to, ok := f.DroppedBetween(); ok {
			s.DroppedFrom, s.DroppedTo = from, to
		}
		for _, o := range rec.ContainersFor(f.v.Name) {
			if o.StartedAt != nil && (f.ContainerID == "" || o.ContainerID == f.ContainerID) {
				s.Started = server(*o.StartedAt)
				break
			}
		}
		if at, code, _, ok := f.ExitAt(); ok {
			s.Exited, s.ExitCode = server(at), &code
		} else if at, _, ok := f.EndedAt(); ok {
			s.Exited = server(at)
		}
		sig, _ := f.SignalAt()
		stopped, _ := f.StoppedAccepting()
		s.SIGTERM, s.StoppedAccepting = server(sig), server(stopped)
		switch f.v.PreStop {
		case execPreStop:
			if f.Log != nil && f.Log.PreStopStartAt != nil {
				s.PreStopFrom, s.PreStopLogged = server(*f.Log.PreStopStartAt), true
				switch {
				case f.Log.PreStopEndAt != nil:
					s.PreStopTo = server(*f.Log.PreStopEndAt)
				default: // cut short: it ran until the container ended
					s.PreStopTo = s.Exited
				}
			}
		case nativePreStop:
			// The native sleep runs no process and logs nothing; the SIGTERM
			// marks its end.
			if !s.SIGTERM.IsZero() {
				s.PreStopFrom, s.PreStopTo = s.SIGTERM.Add(-f.v.Sleep), s.SIGTERM
			}
		}
		for _, q := range f.Failed() {
			w := f.Window(q)
			s.Failed = append(s.Failed, report.FailedRequest{Start: f.client(q.Start).T, End: f.client(q.End).T, Outcome: q.Outcome, Window: pictureWindow(w), Why: w})
		}
		tp.Services = append(tp.Services, s)
	}
	return tp
}

// pictureWindow is the picture's name for a window the claims attribute a
// failed request to.
func pictureWindow(w string) string {
	switch w {
	case windowInFlight:
		return report.WindowInFlight
	case windowUnreachable:
		return report.WindowUnreachable
	case windowStall:
		return report.WindowStall
	case windowStaleConntrack, windowStaleConntrackInferred:
		return report.WindowStaleConntrack
	}
	return report.WindowUnexplained
}

// endpointConditions is the variant's pod's endpoint in its Service's
// EndpointSlice over time, from the slice watch: one segment per change of
// its conditions, and its removal.
func endpointConditions(rec *evidence.Record, f facts) []report.Segment {
	var out []report.Segment
	open := func(kind, label string, at time.Time) {
		if n := len(out); n > 0 {
			if out[n-1].Kind == kind {
				return
			}
			out[n-1].To = at
		}
		out = append(out, report.Segment{From: at, To: rec.EndedAt, Kind: kind, Label: label})
	}
	for _, e := range rec.EndpointSlices {
		if e.Service != f.v.Name {
			continue
		}
		ep, ok := e.Endpoint(f.v.Name)
		switch {
		case !ok || e.Type == "DELETED":
			if len(out) > 0 {
				open(report.KindEndpointRemoved, "", e.ObservedAt)
			}
		case isTrue(ep.Ready):
			open(report.KindEndpointReady, "ready", e.ObservedAt)
		case isTrue(ep.Serving):
			open(report.KindEndpointTerminating, "terminating, serving", e.ObservedAt)
		default:
			open(report.KindEndpointNotServing, "not serving", e.ObservedAt)
		}
	}
	return out
}
