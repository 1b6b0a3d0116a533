package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Segment kinds drawn on the timeline.
const (
	KindExists         = "exists"          // API object exists, no deletionTimestamp
	KindDeleting       = "deleting"        // API object carries a deletionTimestamp
	KindGone           = "gone"            // API object deleted
	KindRunning        = "running"         // container running on the node (crictl)
	KindExited         = "exited"          // container exited, record still on the node
	KindRemoved        = "removed"         // the runtime no longer knows the container
	KindUnknown        = "unknown"         // no node evidence
	KindKubeletStopped = "kubelet-stopped" // the lab stopped the node's kubelet
	KindNotReady       = "not-ready"       // node Ready condition not True
	KindOrphan         = "orphan"          // container running while the API object is gone
)

// Segment is an interval of one kind on a lane.
type Segment struct {
	From, To time.Time
	Kind     string
	Label    string
}

// Lane is one row of the timeline.
type Lane struct {
	Label    string
	Segments []Segment
	// Note is shown when the lane has no evidence (e.g. a kwok pod has no container).
	Note string
}

// Marker is an action of the lab, drawn as a numbered vertical line.
type Marker struct {
	At    time.Time
	Label string
}

// Timeline is what the SVG and the report's picture show.
type Timeline struct {
	Start, End time.Time
	Lanes      []Lane
	Markers    []Marker
	// Orphans are the intervals where a container ran with its API object gone.
	Orphans []Segment
}

// BuildTimeline derives the lanes from the record: per pod, the API object's
// life (exists, deletionTimestamp set, gone) and the container's life on the
// node from crictl evidence; per node acted on, kubelet stopped and NotReady.
func BuildTimeline(rec *evidence.Record) Timeline {
	tl := Timeline{Start: rec.StartedAt, End: rec.EndedAt}
	if tl.End.Before(tl.Start) || tl.End.IsZero() {
		tl.End = lastTime(rec)
	}
	for _, a := range rec.Actions {
		tl.Markers = append(tl.Markers, Marker{At: a.StartedAt, Label: a.Kind + " " + a.Target})
	}
	for _, pod := range rec.Pods() {
		api := apiLane(rec, pod, tl.End)
		ctr := containerLane(rec, pod, tl.End)
		tl.Lanes = append(tl.Lanes, api, ctr)
		for _, g := range api.Segments {
			if g.Kind != KindGone {
				continue
			}
			for _, r := range ctr.Segments {
				if r.Kind != KindRunning {
					continue
				}
				from, to := maxTime(g.From, r.From), minTime(g.To, r.To)
				if from.Before(to) {
					tl.Orphans = append(tl.Orphans, Segment{From: from, To: to, Kind: KindOrphan, Label: pod + ": container running, API object gone"})
				}
			}
		}
	}
	for _, node := range actedNodes(rec) {
		tl.Lanes = append(tl.Lanes, nodeLanes(rec, node, tl.End)...)
	}
	return tl
}

func apiLane(rec *evidence.Record, pod string, end time.Time) Lane {
	lane := Lane{Label: pod + ": API object"}
	events := rec.EventsFor(pod)
	if len(events) == 0 {
		lane.Note = "no watch event recorded"
		return lane
	}
	var cur *Segment
	open := func(kind string, at time.Time) {
		if cur != nil && cur.Kind == kind {
			return
		}
		if cur != nil {
			cur.To = at
			lane.Segments = append(lane.Segments, *cur)
		}
		cur = &Segment{From: at, Kind: kind}
	}
	for _, e := range events {
		switch {
		case e.Type == "DELETED":
			open(KindGone, e.ObservedAt)
		case e.DeletionTimestamp != nil:
			open(KindDeleting, e.ObservedAt)
		default:
			open(KindExists, e.ObservedAt)
		}
	}
	cur.To = end
	lane.Segments = append(lane.Segments, *cur)
	return lane
}

func containerLane(rec *evidence.Record, pod string, end time.Time) Lane {
	lane := Lane{Label: pod + ": container (crictl)"}
	id, _ := claims.ContainerID(rec, pod)
	var obs []evidence.ContainerObservation
	for _, o := range rec.ContainersFor(pod) {
		if id == "" || o.ContainerID == id {
			obs = append(obs, o)
		}
	}
	if len(obs) == 0 {
		lane.Note = "no node evidence"
		for _, n := range rec.Notes {
			if strings.Contains(n.Text, pod) {
				lane.Note = n.Text
				break
			}
		}
		return lane
	}
	var started, finished, removed, lastRunning *time.Time
	for i := range obs {
		o := obs[i]
		if started == nil && o.StartedAt != nil {
			started = o.StartedAt
		}
		if finished == nil && o.FinishedAt != nil {
			finished = o.FinishedAt
		}
		if o.State == evidence.ContainerRunning {
			t := o.ObservedAt
			lastRunning = &t
		}
		if removed == nil && o.State == evidence.ContainerNotFound {
			t := o.ObservedAt
			removed = &t
		}
	}
	if started == nil {
		started = &obs[0].ObservedAt
	}
	runTo := end
	switch {
	case finished != nil:
		runTo = *finished
	case removed != nil:
		runTo = *removed
	case lastRunning == nil:
		runTo = *started
	}
	if runTo.After(*started) {
		lane.Segments = append(lane.Segments, Segment{From: *started, To: runTo, Kind: KindRunning, Label: "running"})
	}
	if finished != nil {
		exitTo := end
		if removed != nil && removed.After(*finished) {
			exitTo = *removed
		}
		label := "exited"
		for _, o := range obs {
			if o.ExitCode != nil {
				label = fmt.Sprintf("exited %d", *o.ExitCode)
				break
			}
		}
		lane.Segments = append(lane.Segments, Segment{From: *finished, To: exitTo, Kind: KindExited, Label: label})
	}
	if removed != nil {
		lane.Segments = append(lane.Segments, Segment{From: *removed, To: end, Kind: KindRemoved, Label: "removed"})
	}
	return lane
}

// actedNodes are the nodes the lab ran a command on, in order.
func actedNodes(rec *evidence.Record) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range rec.Actions {
		if strings.HasSuffix(a.Kind, "-kubelet") && !seen[a.Target] {
			seen[a.Target] = true
			out = append(out, a.Target)
		}
	}
	return out
}

// nodeLanes are two rows for a node the lab acted on: its kubelet (stopped
// by the lab) and its Ready condition (as watched).
func nodeLanes(rec *evidence.Record, node string, end time.Time) []Lane {
	kubelet := Lane{Label: node + ": kubelet", Note: "kubelet running throughout"}
	var stoppedAt *time.Time
	for _, a := range rec.Actions {
		if a.Target != node {
			continue
		}
		switch a.Kind {
		case "stop-kubelet":
			t := a.StartedAt
			stoppedAt = &t
		case "start-kubelet":
			if stoppedAt != nil {
				kubelet.Segments = append(kubelet.Segments, Segment{From: *stoppedAt, To: a.StartedAt, Kind: KindKubeletStopped, Label: "kubelet stopped"})
				stoppedAt = nil
			}
		}
	}
	if stoppedAt != nil {
		kubelet.Segments = append(kubelet.Segments, Segment{From: *stoppedAt, To: end, Kind: KindKubeletStopped, Label: "kubelet stopped"})
	}
	ready := Lane{Label: node + ": Ready condition", Note: "Ready throughout"}
	var notReady *evidence.NodeEvent
	for _, e := range rec.NodeEventsFor(node) {
		e := e
		switch {
		case e.Ready != "True" && notReady == nil:
			notReady = &e
		case e.Ready == "True" && notReady != nil:
			ready.Segments = append(ready.Segments, Segment{From: notReady.ObservedAt, To: e.ObservedAt, Kind: KindNotReady, Label: "NotReady (" + notReady.Ready + ")"})
			notReady = nil
		}
	}
	if notReady != nil {
		ready.Segments = append(ready.Segments, Segment{From: notReady.ObservedAt, To: end, Kind: KindNotReady, Label: "NotReady (" + notReady.Ready + ")"})
	}
	return []Lane{kubelet, ready}
}

func lastTime(rec *evidence.Record) time.Time {
	t := rec.StartedAt
	bump := func(x time.Time) {
		if x.After(t) {
			t = x
		}
	}
	for _, e := range rec.PodEvents {
		bump(e.ObservedAt)
	}
	for _, o := range rec.Containers {
		bump(o.ObservedAt)
	}
	for _, a := range rec.Actions {
		bump(a.FinishedAt)
	}
	return t
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
