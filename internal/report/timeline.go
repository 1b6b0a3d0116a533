package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Segment kinds drawn on the timeline.
const (
	KindExists         = "exists"          // API object exists, no deletionTimestamp
	KindDeleting       = "deleting"        // API object carries a deletionTimestamp
	KindTerminated     = "terminated"      // API object has a deletionTimestamp and reports its container terminated
	KindGone           = "gone"            // API object deleted
	KindRunning        = "running"         // container running on the node (crictl)
	KindExited         = "exited"          // container exited, record still on the node
	KindRemoved        = "removed"         // the runtime no longer knows the container
	KindUnknown        = "unknown"         // no node evidence
	KindKubeletStopped = "kubelet-stopped" // the lab stopped the node's kubelet
	KindNotReady       = "not-ready"       // node Ready condition not True
	KindReady          = "ready"           // node Ready condition True
	KindOrphan         = "orphan"          // container running while the API object is gone
)

// Segment is an interval of one kind on a lane.
type Segment struct {
	From, To time.Time
	Kind     string
	Label    string
}

// Point kinds: moments drawn as a symbol on a lane.
const (
	MarkSIGTERM           = "sigterm"            // the workload logged SIGTERM
	MarkSIGKILL           = "sigkill"            // the container exited 137 (128 + SIGKILL), per crictl
	MarkFinalizersEmptied = "finalizers-emptied" // finalizers emptied without the lab removing them
)

// Mark is a moment on a lane (index into Timeline.Lanes).
type Mark struct {
	At   time.Time
	Kind string
	Lane int
}

// Lane is one row of the timeline.
type Lane struct {
	// Pod is the pod the lane is about ("" for a node lane); the orphan band
	// covers the lanes of its pod only.
	Pod      string
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
	// Origin is the axis' zero: the lab's first delete (the run's start if
	// it deleted nothing), so times read as "after the delete".
	Origin  time.Time
	Lanes   []Lane
	Markers []Marker
	Marks   []Mark
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
	tl.Origin = tl.Start
	pods, omitted := DrawnPods(rec)
	for _, a := range rec.Actions {
		if omitted[a.Target] {
			continue
		}
		tl.Markers = append(tl.Markers, Marker{At: a.StartedAt, Label: a.Kind + " " + a.Target})
	}
	// Numbered in time order, so that markers close in time get neighbouring numbers.
	sort.SliceStable(tl.Markers, func(i, j int) bool { return tl.Markers[i].At.Before(tl.Markers[j].At) })
	for _, a := range rec.Actions {
		if strings.HasSuffix(a.Kind, "delete") && (tl.Origin.Equal(tl.Start) || a.StartedAt.Before(tl.Origin)) {
			tl.Origin = a.StartedAt
		}
	}
	for _, pod := range pods {
		api := apiLane(rec, pod, tl.End)
		if ctrs := podContainers(rec, pod); len(ctrs) > 1 {
			// A pod of several containers (lab:sidecar's native sidecars):
			// one crictl lane each, in the order the pod's status names them.
			tl.Lanes = append(tl.Lanes, api)
			for _, c := range ctrs {
				ctr, obs := containerLane(rec, pod, c.id, pod+"/"+c.name+": crictl", tl.End)
				tl.Lanes = append(tl.Lanes, ctr)
				for _, m := range signalMarks(obs) {
					m.Lane = len(tl.Lanes) - 1
					tl.Marks = append(tl.Marks, m)
				}
				tl.Orphans = append(tl.Orphans, orphans(pod, api, ctr)...)
			}
			continue
		}
		id, _ := claims.ContainerID(rec, pod)
		ctr, obs := containerLane(rec, pod, id, pod+": crictl", tl.End)
		if len(obs) == 0 && onFakeNode(rec, pod) {
			// A kwok pod has no container: its one lane is what the API reports.
			api.Label = pod + ": API (kwok)"
			tl.Lanes = append(tl.Lanes, api)
			if at, ok := finalizersEmptied(rec, pod); ok {
				tl.Marks = append(tl.Marks, Mark{At: at, Kind: MarkFinalizersEmptied, Lane: len(tl.Lanes) - 1})
			}
			continue
		}
		tl.Lanes = append(tl.Lanes, api, ctr)
		if at, ok := finalizersEmptied(rec, pod); ok {
			tl.Marks = append(tl.Marks, Mark{At: at, Kind: MarkFinalizersEmptied, Lane: len(tl.Lanes) - 2})
		}
		for _, m := range signalMarks(obs) {
			m.Lane = len(tl.Lanes) - 1
			tl.Marks = append(tl.Marks, m)
		}
		tl.Orphans = append(tl.Orphans, orphans(pod, api, ctr)...)
	}
	for _, node := range actedNodes(rec) {
		tl.Lanes = append(tl.Lanes, nodeLanes(rec, node, tl.End)...)
	}
	return tl
}

// MaxDrawnPods is how many pods the picture and the per-pod tables show:
// a run of thousands of pods (lab:scale) shows its first ones, and says so;
// every event stays in events.jsonl.
const MaxDrawnPods = 12

// DrawnPods returns the pods the report draws, in order of first appearance,
// and the ones it leaves out.
func DrawnPods(rec *evidence.Record) (drawn []string, omitted map[string]bool) {
	pods := rec.Pods()
	if len(pods) <= MaxDrawnPods {
		return pods, nil
	}
	omitted = map[string]bool{}
	for _, p := range pods[MaxDrawnPods:] {
		omitted[p] = true
	}
	return pods[:MaxDrawnPods], omitted
}

func apiLane(rec *evidence.Record, pod string, end time.Time) Lane {
	lane := Lane{Pod: pod, Label: pod + ": API"}
	events := rec.EventsFor(pod)
	if len(events) == 0 {
		lane.Note = "no watch event recorded"
		return lane
	}
	var cur *Segment
	open := func(kind, label string, at time.Time) {
		if cur != nil && cur.Kind == kind {
			return
		}
		if cur != nil {
			cur.To = at
			lane.Segments = append(lane.Segments, *cur)
		}
		cur = &Segment{From: at, Kind: kind, Label: label}
	}
	for _, e := range events {
		switch {
		case e.Type == "DELETED":
			open(KindGone, "", e.ObservedAt)
		case e.DeletionTimestamp != nil && reportsTerminated(e.PodState):
			open(KindTerminated, "terminated, "+e.Phase, e.ObservedAt)
		case e.DeletionTimestamp != nil:
			open(KindDeleting, "deleting", e.ObservedAt)
		default:
			open(KindExists, "", e.ObservedAt)
		}
	}
	cur.To = end
	lane.Segments = append(lane.Segments, *cur)
	return lane
}

// orphans are the intervals where the container lane shows it running
// while the API lane shows the object gone.
func orphans(pod string, api, ctr Lane) []Segment {
	var out []Segment
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
				out = append(out, Segment{From: from, To: to, Kind: KindOrphan, Label: pod + ": container running, API object gone"})
			}
		}
	}
	return out
}

// namedContainer is a container as the pod's status named it.
type namedContainer struct{ name, id string }

// podContainers are the pod's containers with the first ID its status
// reported for each: init containers (native sidecars among them) first,
// then the main containers, in the order the status lists them.
func podContainers(rec *evidence.Record, pod string) []namedContainer {
	var out []namedContainer
	seen := map[string]bool{}
	for _, e := range rec.EventsFor(pod) {
		for _, c := range append(append([]evidence.ContainerState(nil), e.InitContainers...), e.Containers...) {
			if c.ContainerID != "" && !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, namedContainer{c.Name, c.ContainerID})
			}
		}
	}
	return out
}

// containerLane is the crictl lane of container id (every container of the
// pod when id is empty) under label.
func containerLane(rec *evidence.Record, pod, id, label string, end time.Time) (Lane, []evidence.ContainerObservation) {
	lane := Lane{Pod: pod, Label: label}
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
		return lane, nil
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
	return lane, obs
}

// reportsTerminated: the API reports the pod's containers ended (phase
// Succeeded/Failed or a terminated container state), which a kubelet — or
// a kwok stage that stands for one — writes after the container exits.
func reportsTerminated(s evidence.PodState) bool {
	if s.Terminal() {
		return true
	}
	for _, c := range s.Containers {
		if c.State == "terminated" {
			return true
		}
	}
	return false
}

// onFakeNode: the pod was bound to a kwok fake node (no container anywhere).
func onFakeNode(rec *evidence.Record, pod string) bool {
	for _, e := range rec.EventsFor(pod) {
		if strings.HasPrefix(e.NodeName, "kwok-") {
			return true
		}
	}
	return false
}

// finalizersEmptied is when the pod's finalizers were emptied without the lab
// asking (kwok ≤ v0.7's fast pod-delete stage does it).
func finalizersEmptied(rec *evidence.Record, pod string) (time.Time, bool) {
	released := time.Time{}
	for _, a := range rec.Actions {
		if a.Kind == "remove-finalizers" && a.Target == pod {
			released = a.StartedAt
			break
		}
	}
	had := false
	for _, e := range rec.EventsFor(pod) {
		if len(e.Finalizers) > 0 {
			had = true
			continue
		}
		if had && e.Type != "DELETED" && (released.IsZero() || e.ObservedAt.Before(released)) {
			return e.ObservedAt, true
		}
	}
	return time.Time{}, false
}

// signalMarks: SIGTERM when the workload logged it, SIGKILL when crictl
// reports exit code 137 (128 + 9) at the container's finish.
func signalMarks(obs []evidence.ContainerObservation) []Mark {
	var out []Mark
	var term, kill bool
	for _, o := range obs {
		if !term && o.Log != nil && o.Log.Signal == "SIGTERM" && o.Log.SignalAt != nil {
			term = true
			out = append(out, Mark{At: *o.Log.SignalAt, Kind: MarkSIGTERM})
		}
		if !kill && o.ExitCode != nil && *o.ExitCode == 137 && o.FinishedAt != nil {
			kill = true
			out = append(out, Mark{At: *o.FinishedAt, Kind: MarkSIGKILL})
		}
	}
	return out
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
	ready := Lane{Label: node + ": Ready", Note: "no Ready condition recorded"}
	var cur *Segment
	for _, e := range rec.NodeEventsFor(node) {
		kind, label := KindNotReady, "NotReady ("+e.Ready+")"
		if e.Ready == "True" {
			kind, label = KindReady, "Ready=True"
		}
		if cur != nil && cur.Kind == kind {
			continue
		}
		if cur != nil {
			cur.To = e.ObservedAt
			ready.Segments = append(ready.Segments, *cur)
		}
		cur = &Segment{From: e.ObservedAt, Kind: kind, Label: label}
	}
	if cur != nil {
		cur.To = end
		ready.Segments = append(ready.Segments, *cur)
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
