package evidence

import (
	"fmt"
	"time"
)

// Evidence of the controllers a run rests on beyond the control plane:
// kwok's controller plays every pod on a fake node, so a run with fake
// nodes watches its pods, and an outage of it is an outage of the lab.
const (
	ControllersFile = "controllers.jsonl" // watch events on those controllers' pods
	// WatchControllers names that watch in WatchGap.Source.
	WatchControllers = "controllers"
)

// ControllerEvent is one watch event on a controller's pod: is it serving?
type ControllerEvent struct {
	ObservedAt      time.Time `json:"observed_at"`
	Type            string    `json:"type"` // LISTED, ADDED, MODIFIED, DELETED
	Pod             string    `json:"pod"`
	UID             string    `json:"uid"`
	ResourceVersion string    `json:"resourceVersion"`
	Node            string    `json:"node,omitempty"`
	// Ready is the pod's Ready condition; Restarts its containers' restart
	// counts summed; LastExit the last termination the kubelet reported.
	Ready    bool   `json:"ready"`
	Restarts int32  `json:"restarts"`
	LastExit string `json:"last_exit,omitempty"`
}

// Outage is a time a controller was not serving, or not known to be.
type Outage struct {
	From time.Time `json:"from"`
	// To is zero when the outage lasted to the end of the window.
	To  time.Time `json:"to"`
	Why string    `json:"why"`
}

func (o Outage) String() string {
	to := "the end of the run"
	if !o.To.IsZero() {
		to = o.To.UTC().Format("15:04:05.000")
	}
	return fmt.Sprintf("from %s to %s (%s)", o.From.UTC().Format("15:04:05.000"), to, o.Why)
}

// ControllerOutages are the times within [from, to] the watched controller
// was not serving: a pod of it not Ready, restarted (its restart count
// grew, or another pod took its place) or gone, from that event to the
// next Ready one; and the times its watch was down with changes lost (a
// gap that ended in a re-list, or never ended), when nobody can say.
// No controller pod at all at from is an outage too.
func (r *Record) ControllerOutages(from, to time.Time) []Outage {
	var out []Outage
	var open *Outage
	begin := func(at time.Time, why string) {
		if open == nil {
			open = &Outage{From: at, Why: why}
		}
	}
	end := func(at time.Time) {
		if open != nil {
			open.To = at
			out = append(out, *open)
			open = nil
		}
	}
	restarts := map[string]int32{} // by pod UID
	seenBefore := false
	for _, e := range r.ControllerEvents {
		if e.ObservedAt.After(to) {
			break
		}
		at := e.ObservedAt
		if at.Before(from) {
			at = from
		}
		prev, known := restarts[e.UID]
		why := ""
		switch {
		case e.Type == "DELETED":
			why = fmt.Sprintf("pod %s deleted", e.Pod)
		case known && e.Restarts > prev:
			why = fmt.Sprintf("pod %s restarted (restart count %d → %d)", e.Pod, prev, e.Restarts)
			if e.LastExit != "" {
				why += ": " + e.LastExit
			}
		case !known && seenBefore:
			why = fmt.Sprintf("pod %s took the place of another", e.Pod)
		case !e.Ready:
			why = fmt.Sprintf("pod %s not Ready", e.Pod)
		}
		seenBefore = true
		if e.Type == "DELETED" {
			delete(restarts, e.UID)
		} else {
			restarts[e.UID] = e.Restarts
		}
		if why != "" {
			begin(at, why)
		}
		if e.Ready && e.Type != "DELETED" {
			end(at) // a restart seen only once it was over is an outage of no length
		}
	}
	if !seenBefore {
		out = append(out, Outage{From: from, Why: "no controller pod was seen"})
	}
	if open != nil {
		out = append(out, *open)
	}
	for _, g := range r.GapsOverlapping(WatchControllers, from, to) {
		if g.ResumedFrom == "" {
			out = append(out, Outage{From: g.From, To: g.To, Why: "its watch was down and came back by a re-list: " + g.Why})
		}
	}
	return out
}
