package scale

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/scaleruns"
)

// Bounds of the claims, each from the mechanism.
const (
	// namespaceRequeue is the longest the namespace controller waits between
	// two looks at a namespace whose content remains (k8s.io/kubernetes
	// v1.37.2 pkg/controller/namespace: it requeues after estimate/2+1 s).
	// The estimate is the longest terminationGracePeriodSeconds (30 s here)
	// of a pod not yet terminal while the namespace is younger in deletion
	// than that, else 15 s for pods with finalizers left
	// (finalizerEstimateSeconds): 30/2+1 = 16 s at most. The controller does
	// not watch pods, so the namespace goes at its first look after the last
	// finalizer went.
	namespaceRequeue = 16 * time.Second
	// namespaceSyncAllowance bounds that look itself on a loaded machine,
	// apart from deleting Events: LIST every namespaced resource type, drop
	// the namespace's finalizer, the watch event.
	namespaceSyncAllowance = 5 * time.Second
	// eventDeletionFloor is the slowest the API server is taken to delete the
	// namespace's Events in that last look (DeleteCollection, item by item).
	// The stages emit one Killing Event per pod while the namespace is being
	// deleted, after the controller's first look deleted the Events there
	// were, so the last look deletes thousands. Observed ≈ 320/s on this
	// 2-core machine (lab:scale, 5,000 pods); a third of that.
	eventDeletionFloor = 100 // Events per second
)

// GoneWithin is the bound: the namespace is gone within it after the last
// finalizer release finished, when events Events were in the namespace then.
func GoneWithin(events int) time.Duration {
	return namespaceRequeue + namespaceSyncAllowance + time.Duration(events)*time.Second/eventDeletionFloor
}

// Claim ids.
const (
	ClaimRan       = "scale.every_pod_ran"
	ClaimDeleted   = "scale.every_pod_deleted"
	ClaimHeld      = "scale.finalizers_held_until_released"
	ClaimNamespace = "scale.namespace_gone_within_bound"
	ClaimComplete  = "scale.record_complete"
)

// Files the claims cite.
const (
	eventsFile  = evidence.EventsFile
	recordFile  = evidence.RecordFile
	actionsFile = evidence.ActionsFile
	gapsFile    = evidence.WatchGapsFile
)

// Why each LIST was taken (evidence.PodList.Why begins with it).
const (
	listBefore = "before the namespace delete"
	listFinal  = "final"
)

// facts is what the claims read from the record, indexed once: a run has
// hundreds of thousands of pod events, read back from events.jsonl as a
// stream (evidence.EachPodEvent), so each pod keeps a summary, not its
// events, and nothing here scans the record per pod.
type facts struct {
	size       Size
	sizeOK     bool
	before     *evidence.PodList
	final      *evidence.PodList
	pods       map[string]*podFacts
	order      []string // pods in order of first event
	podEvents  int
	relisted   int
	readErr    error // reading the pod events back failed: the summaries stop there
	create     evidence.Action
	createOK   bool
	nsDelete   evidence.Action
	nsDeleteOK bool
	releases   map[string]evidence.Action
	lastRel    time.Time // the last release's end
	firstRel   time.Time
	gone       NamespaceGone
	goneOK     bool
	usage      Usage
	usageOK    bool
	// gapLast is, for each pods-watch gap (by its place in rec.Gaps), the
	// resourceVersion of the last watch event recorded before it began:
	// where the broken watch had got to. A re-list's LISTED states do not
	// count, and a bookmark is not recorded, so a watch that came back from a
	// bookmark's version counts as not resumed (erring on failure).
	gapLast map[int]string

	// For the figures.
	lastAdded, lastRunning, lastPlainDeleted, lastDeleted time.Time
	// addedPods counts each pod's first ADDED; mostAhead is the most pods
	// added and not yet first Running at once, in the order observed.
	addedPods, mostAhead  int
	plainDeleted, running int
	// markedToDeleted is, for each pod without a finalizer, its first
	// event with a deletionTimestamp → its DELETED, in seconds.
	markedToDeleted []float64
	// deletes are the API server's delete requests on the run's pods, by
	// sender (audit.jsonl); auditErr a read error of it.
	deletes  map[string]*Deleter
	auditErr error
	// audited counts the audit events of the run read back (0: no audit log).
	audited int
	// limits are the control plane's, as the run found them (limitsNote).
	limits   cluster.ControlPlaneLimits
	limitsOK bool
	// defaultRun is the default run a raised one is compared with
	// (defaultRunNote); nil when none was on record.
	defaultRun *scaleruns.Rates
	// writes are the writes on the run's pods, by sender; binds the
	// scheduler's bindings of them (UnixNano of their receipt).
	writes map[string]*writeLog
	binds  []int64
	// lastMarked is the last first-seen-deleting of a pod without finalizer.
	lastMarked time.Time
	// unreadied are the pods that lost Ready while they ran.
	unreadied unreadied
	// replays are kwok's stages played again on stale pod states.
	replays Replays
}

// podFacts is one pod's events, summed up in the order recorded.
type podFacts struct {
	uid      string
	mixedUID bool // its events carry more than one UID
	added    int
	deleted  int
	// deletedAt is its first DELETED.
	deletedAt time.Time
	hasListed bool // an event carries the LIST-before's resourceVersion
	// ranBeforeDelete: Running and Ready on a fake node of the run, seen
	// before the first event observed after the namespace delete began.
	ranBeforeDelete bool
	pastDelete      bool
	firstRunning    bool // counted for the Running figure
	// held: seen deleting (a deletionTimestamp) with the finalizer on.
	held bool
	// markedAt is its first event with a deletionTimestamp.
	markedAt time.Time
	// wasReady: an event of it had Ready True; unreadied: a later one lost
	// it while it ran (isUnreadied).
	wasReady, unreadied bool
	// runningSince is its container's startedAt while running (UnixNano);
	// replayed: it changed while the pod ran (Replays).
	runningSince int64
	replayed     bool
}

// read sums up the whole record: readKept, then one pass over the pod events.
func read(rec *evidence.Record) *facts {
	f := readKept(rec)
	listed := map[string]evidence.ListedPod{}
	finalized := map[string]bool{}
	if f.before != nil {
		for _, p := range f.before.Pods {
			listed[p.Name] = p
			finalized[p.Name] = hasFinalizer(p.Finalizers)
		}
	}
	f.readErr = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		f.add(e, listed[e.Name], finalized[e.Name])
		for i, g := range rec.Gaps {
			if g.Source == evidence.WatchPods && !e.ObservedAt.After(g.From) && e.Type != "LISTED" {
				f.gapLast[i] = e.ResourceVersion
			}
		}
		return true
	})
	f.deletes = map[string]*Deleter{}
	f.writes = map[string]*writeLog{}
	f.auditErr = rec.EachAudit(func(e evidence.AuditEvent) bool {
		f.audited++
		if isPodWrite(e, rec.Namespace) {
			f.addWrite(e)
			f.replays.addRefused(e)
		}
		if e.Resource != "pods" || e.Subresource != "" || (e.Verb != "delete" && e.Verb != "deletecollection") || e.Namespace != rec.Namespace {
			return true
		}
		who := e.Sender()
		d := f.deletes[who]
		if d == nil {
			agent, _, _ := strings.Cut(e.UserAgent, " ")
			d = &Deleter{Sender: who, UserAgent: agent, first: e.ReceivedAt}
			f.deletes[who] = d
		}
		d.Requests++
		if e.Verb == "deletecollection" {
			d.Collections++
		}
		switch {
		case e.Code == 404:
			d.NotFound++
		case e.Code < 300 && e.Result == evidence.AuditGone && e.Verb == "delete":
			d.Removed++
		}
		d.first, d.last = earlier(d.first, e.ReceivedAt), later(d.last, e.ReceivedAt)
		return true
	})
	f.replays.RefusedKnown = f.auditErr == nil && f.audited > 0
	return f
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// readKept reads what the record keeps in memory: the notes, the LISTs and
// the actions; not the pod events.
func readKept(rec *evidence.Record) *facts {
	f := &facts{pods: map[string]*podFacts{}, releases: map[string]evidence.Action{}, gapLast: map[int]string{}}
	for _, n := range rec.Notes {
		if rest, ok := strings.CutPrefix(n.Text, sizeNote); ok {
			f.sizeOK = json.Unmarshal([]byte(rest), &f.size) == nil
		}
		if rest, ok := strings.CutPrefix(n.Text, namespaceNote); ok {
			f.goneOK = json.Unmarshal([]byte(rest), &f.gone) == nil
		}
		if rest, ok := strings.CutPrefix(n.Text, usageNote); ok {
			f.usageOK = json.Unmarshal([]byte(rest), &f.usage) == nil
		}
		if rest, ok := strings.CutPrefix(n.Text, limitsNote); ok {
			f.limitsOK = json.Unmarshal([]byte(rest), &f.limits) == nil
		}
		if rest, ok := strings.CutPrefix(n.Text, defaultRunNote); ok {
			f.defaultRun = readDefaultRun(rest)
		}
	}
	for i := range rec.Lists {
		l := &rec.Lists[i]
		switch {
		case strings.HasPrefix(l.Why, listBefore) && f.before == nil:
			f.before = l
		case strings.HasPrefix(l.Why, listFinal):
			f.final = l
		}
	}
	for _, a := range rec.Actions {
		switch a.Kind {
		case "create-pods":
			f.create, f.createOK = a, a.Succeeded()
		case evidence.ActionDeleteNamespace:
			f.nsDelete, f.nsDeleteOK = a, a.Succeeded()
		case evidence.ActionRemoveFinalizers:
			if _, dup := f.releases[a.Target]; !dup {
				f.releases[a.Target] = a
			}
			if a.FinishedAt.After(f.lastRel) {
				f.lastRel = a.FinishedAt
			}
			if f.firstRel.IsZero() || a.StartedAt.Before(f.firstRel) {
				f.firstRel = a.StartedAt
			}
		}
	}
	return f
}

// add sums up one pod event, in the order recorded.
func (f *facts) add(e evidence.PodEvent, listed evidence.ListedPod, finalized bool) {
	f.podEvents++
	p := f.pods[e.Name]
	if p == nil {
		p = &podFacts{uid: e.UID}
		f.pods[e.Name] = p
		f.order = append(f.order, e.Name)
	}
	if e.Type == "LISTED" {
		f.relisted++
	}
	switch e.Type {
	case "ADDED":
		p.added++
	case "DELETED":
		p.deleted++
		if p.deleted == 1 {
			p.deletedAt = e.ObservedAt
		}
	}
	p.hasListed = p.hasListed || (listed.Name != "" && e.ResourceVersion == listed.ResourceVersion)
	p.mixedUID = p.mixedUID || e.UID != p.uid
	if f.nsDeleteOK && e.ObservedAt.After(f.nsDelete.StartedAt) {
		p.pastDelete = true
	}
	if !p.pastDelete && isRunning(e) && strings.HasPrefix(e.NodeName, "scale-") {
		p.ranBeforeDelete = true
	}
	if e.Type != "DELETED" && e.DeletionTimestamp != nil && e.HasFinalizer(Finalizer) {
		p.held = true
	}
	if e.DeletionTimestamp != nil && p.markedAt.IsZero() {
		p.markedAt = e.ObservedAt
	}
	if isUnreadied(e, p.wasReady) && !p.unreadied {
		p.unreadied = true
		f.unreadied.add(e)
	}
	p.wasReady = p.wasReady || e.Ready == "True"
	var again bool
	if p.runningSince, again = restarted(e, p.runningSince); again && !p.replayed {
		p.replayed = true
		f.replays.add(e)
	}
	if e.DeletionTimestamp != nil && p.markedAt.Equal(e.ObservedAt) && !finalized {
		f.lastMarked = later(f.lastMarked, e.ObservedAt)
	}
	if e.Type == "DELETED" && p.deleted == 1 && !finalized && !p.markedAt.IsZero() {
		f.markedToDeleted = append(f.markedToDeleted, e.ObservedAt.Sub(p.markedAt).Seconds())
	}
	// The figures: the last ADDED, the last DELETED (of a pod without a
	// finalizer too), and each pod's first Running.
	switch {
	case e.Type == "ADDED":
		f.lastAdded = later(f.lastAdded, e.ObservedAt)
		if p.added == 1 {
			f.addedPods++
			f.mostAhead = max(f.mostAhead, f.addedPods-f.running)
		}
	case e.Type == "DELETED":
		f.lastDeleted = later(f.lastDeleted, e.ObservedAt)
		if !finalized {
			f.plainDeleted++
			f.lastPlainDeleted = later(f.lastPlainDeleted, e.ObservedAt)
		}
	case isRunning(e) && !p.firstRunning:
		p.firstRunning = true
		f.running++
		f.lastRunning = later(f.lastRunning, e.ObservedAt)
	}
}

// deletedAt is the time of the pod's first DELETED event.
func (f *facts) deletedAt(pod string) (time.Time, bool) {
	if p := f.pods[pod]; p != nil && p.deleted > 0 {
		return p.deletedAt, true
	}
	return time.Time{}, false
}

// Claims decides lab:scale's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	f := read(rec)
	fig := figuresOf(f)
	cs := []claims.Claim{ran(f, fig), deleted(f, fig), held(rec, f, fig), namespaceGone(rec, f, fig), complete(rec, f, fig), nodesReady(f), claims.WatchOrder(rec, "scale")}
	if f.size.Pods >= paceMinPods {
		cs = append(cs, pace(rec, f), deletePace(f, fig))
	}
	return cs
}

// verdict builds one claim (claims.Builder).
type verdict struct{ *claims.Builder }

func newVerdict(id, statement string, evidence ...string) *verdict {
	return &verdict{claims.NewBuilder(id, statement, evidence...)}
}

// few names at most five items of a list, and how many there are.
func few(names []string) string {
	sort.Strings(names)
	if len(names) > 5 {
		return fmt.Sprintf("%s … (%d in all)", strings.Join(names[:5], ", "), len(names))
	}
	return strings.Join(names, ", ")
}

func ran(f *facts, fig Figures) claims.Claim {
	v := newVerdict(ClaimRan, "Every pod the run created — the size asked for, every one in the LIST taken before the namespace delete — was reported Running and Ready on a fake node of the run before the namespace delete was sent.", eventsFile, recordFile)
	if !v.Require(f.sizeOK, "the run's size was not recorded") || !v.Require(f.before != nil, "no LIST before the namespace delete was recorded") {
		return v.Done()
	}
	v.Observe("pods", f.size.Pods)
	v.Observe("listed_before_delete", len(f.before.Pods))
	v.Require(len(f.before.Pods) == f.size.Pods, "the LIST before the delete held %d pods, the run asked for %d", len(f.before.Pods), f.size.Pods)
	var notRunning []string
	running := 0
	for _, p := range f.before.Pods {
		if pf := f.pods[p.Name]; pf != nil && pf.ranBeforeDelete {
			running++
		} else {
			notRunning = append(notRunning, p.Name)
		}
	}
	v.Observe("running_before_delete", running)
	v.Require(len(notRunning) == 0, "%d pods were never reported Running and Ready on a fake node of the run before the delete: %s", len(notRunning), few(notRunning))
	v.Observe("create_pods_per_second", fig.CreatePerSecond)
	v.Observe("running_pods_per_second", fig.RunningPerSecond)
	return v.Done()
}

func deleted(f *facts, fig Figures) claims.Claim {
	v := newVerdict(ClaimDeleted, "Every pod of the LIST taken before the namespace delete reached DELETED on the watch, first seen with a deletionTimestamp only after the namespace delete was sent (the send and the watch's receipt are termlab's one clock: a pod marked before it was not the delete's doing), and the final LIST, taken after the namespace was gone, returned no pod.", eventsFile, recordFile, actionsFile)
	if !v.Require(f.before != nil, "no LIST before the namespace delete was recorded") ||
		!v.Require(f.nsDeleteOK, "the namespace delete was not recorded as sent") {
		return v.Done()
	}
	var missing, early []string
	for _, p := range f.before.Pods {
		if _, ok := f.deletedAt(p.Name); !ok {
			missing = append(missing, p.Name)
		}
		if pf := f.pods[p.Name]; pf != nil && !pf.markedAt.IsZero() && pf.markedAt.Before(f.nsDelete.StartedAt) {
			early = append(early, fmt.Sprintf("%s (%.3f s before)", p.Name, f.nsDelete.StartedAt.Sub(pf.markedAt).Seconds()))
		}
	}
	v.Observe("deleted", len(f.before.Pods)-len(missing))
	v.Require(len(missing) == 0, "%d listed pods never reached DELETED: %s", len(missing), few(missing))
	v.Observe("marked_before_namespace_delete", len(early))
	v.Require(len(early) == 0, "%d listed pods were seen with a deletionTimestamp before the namespace delete was sent (%s): %s", len(early), stamp(f.nsDelete.StartedAt), few(early))
	if v.Require(f.final != nil, "no final LIST was recorded") {
		v.Observe("final_list_pods", len(f.final.Pods))
		var left []string
		for _, p := range f.final.Pods {
			left = append(left, p.Name)
		}
		v.Require(len(left) == 0, "the final LIST still returned %d pods: %s", len(left), few(left))
	}
	v.Observe("deleted_pods_per_second", fig.DeletedPerSecond)
	v.Observe("delete_to_last_deleted_seconds", fig.DeleteToLastDeleted)
	return v.Done()
}

func held(rec *evidence.Record, f *facts, fig Figures) claims.Claim {
	v := newVerdict(ClaimHeld, fmt.Sprintf("Every pod carrying the finalizer %s stayed after the namespace delete — it was seen with a deletionTimestamp, no DELETED arrived before the lab's own request removing its finalizer began, and the API server applied that request (a pod already gone answers 404) — and reached DELETED after that request. The pods watch lost nothing from the namespace delete to the last release: a gap counts only when the watch came back from the last resourceVersion it had delivered (the gap's events then arrive late, none is missing, and a DELETED seen late is ruled out by the applied release).", Finalizer), eventsFile, actionsFile)
	if !v.Require(f.before != nil, "no LIST before the namespace delete was recorded") ||
		!v.Require(f.nsDeleteOK, "the namespace delete was not recorded as sent") {
		return v.Done()
	}
	var early, unapplied, unreleased, unheld, never []string
	n := 0
	var worst time.Duration
	for _, p := range f.before.Pods {
		if !hasFinalizer(p.Finalizers) {
			continue
		}
		n++
		rel, released := f.releases[p.Name]
		d, isDeleted := f.deletedAt(p.Name)
		seen := f.pods[p.Name] != nil && f.pods[p.Name].held
		switch {
		case isDeleted && (!released || d.Before(rel.StartedAt)):
			early = append(early, p.Name)
		case !released:
			unreleased = append(unreleased, p.Name)
		case !rel.Succeeded():
			unapplied = append(unapplied, p.Name+" ("+rel.Error+")")
		case !isDeleted:
			never = append(never, p.Name)
		default:
			worst = max(worst, d.Sub(rel.StartedAt))
		}
		if !seen {
			unheld = append(unheld, p.Name)
		}
	}
	v.Observe("finalizer_pods", n)
	v.Require(n > 0 || f.size.FinalizerPercent == 0, "no listed pod carried the finalizer")
	v.Require(!f.sizeOK || n == f.size.Finalized(), "%d listed pods carried the finalizer, the size asks for %d", n, f.size.Finalized())
	v.Observe("deleted_before_release", len(early))
	v.Require(len(early) == 0, "%d finalizer pods were DELETED before the lab released them: %s", len(early), few(early))
	v.Require(len(unheld) == 0, "%d finalizer pods were never seen deleting with the finalizer on: %s", len(unheld), few(unheld))
	v.Require(len(unreleased) == 0, "%d finalizer pods were never released by the lab: %s", len(unreleased), few(unreleased))
	v.Require(len(unapplied) == 0, "the API server did not apply the lab's release of %d finalizer pods: %s", len(unapplied), few(unapplied))
	v.Require(len(never) == 0, "%d finalizer pods were released but never reached DELETED: %s", len(never), few(never))
	v.Observe("release_to_deleted_max_seconds", seconds(worst))
	v.Observe("held_for_seconds", fig.HeldFor)
	to := f.lastRel
	if to.IsZero() {
		to = rec.EndedAt
	}
	resumed := 0
	for i, g := range rec.Gaps {
		if g.Source != evidence.WatchPods || !g.Overlaps(f.nsDelete.StartedAt, to) {
			continue
		}
		v.Cite(gapsFile)
		if f.resumedLosslessly(i, g) {
			resumed++
			continue
		}
		v.Require(false, "the pods watch was down from %s to %s, between the namespace delete and the last release, and did not come back from the last resourceVersion it had delivered: %s", stamp(g.From), stamp(g.To), g.Why)
	}
	v.Observe("pods_watch_gaps_resumed_losslessly", resumed)
	return v.Done()
}

// resumedLosslessly: the pods watch came back from the resourceVersion of
// the last event it had delivered before gap i (the API server then sends
// every change after it: the gap's events arrive late, none is missing).
func (f *facts) resumedLosslessly(i int, g evidence.WatchGap) bool {
	return g.ResumedFrom != "" && g.ResumedFrom == f.gapLast[i]
}

func hasFinalizer(fs []string) bool {
	for _, x := range fs {
		if x == Finalizer {
			return true
		}
	}
	return false
}

func namespaceGone(rec *evidence.Record, f *facts, fig Figures) claims.Claim {
	from := f.lastRel
	if from.IsZero() {
		from = f.nsDelete.FinishedAt
	}
	events := eventsAt(rec, from)
	bound := GoneWithin(events)
	v := newVerdict(ClaimNamespace, fmt.Sprintf("The namespace was gone (its DELETED on the lab's namespace watch) within %s after the last finalizer release finished: the namespace controller does not watch pods, it looks again at a namespace whose content remains every estimate/2+1 s — at most %s (30 s grace of pods not yet terminal, else 15 s for finalizers left); that last look deletes what remains, here %d Events (the stages' one Killing per pod, emitted after its first look), at %d/s at least (≈320/s observed), and %s is allowed for the rest of it on a loaded machine (LIST every namespaced resource type, drop the namespace's finalizer, the watch event).",
		claims.InSeconds(bound), claims.InSeconds(namespaceRequeue), events, eventDeletionFloor, claims.InSeconds(namespaceSyncAllowance)), recordFile, actionsFile, evidence.KubeEventsFile)
	v.Observe("events_left_at_last_release", events)
	if !v.Require(f.goneOK, "the namespace's DELETED was not recorded") ||
		!v.Require(!f.lastRel.IsZero() || f.size.FinalizerPercent == 0, "no finalizer release was recorded") {
		return v.Done()
	}
	after := f.gone.ObservedAt.Sub(from)
	v.Observe("gone_after_last_release_seconds", seconds(after))
	v.Observe("gone_after_delete_seconds", fig.DeleteToNamespaceGone)
	v.Require(!f.gone.AlreadyGone, "the namespace was already gone when the lab began to watch it: its time is not known")
	v.Require(after <= bound, "the namespace was gone %s after the last release, beyond %s", claims.InSeconds(after.Round(time.Millisecond)), claims.InSeconds(bound))
	return v.Done()
}

// eventsAt is how many Events the record shows in the namespace at t:
// ADDED less DELETED, observed before t.
func eventsAt(rec *evidence.Record, t time.Time) int {
	n := 0
	for _, e := range rec.KubeEvents {
		if e.ObservedAt.After(t) {
			break
		}
		switch e.Type {
		case "ADDED":
			n++
		case "DELETED":
			n--
		}
	}
	return max(n, 0)
}

func complete(rec *evidence.Record, f *facts, fig Figures) claims.Claim {
	v := newVerdict(ClaimComplete, "The record holds exactly one ADDED and exactly one DELETED per pod of the LIST taken before the namespace delete (0 events lost, 0 duplicates), every listed pod's state at that LIST (its resourceVersion) among its events, no event of a pod the LIST does not name (the order of each pod's events, a resourceVersion twice or an event after DELETED among them, is scale.watch_order's); the final LIST returns none of them; and the pods watch never lost its place: a gap fails it unless the watch came back from the resourceVersion of the last event recorded before the gap (the API server then sends every change after it: the gap's events arrive late, none is missing); a re-list fails it (what happened in between may be lost).", eventsFile, recordFile, gapsFile)
	if !v.Require(f.before != nil, "no LIST before the namespace delete was recorded") {
		return v.Done()
	}
	listed := map[string]evidence.ListedPod{}
	for _, p := range f.before.Pods {
		listed[p.Name] = p
	}
	var lost, dupes, stale, strangers, wrongUID []string
	added, dels := 0, 0
	for _, p := range f.before.Pods {
		pf := f.pods[p.Name]
		if pf == nil {
			pf = &podFacts{uid: p.UID}
		}
		added += min(pf.added, 1)
		dels += min(pf.deleted, 1)
		if pf.added == 0 || pf.deleted == 0 {
			lost = append(lost, p.Name)
		}
		if pf.added > 1 || pf.deleted > 1 {
			dupes = append(dupes, p.Name)
		}
		if !pf.hasListed {
			stale = append(stale, p.Name)
		}
		if pf.mixedUID || pf.uid != p.UID {
			wrongUID = append(wrongUID, p.Name)
		}
	}
	for _, name := range f.order {
		if _, ok := listed[name]; !ok {
			strangers = append(strangers, name)
		}
	}
	v.Observe("listed", len(listed))
	v.Observe("pods_with_added", added)
	v.Observe("pods_with_deleted", dels)
	v.Observe("events_lost", len(lost))
	v.Observe("duplicates", len(dupes))
	v.Observe("pod_events", f.podEvents)
	v.Require(f.readErr == nil, "the pod events could not be read back whole: %v", f.readErr)
	v.Require(len(lost) == 0, "%d pods lack their ADDED or DELETED: %s", len(lost), few(lost))
	v.Require(len(dupes) == 0, "%d duplicate events: %s", len(dupes), few(dupes))
	v.Require(len(stale) == 0, "%d pods' listed state (resourceVersion) is not in the record: %s", len(stale), few(stale))
	v.Require(len(strangers) == 0, "events of %d pods the LIST does not name: %s", len(strangers), few(strangers))
	v.Require(len(wrongUID) == 0, "events of %d pods carry another UID than the LIST's: %s", len(wrongUID), few(wrongUID))
	v.Require(f.relisted == 0, "%d pod states came from a re-list, not the watch", f.relisted)
	if v.Require(f.final != nil, "no final LIST was recorded") {
		v.Require(len(f.final.Pods) == 0, "the final LIST returned %d pods", len(f.final.Pods))
	}
	gaps, resumed := 0, 0
	for i, g := range rec.Gaps {
		if g.Source != evidence.WatchPods {
			continue
		}
		gaps++
		if f.resumedLosslessly(i, g) {
			resumed++
			continue
		}
		v.Require(false, "the pods watch was down from %s to %s and did not come back from the last resourceVersion recorded before (%q): %s", stamp(g.From), stamp(g.To), f.gapLast[i], g.Why)
	}
	v.Observe("pods_watch_gaps", gaps)
	v.Observe("pods_watch_gaps_resumed_losslessly", resumed)
	if f.usageOK {
		v.Observe("process_cpu_seconds", f.usage.CPUSeconds)
		v.Observe("process_peak_rss_mib", f.usage.PeakRSSMiB)
		v.Observe("recorder_bytes_written", f.usage.BytesWritten)
	}
	return v.Done()
}

func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "the end of the record"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
