package report

import (
	"fmt"
	"slices"
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

// What a lane shows.
const (
	LaneAPI       = "api"    // what the API server reports of one incarnation
	LaneContainer = "crictl" // one container on its node, as crictl reports it
	LaneNode      = "node"   // a node the lab acted on
	LaneLedger    = "ledger" // the writes a lab's ledger received, by incarnation
)

// Lane is one row of the timeline.
type Lane struct {
	// Pod is the pod the lane is about ("" for a node lane).
	Pod string
	// UID is the incarnation of Pod the lane belongs to: a pod name reused
	// (a StatefulSet's replacement) is a new object with its own lanes.
	UID string
	// Incarnation numbers the pod name's UIDs from 1 when it had more than
	// one (0: one incarnation, the label needs no number).
	Incarnation int
	Kind        string // LaneAPI, LaneContainer or LaneNode
	Node        string // the node a container lane's container ran on
	// Container is a container lane's container name, as the pod's status
	// reported it ("" when the status never named it).
	Container string
	// Fake: the pod ran on a kwok fake node, where no container exists.
	Fake     bool
	Label    string
	Segments []Segment
	// Note is shown when the lane has no evidence.
	Note string
	// Writes are a ledger lane's writes: when each arrived and from which
	// incarnation (Incarnation numbers of the lanes above).
	Writes []LedgerWrite
}

// LedgerWrite is one write a ledger received.
type LedgerWrite struct {
	At          time.Time
	Incarnation int
}

// Band is an interval drawn across lanes Top..Bottom (indices into
// Timeline.Lanes): an orphan or an overlap.
type Band struct {
	From, To    time.Time
	Top, Bottom int
	Label       string
}

// Seconds is the band's length.
func (b Band) Seconds() float64 { return b.To.Sub(b.From).Seconds() }

// Marker is an action of the lab, drawn as a numbered vertical line, or a
// moment the lab knows of (Run.Moments).
type Marker struct {
	At    time.Time
	Label string
	// Pod, for a moment, is the pod on whose lanes the lane picture draws it
	// as a numbered badge: its container Container's crictl lane, or its API
	// lane when Container is "". A moment without a pod is drawn across the
	// picture (the aggregate draws every moment that way).
	Pod, Container string
	// Kind names what the moment is (the lab's own word, e.g. "exit"), for
	// tests and browsers to tell the badges apart.
	Kind string
}

// LaneMoment is a moment of the lab drawn as a numbered badge on a lane
// (Lane: index into Timeline.Lanes, -1: across the picture). N numbers the
// moments in the order the lab gave them.
type LaneMoment struct {
	Marker
	Lane, N int
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
	// Orphans are the intervals where a container ran with no API object of
	// its own: its incarnation's object was gone (a same-named replacement
	// does not count). Each spans that incarnation's lanes.
	Orphans []Band
	// Overlaps are the intervals where containers of two incarnations of one
	// pod name ran at once (a StatefulSet's split brain). Each spans the
	// lanes from the first container's to the second's.
	Overlaps []Band
	// Moments are the lab's own moments (Run.Moments), placed on lanes by
	// AddMoments.
	Moments []LaneMoment
}

// AddMoments places the lab's moments on the lanes they name.
func (tl *Timeline) AddMoments(moments []Marker) {
	for i, m := range moments {
		lane := -1
		if m.Pod != "" {
			for j, l := range tl.Lanes {
				if l.Pod == m.Pod && (m.Container == "" && l.Kind == LaneAPI || m.Container != "" && l.Kind == LaneContainer && l.Container == m.Container) {
					lane = j
					break
				}
			}
		}
		tl.Moments = append(tl.Moments, LaneMoment{Marker: m, Lane: lane, N: i + 1})
	}
}

// BuildTimeline derives the lanes from the record: per incarnation (UID) of
// each drawn pod, the API object's life (exists, deletionTimestamp set,
// gone) and each of its containers' life on its node from crictl evidence;
// per node acted on, kubelet stopped and NotReady. decided are the run's
// claims: a pod is drawn when the lab acted on it or a claim cites it.
func BuildTimeline(rec *evidence.Record, decided []claims.Claim) Timeline {
	tl := timeFrame(rec)
	pods, omitted := LanePods(rec, decided)
	for _, a := range rec.Actions {
		if omitted[a.Target] {
			continue
		}
		tl.Markers = append(tl.Markers, Marker{At: a.StartedAt, Label: string(a.Kind) + " " + a.Target})
	}
	// Numbered in time order, so that markers close in time get neighbouring numbers.
	sort.SliceStable(tl.Markers, func(i, j int) bool { return tl.Markers[i].At.Before(tl.Markers[j].At) })
	for _, pod := range pods {
		tl.addPod(rec, pod)
	}
	if l, ok := tl.ledgerLane(rec); ok {
		tl.Lanes = append(tl.Lanes, l)
	}
	for _, node := range actedNodes(rec) {
		tl.Lanes = append(tl.Lanes, nodeLanes(rec, node, tl.End)...)
	}
	return tl
}

// timeFrame is a timeline without lanes: the run's start and end, and its
// origin, the first delete the lab sent (times are drawn from it).
func timeFrame(rec *evidence.Record) Timeline {
	tl := Timeline{Start: rec.StartedAt, End: rec.EndedAt}
	if tl.End.Before(tl.Start) || tl.End.IsZero() {
		tl.End = lastTime(rec)
	}
	tl.Origin = tl.Start
	for _, a := range rec.Actions {
		if strings.HasSuffix(string(a.Kind), "delete") && (tl.Origin.Equal(tl.Start) || a.StartedAt.Before(tl.Origin)) {
			tl.Origin = a.StartedAt
		}
	}
	return tl
}

// ledgerLane: which incarnation wrote when, from the last read of the lab's
// ledger (it holds every earlier write), for a pod name drawn with more than
// one incarnation (lab:statefulset's split brain).
func (tl *Timeline) ledgerLane(rec *evidence.Record) (Lane, bool) {
	read, ok := rec.LastLedger()
	if !ok {
		return Lane{}, false
	}
	incarnation := map[string]int{}
	pod := ""
	for _, l := range tl.Lanes {
		if l.Kind == LaneAPI && l.Incarnation > 0 {
			incarnation[l.UID], pod = l.Incarnation, l.Pod
		}
	}
	lane := Lane{Kind: LaneLedger, Pod: pod, Label: "ledger: writes of " + pod}
	for _, e := range read.Entries {
		if n, ok := incarnation[e.UID]; ok {
			lane.Writes = append(lane.Writes, LedgerWrite{At: e.ReceivedAt, Incarnation: n})
		}
	}
	return lane, len(lane.Writes) > 0
}

// addPod appends the lanes of every incarnation of pod, its orphans, and the
// overlaps of its incarnations' containers.
func (tl *Timeline) addPod(rec *evidence.Record, pod string) {
	uids := rec.UIDsOf(pod)
	if len(uids) == 0 {
		uids = []string{""} // crictl evidence without a watch event
	}
	byUID := containersByUID(rec, pod, uids)
	var running []int // container lanes of this pod name, for the overlaps
	for n, uid := range uids {
		api := apiLane(eventsOf(rec, pod, uid), tl.End)
		api.Pod, api.UID, api.Kind = pod, uid, LaneAPI
		if len(uids) > 1 {
			api.Incarnation = n + 1
		}
		api.Label = laneName(api) + ": API"
		obs := byUID[uid]
		if len(obs) == 0 && onFakeNode(rec, pod) {
			// A kwok pod has no container: its one lane is what the API reports.
			api.Fake = true
			api.Label = laneName(api) + ": API (kwok)"
			tl.Lanes = append(tl.Lanes, api)
			tl.markFinalizers(rec, pod, len(tl.Lanes)-1)
			continue
		}
		apiIndex := len(tl.Lanes)
		tl.Lanes = append(tl.Lanes, api)
		tl.markFinalizers(rec, pod, apiIndex)
		named, order := podContainers(rec, pod, uid)
		for _, group := range inStatusOrder(byContainer(obs), order) {
			ctr := containerLane(group, tl.End)
			ctr.Pod, ctr.UID, ctr.Incarnation, ctr.Kind = pod, uid, api.Incarnation, LaneContainer
			ctr.Container = named[shortID(group[0].ContainerID)]
			ctr.Label = laneName(ctr) + ": crictl"
			if len(named) > 1 {
				// A pod of several containers (lab:sidecar's native
				// sidecars): each lane names its container.
				ctr.Label = laneName(ctr) + "/" + ctr.Container + ": crictl"
			}
			if len(uids) > 1 {
				// The incarnations ran on different nodes; the API lane above gives the UID.
				ctr.Label = fmt.Sprintf("%s #%d: crictl on %s", pod, ctr.Incarnation, ctr.Node)
			}
			tl.Lanes = append(tl.Lanes, ctr)
			for _, m := range signalMarks(group) {
				m.Lane = len(tl.Lanes) - 1
				tl.Marks = append(tl.Marks, m)
			}
			tl.addOrphans(api, ctr, apiIndex, len(tl.Lanes)-1)
			running = append(running, len(tl.Lanes)-1)
		}
		if len(obs) == 0 {
			ctr := Lane{Pod: pod, UID: uid, Incarnation: api.Incarnation, Kind: LaneContainer, Note: noEvidenceNote(rec, pod)}
			ctr.Label = laneName(ctr) + ": crictl"
			tl.Lanes = append(tl.Lanes, ctr)
		}
	}
	tl.addOverlaps(running)
}

// laneName is the pod's name, numbered when the name had more incarnations.
func laneName(l Lane) string {
	if l.Incarnation == 0 {
		return l.Pod
	}
	return fmt.Sprintf("%s #%d (uid %s)", l.Pod, l.Incarnation, shortUID(l.UID))
}

func shortUID(uid string) string {
	if len(uid) > 8 {
		return uid[:8]
	}
	return uid
}

func (tl *Timeline) markFinalizers(rec *evidence.Record, pod string, lane int) {
	if at, ok := finalizersEmptied(rec, pod); ok {
		tl.Marks = append(tl.Marks, Mark{At: at, Kind: MarkFinalizersEmptied, Lane: lane})
	}
}

// addOrphans: the container ran while its own incarnation's object was gone.
func (tl *Timeline) addOrphans(api, ctr Lane, apiIndex, ctrIndex int) {
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
				tl.Orphans = append(tl.Orphans, Band{From: from, To: to, Top: apiIndex, Bottom: ctrIndex,
					Label: laneName(api) + ": container running, its API object gone"})
			}
		}
	}
}

// addOverlaps: containers of two incarnations of one pod name running at once.
func (tl *Timeline) addOverlaps(lanes []int) {
	for i, a := range lanes {
		for _, b := range lanes[i+1:] {
			if tl.Lanes[a].UID == tl.Lanes[b].UID {
				continue
			}
			for _, ra := range tl.Lanes[a].Segments {
				for _, rb := range tl.Lanes[b].Segments {
					if ra.Kind != KindRunning || rb.Kind != KindRunning {
						continue
					}
					from, to := maxTime(ra.From, rb.From), minTime(ra.To, rb.To)
					if from.Before(to) {
						tl.Overlaps = append(tl.Overlaps, Band{From: from, To: to, Top: a, Bottom: b,
							Label: fmt.Sprintf("two %s running at once: %s", tl.Lanes[a].Pod, FormatSeconds(to.Sub(from).Seconds()))})
					}
				}
			}
		}
	}
}

// eventsOf are the pod's watch events of one incarnation (all of them when uid is "").
func eventsOf(rec *evidence.Record, pod, uid string) []evidence.PodEvent {
	var out []evidence.PodEvent
	for _, e := range rec.EventsFor(pod) {
		if uid == "" || e.UID == uid || e.UID == "" {
			out = append(out, e)
		}
	}
	return out
}

// containersByUID assigns the pod's crictl observations to its incarnations:
// by the container ID the incarnation's status reported, else by the node
// it was bound to, else to the first one.
func containersByUID(rec *evidence.Record, pod string, uids []string) map[string][]evidence.ContainerObservation {
	ownerOfID, nodeOf := map[string]string{}, map[string]string{}
	for _, e := range rec.EventsFor(pod) {
		for _, c := range e.Containers {
			if c.ContainerID != "" {
				ownerOfID[c.ContainerID] = e.UID
			}
		}
		if e.NodeName != "" && nodeOf[e.UID] == "" {
			nodeOf[e.UID] = e.NodeName
		}
	}
	out := map[string][]evidence.ContainerObservation{}
	for _, o := range rec.ContainersFor(pod) {
		owner, ok := ownerOfID[o.ContainerID]
		if !ok || !slices.Contains(uids, owner) {
			owner = uids[0]
			for _, uid := range uids {
				if nodeOf[uid] == o.Node {
					owner = uid
					break
				}
			}
		}
		out[owner] = append(out[owner], o)
	}
	return out
}

// podContainers maps each container ID (without its runtime prefix) the
// incarnation's status reported to the container's name, and lists the IDs
// in the status's order: init containers (native sidecars among them)
// first, then the main containers.
func podContainers(rec *evidence.Record, pod, uid string) (names map[string]string, order []string) {
	names = map[string]string{}
	for _, e := range eventsOf(rec, pod, uid) {
		for _, c := range append(append([]evidence.ContainerState(nil), e.InitContainers...), e.Containers...) {
			id := shortID(c.ContainerID)
			if id == "" {
				continue
			}
			if _, seen := names[id]; !seen {
				order = append(order, id)
			}
			names[id] = c.Name
		}
	}
	return names, order
}

// shortID is a container ID without its runtime prefix ("containerd://").
func shortID(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}

// inStatusOrder orders the groups as the status lists their containers;
// groups of containers it never named keep their order, after those.
func inStatusOrder(groups [][]evidence.ContainerObservation, order []string) [][]evidence.ContainerObservation {
	rank := map[string]int{}
	for i, id := range order {
		rank[id] = i
	}
	out := append([][]evidence.ContainerObservation(nil), groups...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, oki := rank[shortID(out[i][0].ContainerID)]
		rj, okj := rank[shortID(out[j][0].ContainerID)]
		switch {
		case oki && okj:
			return ri < rj
		default:
			return oki && !okj
		}
	})
	return out
}

// byContainer groups observations by container ID, in order of first look.
func byContainer(obs []evidence.ContainerObservation) [][]evidence.ContainerObservation {
	var order []string
	groups := map[string][]evidence.ContainerObservation{}
	for _, o := range obs {
		if _, seen := groups[o.ContainerID]; !seen {
			order = append(order, o.ContainerID)
		}
		groups[o.ContainerID] = append(groups[o.ContainerID], o)
	}
	out := make([][]evidence.ContainerObservation, 0, len(order))
	for _, id := range order {
		out = append(out, groups[id])
	}
	return out
}

func noEvidenceNote(rec *evidence.Record, pod string) string {
	for _, n := range rec.Notes {
		if strings.Contains(n.Text, pod) {
			return n.Text
		}
	}
	return "no node evidence"
}

// LanePods returns the pods the picture draws, in order of first
// appearance, and the ones it leaves out: a pod the lab acted on or a claim
// cites, up to MaxDrawnPods. A helper (lab:statefulset's ledger Deployment)
// is left out unless a claim cites it. When nothing qualifies (a record
// without claims or actions on pods) every pod is drawn.
func LanePods(rec *evidence.Record, decided []claims.Claim) (drawn []string, omitted map[string]bool) {
	all := rec.Pods()
	keep := map[string]bool{}
	for _, a := range rec.Actions {
		keep[a.Target] = true
	}
	for _, pod := range all {
		if citedByClaim(pod, decided) {
			keep[pod] = true
		}
	}
	var wanted []string
	omitted = map[string]bool{}
	for _, pod := range all {
		if keep[pod] {
			wanted = append(wanted, pod)
		} else {
			omitted[pod] = true
		}
	}
	if len(wanted) == 0 {
		wanted, omitted = all, map[string]bool{}
	}
	if len(wanted) > MaxDrawnPods {
		for _, p := range wanted[MaxDrawnPods:] {
			omitted[p] = true
		}
		wanted = wanted[:MaxDrawnPods]
	}
	return wanted, omitted
}

// citedByClaim: a claim names the pod in its evidence paths (a step's
// "<pod>-crictl-inspect.json") or its observed values. Claims carry no typed
// list of the pods they rest on, so this looks for the name in those
// strings; a name that is the prefix of another pod's could be counted
// cited by mistake, which only draws one lane too many.
func citedByClaim(pod string, decided []claims.Claim) bool {
	for _, c := range decided {
		for _, path := range c.Evidence {
			if strings.Contains(path, pod) {
				return true
			}
		}
		for _, v := range c.Observed {
			if mentions(v, pod) {
				return true
			}
		}
	}
	return false
}

// mentions walks an observed value (as decoded from JSON or set by a claim).
func mentions(v any, pod string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, pod)
	case []string:
		return slices.ContainsFunc(x, func(s string) bool { return strings.Contains(s, pod) })
	case []any:
		return slices.ContainsFunc(x, func(e any) bool { return mentions(e, pod) })
	case map[string]any:
		for _, e := range x {
			if mentions(e, pod) {
				return true
			}
		}
	}
	return false
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

func apiLane(events []evidence.PodEvent, end time.Time) Lane {
	var lane Lane
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

// containerLane draws one container from its observations (one container ID).
func containerLane(obs []evidence.ContainerObservation, end time.Time) Lane {
	lane := Lane{Node: obs[0].Node}
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
	label := "exited"
	if finished == nil {
		// The kubelet may remove an exited container before crictl looks
		// (lab:sidecar's, within milliseconds): then the workload's own exit
		// line, written as it exits, is when it stopped running.
		for _, o := range obs {
			if o.Log != nil && o.Log.ExitAt != nil {
				finished, label = o.Log.ExitAt, "exited (its log)"
			}
		}
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
		if a.Kind == evidence.ActionRemoveFinalizers && a.Target == pod {
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
		if strings.HasSuffix(string(a.Kind), "-kubelet") && !seen[a.Target] {
			seen[a.Target] = true
			out = append(out, a.Target)
		}
	}
	return out
}

// nodeLanes are two rows for a node the lab acted on: its kubelet (stopped
// by the lab) and its Ready condition (as watched).
func nodeLanes(rec *evidence.Record, node string, end time.Time) []Lane {
	kubelet := Lane{Kind: LaneNode, Node: node, Label: node + ": kubelet", Note: "kubelet running throughout"}
	var stoppedAt *time.Time
	for _, a := range rec.Actions {
		if a.Target != node {
			continue
		}
		switch a.Kind {
		case evidence.ActionStopKubelet:
			t := a.StartedAt
			stoppedAt = &t
		case evidence.ActionStartKubelet:
			if stoppedAt != nil {
				kubelet.Segments = append(kubelet.Segments, Segment{From: *stoppedAt, To: a.StartedAt, Kind: KindKubeletStopped, Label: "kubelet stopped"})
				stoppedAt = nil
			}
		}
	}
	if stoppedAt != nil {
		kubelet.Segments = append(kubelet.Segments, Segment{From: *stoppedAt, To: end, Kind: KindKubeletStopped, Label: "kubelet stopped"})
	}
	ready := Lane{Kind: LaneNode, Node: node, Label: node + ": Ready", Note: "no Ready condition recorded"}
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
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool { bump(e.ObservedAt); return true })
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
