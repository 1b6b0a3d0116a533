package claims

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Files every deletion claim rests on.
var (
	eventsFile  = evidence.EventsFile
	actionsFile = evidence.ActionsFile
	nodesFile   = evidence.NodesFile
)

// ContainerID returns the container ID the API reported for the pod (the
// first one seen in its status), as crictl names it.
func ContainerID(rec *evidence.Record, pod string) (string, bool) {
	for _, e := range rec.EventsFor(pod) {
		for _, c := range e.Containers {
			if c.ContainerID != "" {
				return c.ContainerID, true
			}
		}
	}
	return "", false
}

// action finds a successful action or fails the check.
func action(k *check, rec *evidence.Record, kind evidence.ActionKind, target string) (evidence.Action, bool) {
	a, ok := rec.Action(kind, target)
	if !ok {
		k.require(false, "no %s request on %s was recorded", kind, target)
		return a, false
	}
	k.cite(actionsFile)
	if !k.require(a.Succeeded(), "the %s request on %s failed: %s", kind, target, a.Error) {
		return a, false
	}
	return audited(k, rec, a)
}

// audited checks a recorded action against the API server's own record of
// it, when the run has one (audit.jsonl): the request must have arrived with
// the options the action's kind stands for and been answered 2xx. The
// action keeps termlab's own (host) times: a timing from it is since(),
// which takes the server's receipt on the server's clock. Without an audit
// record the action stands as termlab recorded it.
func audited(k *check, rec *evidence.Record, a evidence.Action) (evidence.Action, bool) {
	e, ok := rec.AuditFor(a)
	if !ok {
		if rec.AuditCount() > 0 && a.APIRequest() {
			// The run has an audit log, yet nothing in it matches: say that
			// this action stands on termlab's own account alone.
			k.observe(strings.ReplaceAll(string(a.Kind), "-", "_")+"_source", fmt.Sprintf("termlab's own record of its request: the audit log has no entry within %s of it (the API server's times corrected by its measured offset)", evidence.AuditSlack))
		}
		return a, true
	}
	k.cite(evidence.AuditFile)
	ok = k.require(e.Succeeded(), "the API server answered the %s request on %s with %d (audit log)", a.Kind, a.Target, e.Code)
	switch a.Kind {
	case evidence.ActionForceDelete:
		ok = k.require(e.GracePeriodSeconds != nil && *e.GracePeriodSeconds == 0,
			"the API server received the %s request on %s with gracePeriodSeconds %s, not 0 (audit log, %s)", a.Kind, a.Target, int64String(e.GracePeriodSeconds), stamp(e.ReceivedAt)) && ok
	case evidence.ActionDelete:
		ok = k.require(e.GracePeriodSeconds == nil || *e.GracePeriodSeconds > 0,
			"the API server received the ordinary %s request on %s with gracePeriodSeconds %s (audit log, %s)", a.Kind, a.Target, int64String(e.GracePeriodSeconds), stamp(e.ReceivedAt)) && ok
	}
	return a, ok
}

// since is the time from the action to a moment the host read (a watch
// event, a crictl look), on the host's clock: from the API server's receipt
// of the request where the audit log has it (on the server's clock,
// corrected by its offset), else from termlab's send (evidence.ActionStamp).
// Every timing of a claim from an action goes through it and withinClocks.
func since(rec *evidence.Record, act evidence.Action, t time.Time) evidence.Interval {
	return rec.Between(rec.ActionStamp(act), evidence.OnHost(t))
}

// Held: a delete that a finalizer holds back.
type Held struct {
	ID, Statement string
	Pod           string
	Finalizer     string
	// Delete is the action kind that asked for deletion ("delete", "force-delete").
	Delete evidence.ActionKind
	// Release is the action kind that removes the finalizer; the hold is judged up to it.
	Release evidence.ActionKind
	// GracePeriod, if set, is the deletionGracePeriodSeconds the object must show after Delete.
	GracePeriod *int64
	// MinHold is a precondition (see Precondition): termlab sends the
	// Release no sooner than this after the Delete was answered.
	MinHold time.Duration
	// UpdateSeenWithin, if set, needs the watch to show what the Delete
	// asks for (a deletionTimestamp, and GracePeriod when set) within this
	// of the request: the API server writes it before it answers, and a
	// watch sees every write, so a later GET showing it is no substitute.
	// An event before the request that already showed it meets it too:
	// then the request has nothing to write (the kubelet's or kwok's own
	// grace-0 delete can come first).
	UpdateSeenWithin time.Duration
}

// DeletionHeld decides that after the delete the object carries a
// deletionTimestamp (and the grace period asked for), keeps the finalizer and
// is not deleted until the finalizer is released. That termlab waits MinHold
// before the release is the claim's precondition: its actual value runs
// from the delete's answer to the release request (to the record's end
// without one), whatever the cluster did.
func DeletionHeld(rec *evidence.Record, h Held) Claim {
	k := newCheck(h.ID, h.Statement)
	del, ok := action(k, rec, h.Delete, h.Pod)
	if !ok {
		return k.done()
	}
	holdEnd := rec.EndedAt
	if rel, ok := rec.Action(h.Release, h.Pod); ok {
		holdEnd = rel.StartedAt
	}
	k.precondition("hold_before_release_seconds", fmt.Sprintf("termlab sends the %s request no sooner than %s after the %s request was answered", h.Release, InSeconds(h.MinHold), h.Delete), h.MinHold, holdEnd.Sub(del.FinishedAt), true)
	if gone, ok := rec.Deleted(h.Pod); ok && gone.ObservedAt.Before(holdEnd) {
		k.contradicts(false, "a DELETED event arrived at %s, before the finalizer was released", stamp(gone.ObservedAt))
		k.observe("deleted_before_release", true)
		holdEnd = gone.ObservedAt
	} else {
		k.observe("deleted_before_release", false)
		// No DELETED before the release is an absence: the pod watch must have been up all along.
		k.watchedThroughout(rec, evidence.WatchPods, del.StartedAt, holdEnd)
	}
	k.cite(eventsFile)

	// What the API showed after the request and before the lab's next action
	// on the pod: watch events and snapshots.
	seenEnd := holdEnd
	for _, a := range rec.Actions {
		if a.Target == h.Pod && a.StartedAt.After(del.StartedAt) && a.StartedAt.Before(seenEnd) {
			seenEnd = a.StartedAt
		}
	}
	type seen struct {
		at    time.Time
		state evidence.PodState
		from  string
	}
	var states []seen
	for _, e := range rec.EventsFor(h.Pod) {
		if !e.ObservedAt.Before(del.StartedAt) && e.ObservedAt.Before(seenEnd) && e.Type != "DELETED" {
			states = append(states, seen{e.ObservedAt, e.PodState, fmt.Sprintf("%s event rv=%s", e.Type, e.ResourceVersion)})
		}
	}
	for _, s := range rec.SnapshotsFor(h.Pod) {
		if !s.At.Before(del.FinishedAt) && s.At.Before(seenEnd) {
			if s.Found && s.State != nil {
				states = append(states, seen{s.At, *s.State, "snapshot " + s.Path})
			}
			k.cite(s.Path)
		}
	}
	if h.UpdateSeenWithin > 0 {
		k.updateSeen(rec, h, del, seenEnd)
	}
	if len(states) == 0 {
		return k.missing("nothing was observed of pod %s between the %s request and the lab's next action on it", h.Pod, h.Delete)
	}
	latest := states[0]
	withTimestamp := false
	for _, s := range states {
		if !s.at.Before(latest.at) {
			latest = s
		}
		withTimestamp = withTimestamp || s.state.DeletionTimestamp != nil
	}
	k.require(withTimestamp, "no state after the %s request had a deletionTimestamp", h.Delete)
	k.observe("last_seen", latest.from)
	if latest.state.DeletionTimestamp != nil {
		k.observe("deletionTimestamp", stamp(*latest.state.DeletionTimestamp))
	}
	k.observe("deletionGracePeriodSeconds", latest.state.DeletionGracePeriodSeconds)
	k.observe("finalizers", latest.state.Finalizers)
	k.observe("phase", latest.state.Phase)
	if h.GracePeriod != nil {
		got := latest.state.DeletionGracePeriodSeconds
		k.contradicts(got != nil && *got == *h.GracePeriod, "deletionGracePeriodSeconds is %s, want %d", int64String(got), *h.GracePeriod)
	}
	k.contradicts(latest.state.HasFinalizer(h.Finalizer), "finalizer %s is gone (finalizers %v)", h.Finalizer, latest.state.Finalizers)
	c := k.done()
	if h.UpdateSeenWithin > 0 {
		// The claim states the bound: another run may see the update
		// anywhere within it.
		c = c.WithTolerance("update_seen_after_seconds", h.UpdateSeenWithin)
	}
	return c
}

// updateSeen decides that the watch showed what the delete asks for (a
// deletionTimestamp, and the grace period asked for) by h.UpdateSeenWithin
// after the request and before the lab's next action on the pod: in the
// request's own update, or already in the last event before it.
func (k *check) updateSeen(rec *evidence.Record, h Held, del evidence.Action, seenEnd time.Time) {
	shows := func(e evidence.PodEvent) bool {
		if e.Type == "DELETED" || e.DeletionTimestamp == nil {
			return false
		}
		return h.GracePeriod == nil || (e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == *h.GracePeriod)
	}
	if before, ok := rec.Latest(h.Pod, del.StartedAt); ok && before.ObservedAt.Before(del.StartedAt) && shows(before) {
		k.observe("update_seen_before_request", before.ResourceVersion)
		return
	}
	update, ok := rec.FirstEvent(h.Pod, del.StartedAt, shows)
	what := "a deletionTimestamp"
	if h.GracePeriod != nil {
		what = fmt.Sprintf("a deletionTimestamp with deletionGracePeriodSeconds %d", *h.GracePeriod)
	}
	if !k.require(ok && update.ObservedAt.Before(seenEnd), "no watch event of pod %s after the %s request showed %s (the update the request writes)", h.Pod, h.Delete, what) {
		return
	}
	iv := since(rec, del, update.ObservedAt)
	k.observeInterval("update_seen_after_seconds", iv)
	k.observe("update_resourceVersion", update.ResourceVersion)
	k.require(k.withinClocks(iv, noLowerBound, h.UpdateSeenWithin, fmt.Sprintf("the time from the %s request to the watch event showing its update", h.Delete)),
		"the watch showed the %s request's update (%s) %s after it, later than %s", h.Delete, what, iv.D.Round(time.Millisecond), h.UpdateSeenWithin)
}

func int64String(p *int64) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// Deleted: the object goes away after an action.
type Deleted struct {
	ID, Statement string
	Pod           string
	// After is the action kind the bound counts from.
	After  evidence.ActionKind
	Within time.Duration
	// RequireGone also needs a snapshot (GET) after the action that answered NotFound.
	RequireGone bool
	// MarkedAfterRequest also needs no watch event of the pod to show a
	// deletionTimestamp before the action was sent. (That nothing comes
	// after DELETED is the lab's WatchOrder claim, for every object.)
	MarkedAfterRequest bool
	// UpdateBeforeDeleted, if set, also needs a watch event after the
	// action and before the DELETED that shows a deletionTimestamp with
	// this deletionGracePeriodSeconds: the API server writes a pod's
	// deletion as an update before it removes the object, even at grace 0
	// (the registry's graceful path, which pods always take), so the
	// watch shows it first.
	UpdateBeforeDeleted *int64
}

// DeletedWithin decides that a DELETED event arrived within the bound after the action.
func DeletedWithin(rec *evidence.Record, d Deleted) Claim {
	k := newCheck(d.ID, d.Statement)
	act, ok := action(k, rec, d.After, d.Pod)
	if !ok {
		return k.done()
	}
	k.cite(eventsFile)
	gone, ok := rec.Deleted(d.Pod)
	if !ok {
		return k.missing("no DELETED event of pod %s was recorded", d.Pod)
	}
	delay := since(rec, act, gone.ObservedAt)
	what := fmt.Sprintf("the time from the %s request to the DELETED event", d.After)
	k.observe("deleted_at", stamp(gone.ObservedAt))
	k.observeInterval("deleted_after_seconds", delay)
	k.observe("deleted_resourceVersion", gone.ResourceVersion)
	k.observe("deletionTimestamp_in_deleted_object", gone.DeletionTimestamp != nil)
	k.observe("finalizers_in_deleted_object", gone.Finalizers)
	k.require(k.notBeforeCause(delay, 0), "the DELETED event arrived %s before the %s request", (-delay.D).Round(time.Millisecond), d.After)
	// An event that came while the pod watch was down is seen only when it is
	// back: a DELETED seen after the request may have come before it if the
	// watch was down while the request was made.
	k.watchedThroughout(rec, evidence.WatchPods, act.StartedAt, act.FinishedAt)
	k.require(k.withinClocks(delay, noLowerBound, d.Within, what), "the DELETED event arrived %s after the %s request, later than %s", delay.D.Round(time.Millisecond), d.After, d.Within)
	// Whether the API object exists is a GET's answer, observed only where
	// the claim asks for one: a DELETED event says the object went, not
	// that nothing of that name is there afterwards.
	if d.RequireGone {
		var found *evidence.Snapshot
		for _, s := range rec.SnapshotsFor(d.Pod) {
			if s.At.After(act.FinishedAt) {
				s := s
				found = &s
				k.cite(s.Path)
				break
			}
		}
		if k.require(found != nil, "no GET of pod %s after the %s request was recorded", d.Pod, d.After) {
			k.observe("api_object_exists", found.Found)
			k.require(!found.Found, "a GET after the %s request still found the pod", d.After)
		}
	}
	if d.MarkedAfterRequest {
		markedAfterRequest(k, rec, d, act, gone)
	}
	if d.UpdateBeforeDeleted != nil {
		grace := *d.UpdateBeforeDeleted
		update, ok := rec.FirstEvent(d.Pod, act.StartedAt, func(e evidence.PodEvent) bool {
			return e.Type != "DELETED" && e.DeletionTimestamp != nil && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == grace
		})
		if k.require(ok && update.ObservedAt.Before(gone.ObservedAt), "no watch event between the %s request and the DELETED showed its update (a deletionTimestamp with deletionGracePeriodSeconds %d)", d.After, grace) {
			k.observe("update_resourceVersion", update.ResourceVersion)
			k.observeInterval("update_before_deleted_seconds", rec.Between(evidence.OnHost(update.ObservedAt), evidence.OnHost(gone.ObservedAt)))
		}
	}
	return k.done()
}

// markedAfterRequest requires the pod's events up to its DELETED to show no
// deletionTimestamp earlier than the action.
func markedAfterRequest(k *check, rec *evidence.Record, d Deleted, act evidence.Action, gone evidence.PodEvent) {
	var early []string
	for _, e := range rec.EventsFor(d.Pod) {
		if e.UID != gone.UID {
			continue
		}
		if e.Type == "DELETED" {
			break
		}
		if e.DeletionTimestamp != nil && e.ObservedAt.Before(act.StartedAt) {
			early = append(early, e.Type+" rv "+e.ResourceVersion)
		}
	}
	k.require(len(early) == 0, "events of pod %s showed a deletionTimestamp before the %s request: %v", d.Pod, d.After, early)
}

// Stops: the container on the node stops after an action.
type Stops struct {
	ID, Statement string
	Pod           string
	// After is the action kind the bound counts from (e.g. "delete", "start-kubelet").
	After  evidence.ActionKind
	Within time.Duration
	// NotBefore, if set, needs the stop to come at least this long after the action.
	NotBefore time.Duration
	// WhileObjectExists needs the stop before any DELETED event, with the pod
	// reported in a terminal phase (Succeeded or Failed) while it still exists.
	WhileObjectExists bool
	// WantSIGTERM needs the container's log to show SIGTERM.
	WantSIGTERM bool
	// SignalWithin, if set, needs that SIGTERM logged within this of the action.
	SignalWithin time.Duration
	// StopAfterSignal, if set, needs the stop to come within this window
	// after the SIGTERM the workload logged.
	StopAfterSignal *Window
	// WantExitCode, if set, is the exit code the container must end with.
	WantExitCode *int32
	// Killed: the container must end by a signal, whichever the race gave:
	// exit code 137 (SIGKILL) or 143 (SIGTERM, unhandled), or 0 after the
	// SIGTERM its log shows (the workload handles it) — never a clean 0 the
	// workload reached by itself.
	Killed bool
}

// Window is a range of durations, both ends included.
type Window struct{ Min, Max time.Duration }

func (w Window) String() string { return fmt.Sprintf("between %s and %s", w.Min, w.Max) }

// ContainerStopped decides from crictl evidence that the pod's container
// stopped within the bound after the action, and records how it stopped.
func ContainerStopped(rec *evidence.Record, s Stops) Claim {
	k := newCheck(s.ID, s.Statement)
	if !k.needsNode(rec) {
		return k.done()
	}
	id, ok := k.containerID(rec, s.Pod)
	if !ok {
		return k.done()
	}
	k.observe("container_id", id)
	act, ok := action(k, rec, s.After, targetOf(rec, s.After, s.Pod))
	if !ok {
		return k.done()
	}
	var stopped *evidence.ContainerObservation
	lastSeen := "no crictl observation after the request"
	for _, o := range rec.ContainersFor(s.Pod) {
		// The claim is that the request stopped it: a look before the
		// request that saw it stopped says something else did.
		if o.ContainerID == id && o.ObservedAt.Before(act.StartedAt) && o.Stopped() {
			k.cite(o.Files()...)
			k.contradicts(false, "crictl saw container %s %s at %s, before the %s request: the request did not stop it", id, o.State, stamp(o.ObservedAt), s.After)
		}
	}
	for _, e := range rec.EventsFor(s.Pod) {
		if !e.ObservedAt.Before(act.StartedAt) {
			break
		}
		for _, c := range e.Containers {
			if c.ContainerID == id && c.State == "terminated" {
				k.contradicts(false, "the pod's status reported container %s terminated (%s event rv %s at %s), before the %s request: the request did not stop it", c.Name, e.Type, e.ResourceVersion, stamp(e.ObservedAt), s.After)
			}
		}
	}
	for _, o := range rec.ContainersFor(s.Pod) {
		if o.ContainerID != id || o.ObservedAt.Before(act.StartedAt) {
			continue
		}
		lastSeen = fmt.Sprintf("%s at %s", o.State, stamp(o.ObservedAt))
		if o.Stopped() {
			o := o
			stopped = &o
			break
		}
	}
	if stopped == nil {
		k.observe("crictl_state", lastSeen)
		return k.missing("no crictl observation after the %s request showed container %s stopped (last: %s)", s.After, id, lastSeen)
	}
	k.cite(stopped.Files()...)
	k.observe("crictl_state", stopped.State)
	exit := exitOf(rec, s.Pod, id, act.StartedAt, stopped)
	k.cite(exit.cites...)
	stoppedAt, measuredBy := stopped.ObservedAt, "time of the crictl observation (upper bound: the runtime no longer knew the container)"
	stoppedStamp := evidence.OnHost(stoppedAt)
	if exit.finishedAt != nil {
		stoppedAt, measuredBy = *exit.finishedAt, exit.finishedBy
		stoppedStamp = evidence.OnNode(stopped.Node, stoppedAt)
	}
	actStamp := rec.ActionStamp(act)
	k.observe("stopped_at", stamp(stoppedAt))
	k.observe("measured_by", measuredBy)
	if exit.resolution > 0 {
		k.observe("stopped_at_resolution_seconds", seconds(exit.resolution))
	}
	// The stop and the request may be read by two clocks (the node's, the
	// host's or the API server's): the interval is corrected by their
	// measured offsets, and a bound within their uncertainty is not decided.
	iv := rec.Between(actStamp, stoppedStamp)
	after := iv.D
	k.observeInterval("stopped_after_seconds", iv)
	what := fmt.Sprintf("the time from the %s request to the container's stop", s.After)
	// A time with whole-second resolution may read up to that much early.
	earliest := time.Duration(0)
	if exit.resolution > 0 {
		earliest = -exit.resolution + time.Nanosecond
	}
	// The stop is caused by the request (the kubelet's answer to it).
	k.require(k.notBeforeCause(iv, earliest), "the container stopped at %s, before the %s request at %s", stamp(stoppedAt), s.After, stamp(act.StartedAt))
	k.require(k.withinClocks(iv, noLowerBound, s.Within, what), "the container stopped %s after the %s request, later than %s", after.Round(time.Millisecond), s.After, s.Within)
	if s.NotBefore > 0 {
		k.require(k.withinClocks(iv, s.NotBefore-exit.resolution, noUpperBound, what), "the container stopped %s after the %s request, earlier than %s", after.Round(time.Millisecond), s.After, s.NotBefore)
	}

	if exit.code != nil {
		k.observe("exit_code", *exit.code)
	} else {
		k.observe("exit_code", nil)
	}
	k.observe("exit_code_source", exit.source)
	if len(exit.bySource) > 1 {
		k.observe("exit_code_by_source", exit.bySource)
	}
	k.require(exit.agree, "the sources disagree on the exit code: %v", exit.bySource)
	sigterm := stopped.Log != nil && stopped.Log.Signal == "SIGTERM"
	if stopped.Log != nil {
		k.observe("sigterm_logged", sigterm)
		k.observe("exit_logged", stopped.Log.ExitLogged)
		k.observe("last_heartbeat_seq", stopped.Log.LastSeq)
	} else {
		k.observe("sigterm_logged", "unknown: no container log was readable")
	}
	k.observe("how", howStopped(exit.code, sigterm))
	var signalAt *time.Time
	if sigterm {
		signalAt = stopped.Log.SignalAt
	}
	if signalAt != nil {
		k.observeInterval("sigterm_after_seconds", rec.Between(actStamp, evidence.OnNode(stopped.Node, *signalAt)))
		k.observeInterval("stopped_after_sigterm_seconds", rec.Between(evidence.OnNode(stopped.Node, *signalAt), stoppedStamp))
	}

	gone, deleted := rec.Deleted(s.Pod)
	if deleted {
		k.observeInterval("stopped_after_deleted_seconds", rec.Between(evidence.OnHost(gone.ObservedAt), stoppedStamp))
	}
	if s.WhileObjectExists {
		k.require(!deleted || gone.ObservedAt.After(stopped.ObservedAt), "the API object was deleted (at %s) before the container was seen stopped", stamp(gone.ObservedAt))
		// No DELETED before the stop is an absence: the pod watch must have been up all along.
		k.watchedThroughout(rec, evidence.WatchPods, act.StartedAt, stopped.ObservedAt)
		terminal, ok := rec.FirstEvent(s.Pod, act.StartedAt, func(e evidence.PodEvent) bool { return e.Type != "DELETED" && e.Terminal() })
		if k.require(ok, "no watch event after the %s request showed phase Succeeded or Failed", s.After) {
			k.observe("pod_phase", terminal.Phase)
			k.observe("pod_phase_resourceVersion", terminal.ResourceVersion)
			k.require(!deleted || terminal.ObservedAt.Before(gone.ObservedAt), "phase %s was only reported with the deletion", terminal.Phase)
			// The kubelet computes the phase from the containers' states
			// in the same status: a terminal phase with this container not
			// terminated is no status it writes.
			for _, c := range terminal.Containers {
				if c.ContainerID == id {
					k.observe("pod_phase_container_state", c.State)
					k.require(c.State == "terminated", "phase %s was reported (rv %s) with container %s %s, not terminated", terminal.Phase, terminal.ResourceVersion, c.Name, c.State)
				}
			}
		}
	}
	if stopped.State == evidence.ContainerNotFound && (!deleted || gone.ObservedAt.After(stopped.ObservedAt)) {
		// Worth recording: the kubelet removes an exited container while a
		// finalizer still holds the API object.
		k.observe("container_removed_while_object_exists", true)
	}
	if s.WantSIGTERM {
		k.require(sigterm, "the container's log shows no SIGTERM")
	}
	if s.SignalWithin > 0 || s.StopAfterSignal != nil {
		if k.require(signalAt != nil, "the container's log shows no SIGTERM with its time, which the claim's bounds count from") {
			got := rec.Between(actStamp, evidence.OnNode(stopped.Node, *signalAt))
			if s.SignalWithin > 0 {
				k.require(k.withinClocks(got, noLowerBound, s.SignalWithin, fmt.Sprintf("the time from the %s request to the SIGTERM the workload logged", s.After)),
					"SIGTERM was logged %s after the %s request, later than %s", got.D.Round(time.Millisecond), s.After, s.SignalWithin)
			}
			if w := s.StopAfterSignal; w != nil {
				// The SIGTERM is the node's time; the stop is too, unless
				// only crictl's look (the host's) bounds it.
				gap := rec.Between(evidence.OnNode(stopped.Node, *signalAt), stoppedStamp)
				// A time with whole-second resolution may read up to that much early.
				k.require(k.withinClocks(gap, w.Min-exit.resolution, w.Max, "the time from the SIGTERM the workload logged to the container's stop"),
					"the container stopped %s after the SIGTERM it logged, not %s", gap.D.Round(time.Millisecond), w)
			}
		}
	}
	if s.WantExitCode != nil {
		k.require(exit.code != nil && *exit.code == *s.WantExitCode, "exit code is %s, want %d", exitString(exit.code), *s.WantExitCode)
	}
	if s.Killed {
		bySignal := exit.code != nil && (*exit.code == 128+9 || *exit.code == 128+15 || *exit.code == 0 && sigterm)
		k.require(bySignal, "exit code is %s with no SIGTERM in its log, want 137 (SIGKILL), 143 (SIGTERM) or 0 after a logged SIGTERM: the container was not killed", exitString(exit.code))
	}
	return k.done()
}

// exitEvidence is how a container ended, as the record's sources tell it.
type exitEvidence struct {
	code       *int32
	source     string // the source that decided code
	finishedAt *time.Time
	finishedBy string
	resolution time.Duration // of finishedAt, when coarser than the clock's
	bySource   map[string]int32
	agree      bool
	cites      []string
}

// exitOf reads the container's exit from three sources, most direct first:
// crictl inspect; containerd's exit event, when the run followed the node's
// events (the kubelet may remove an exited container before crictl looks);
// the kubelet's terminated state in the pod's watch events (while a
// finalizer keeps the object); the workload's own exit line in its log (the
// followed copy survives the container). The first that knows decides; all
// that know must agree. The time of the stop comes from crictl, else
// containerd, else the workload's exit line, else the kubelet's finishedAt
// (whole seconds: the API's time format drops the fraction).
func exitOf(rec *evidence.Record, pod, id string, from time.Time, stopped *evidence.ContainerObservation) exitEvidence {
	x := exitEvidence{bySource: map[string]int32{}, agree: true, source: "none: crictl no longer knew the container, containerd's events were not followed or showed no exit, the watch carried no terminated state and the log no exit line"}
	decide := func(source, key string, code int32) {
		x.bySource[key] = code
		if x.code == nil {
			x.code, x.source = &code, source
		} else if *x.code != code {
			x.agree = false
		}
	}
	if stopped.ExitCode != nil {
		decide("crictl inspect", "crictl", *stopped.ExitCode)
		if stopped.FinishedAt != nil {
			x.finishedAt, x.finishedBy = stopped.FinishedAt, "crictl inspect finishedAt"
		}
	}
	if te, ok := taskExit(rec, id); ok {
		decide("containerd's exit event in "+te.Path, "containerd", te.ExitStatus)
		x.cites = append(x.cites, te.Path)
		if x.finishedAt == nil {
			x.finishedAt, x.finishedBy = &te.ExitedAt, "containerd's exit event exited_at (crictl no longer knew the container)"
		}
	}
	if l := stopped.Log; l != nil && l.ExitAt != nil && x.finishedAt == nil {
		x.finishedAt, x.finishedBy = l.ExitAt, "the workload's exit line (crictl no longer knew the container)"
	}
	if e, c, ok := kubeletTerminated(rec, pod, id, from); ok {
		decide(fmt.Sprintf("kubelet: terminated state in the pod's %s event rv=%s", e.Type, e.ResourceVersion), "kubelet", *c.ExitCode)
		x.cites = append(x.cites, eventsFile)
		if x.finishedAt == nil && c.FinishedAt != nil {
			x.finishedAt, x.finishedBy, x.resolution = c.FinishedAt, "kubelet-reported terminated.finishedAt (crictl no longer knew the container)", time.Second
		}
	}
	if l := stopped.Log; l != nil && l.ExitCodeLogged != nil {
		decide("the workload's exit line in "+stopped.LogsPath, "workload log", int32(*l.ExitCodeLogged))
	}
	return x
}

// taskExit is containerd's exit event of the container, when the run
// followed its node's events.
func taskExit(rec *evidence.Record, id string) (evidence.TaskExit, bool) {
	for _, te := range rec.TaskExits {
		if te.ContainerID == id {
			return te, true
		}
	}
	return evidence.TaskExit{}, false
}

// kubeletTerminated finds the first watch event at or after from in which the
// kubelet reports container id terminated with an exit code.
func kubeletTerminated(rec *evidence.Record, pod, id string, from time.Time) (evidence.PodEvent, evidence.ContainerState, bool) {
	var found evidence.ContainerState
	e, ok := rec.FirstEvent(pod, from, func(e evidence.PodEvent) bool {
		for _, c := range e.Containers {
			if c.ContainerID == id && c.State == "terminated" && c.ExitCode != nil {
				found = c
				return true
			}
		}
		return false
	})
	return e, found, ok
}

// targetOf is the target of the first action of the kind: the pod itself, or
// the node a node-level action (stop-kubelet, start-kubelet) ran on. A
// request on a pod (its create, delete, force delete, finalizer removal) is
// the pod's own or none: another pod's delete, sent at the same moment in a
// lab that deletes several, is not this pod's (lab:kwok's reference_stopped
// passed with its pod's delete dropped, timed from another pod's).
func targetOf(rec *evidence.Record, kind evidence.ActionKind, pod string) string {
	if _, ok := rec.Action(kind, pod); ok || podRequests[kind] {
		return pod
	}
	for _, a := range rec.Actions {
		if a.Kind == kind {
			return a.Target
		}
	}
	return pod
}

// podRequests are the action kinds whose target is a pod.
var podRequests = map[evidence.ActionKind]bool{
	evidence.ActionCreate:           true,
	evidence.ActionDelete:           true,
	evidence.ActionForceDelete:      true,
	evidence.ActionRemoveFinalizers: true,
}

func exitString(p *int32) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

func howStopped(code *int32, sigterm bool) string {
	switch {
	case code == nil:
		return "unknown: no source recorded an exit code"
	case *code == 0 && sigterm:
		return "graceful: SIGTERM logged, exit code 0"
	case *code == 137 && sigterm:
		return "killed after SIGTERM: exit code 137 (SIGKILL)"
	case *code == 137:
		return "killed: exit code 137 (SIGKILL), no SIGTERM logged"
	case sigterm:
		return fmt.Sprintf("SIGTERM logged, exit code %d", *code)
	default:
		return fmt.Sprintf("exit code %d, no SIGTERM logged", *code)
	}
}

// Orphaned: the container runs on after its API object is gone.
type Orphaned struct {
	ID, Statement string
	Pod           string
	// Until is the action kind that ends the window (e.g. "start-kubelet"); "" ends it with the record.
	Until evidence.ActionKind
	// All needs every crictl observation in the window to show CONTAINER_RUNNING; otherwise one is enough.
	All bool
	// MinObservations is how many observations the window must hold (at least 1).
	MinObservations int
	// LastAfterNotReady, if set, names the node whose Ready condition must
	// have left True (evidence: nodes.jsonl) before the window's last look.
	LastAfterNotReady string
}

// RunningAfterDeleted decides from crictl evidence that the pod's container
// was CONTAINER_RUNNING after the API object's DELETED event.
func RunningAfterDeleted(rec *evidence.Record, o Orphaned) Claim {
	k := newCheck(o.ID, o.Statement)
	if !k.needsNode(rec) {
		return k.done()
	}
	id, ok := k.containerID(rec, o.Pod)
	if !ok {
		return k.done()
	}
	k.observe("container_id", id)
	gone, ok := rec.Deleted(o.Pod)
	if !ok {
		return k.missing("no DELETED event of pod %s was recorded", o.Pod)
	}
	// The DELETED event, not a GET: whether the object exists is not observed here.
	k.observe("deleted_at", stamp(gone.ObservedAt))
	end := time.Time{}
	if o.Until != "" {
		a, ok := action(k, rec, o.Until, targetOf(rec, o.Until, o.Pod))
		if !ok {
			return k.done()
		}
		end = a.StartedAt
	}
	var window []evidence.ContainerObservation
	for _, c := range rec.ContainersFor(o.Pod) {
		if c.ContainerID == id && c.ObservedAt.After(gone.ObservedAt) && (end.IsZero() || c.ObservedAt.Before(end)) {
			window = append(window, c)
		}
	}
	min := o.MinObservations
	if min < 1 {
		min = 1
	}
	k.observe("observations_after_deleted", len(window))
	if len(window) < min {
		return k.missing("%d crictl observation(s) of container %s after the DELETED event, the claim needs %d", len(window), id, min)
	}
	running := 0
	var first, last *evidence.ContainerObservation
	for i := range window {
		c := &window[i]
		k.cite(c.InspectPath)
		if c.State == evidence.ContainerRunning {
			running++
			if first == nil {
				first = c
			}
			last = c
		} else if o.All {
			k.require(false, "crictl showed %s at %s, %s after the DELETED event", c.State, stamp(c.ObservedAt), c.ObservedAt.Sub(gone.ObservedAt).Round(time.Millisecond))
		}
	}
	k.observe("running_observations", running)
	if first == nil {
		k.observe("container_state", window[0].State)
		return k.missing("no crictl observation after the DELETED event showed CONTAINER_RUNNING")
	}
	k.require(running >= 1, "no crictl observation after the DELETED event showed CONTAINER_RUNNING")
	k.observe("container_state", first.State)
	k.observe("first_seen_running_after_deleted_seconds", seconds(first.ObservedAt.Sub(gone.ObservedAt)))
	k.observe("last_seen_running_after_deleted_seconds", seconds(last.ObservedAt.Sub(gone.ObservedAt)))
	if o.LastAfterNotReady != "" {
		k.cite(nodesFile)
		lastLook := window[len(window)-1]
		notReady, ok := firstNotReady(rec, o.LastAfterNotReady, gone.ObservedAt)
		if k.require(ok && notReady.ObservedAt.Before(lastLook.ObservedAt), "node %s's Ready condition was not seen leave True after the DELETED event and before the last look at %s", o.LastAfterNotReady, stamp(lastLook.ObservedAt)) {
			k.observe("not_ready_at", stamp(notReady.ObservedAt))
			k.observe("last_look_after_not_ready_seconds", seconds(lastLook.ObservedAt.Sub(notReady.ObservedAt)))
		}
	}
	return k.done()
}

// firstNotReady is the first recorded change of the node's Ready condition
// away from True at or after from.
func firstNotReady(rec *evidence.Record, node string, from time.Time) (evidence.NodeEvent, bool) {
	for _, e := range rec.NodeEventsFor(node) {
		if !e.ObservedAt.Before(from) && e.Ready != "True" {
			return e, true
		}
	}
	return evidence.NodeEvent{}, false
}

// Beating: the workload keeps logging after its API object is gone.
type Beating struct {
	ID, Statement string
	Pod           string
	Until         evidence.ActionKind // action kind that ends the window; "" ends it with the record
	// MinBeats is how far the heartbeat sequence must advance between the first and last reads.
	MinBeats int
	// Interval, if set, is the workload's heartbeat interval: the sequence
	// must also advance by the reads' span over Interval, less MissedBeats.
	Interval    time.Duration
	MissedBeats int
}

// HeartbeatAdvancing decides from crictl logs read after the DELETED event
// that the heartbeat sequence kept advancing.
func HeartbeatAdvancing(rec *evidence.Record, b Beating) Claim {
	k := newCheck(b.ID, b.Statement)
	if !k.needsNode(rec) {
		return k.done()
	}
	id, ok := k.containerID(rec, b.Pod)
	if !ok {
		return k.done()
	}
	gone, ok := rec.Deleted(b.Pod)
	if !ok {
		return k.missing("no DELETED event of pod %s was recorded", b.Pod)
	}
	end := time.Time{}
	if b.Until != "" {
		a, ok := action(k, rec, b.Until, targetOf(rec, b.Until, b.Pod))
		if !ok {
			return k.done()
		}
		end = a.StartedAt
	}
	var reads []evidence.ContainerObservation
	for _, c := range rec.ContainersFor(b.Pod) {
		if c.ContainerID == id && c.Log != nil && c.ObservedAt.After(gone.ObservedAt) && (end.IsZero() || c.ObservedAt.Before(end)) {
			reads = append(reads, c)
			k.cite(c.LogsPath)
		}
	}
	k.observe("log_reads_after_deleted", len(reads))
	if len(reads) < 2 {
		return k.missing("%d readable crictl logs of container %s after the DELETED event, the claim needs 2", len(reads), id)
	}
	first, last := reads[0], reads[len(reads)-1]
	k.observe("first_read_seq", first.Log.LastSeq)
	k.observe("last_read_seq", last.Log.LastSeq)
	k.observe("first_read_at", stamp(first.ObservedAt))
	k.observe("last_read_at", stamp(last.ObservedAt))
	advanced := last.Log.LastSeq - first.Log.LastSeq
	k.observe("advanced_by", advanced)
	k.require(advanced >= b.MinBeats, "the heartbeat advanced by %d between the reads, the claim needs %d", advanced, b.MinBeats)
	if b.Interval > 0 {
		span := last.ObservedAt.Sub(first.ObservedAt)
		atRate := int(span / b.Interval)
		k.observe("reads_span_seconds", seconds(span))
		k.observe("beats_at_full_rate", atRate)
		k.require(advanced >= atRate-b.MissedBeats, "the heartbeat advanced by %d in the %s between the reads; at one beat every %s it would be %d, and the claim allows %d fewer", advanced, span.Round(time.Millisecond), b.Interval, atRate, b.MissedBeats)
	}
	if k.require(last.Log.LastBeatAt != nil, "the last read has no heartbeat time") {
		// The workload logs its beats on the node's clock; the DELETED event
		// is the host's.
		beat := rec.Between(evidence.OnHost(gone.ObservedAt), evidence.OnNode(last.Node, *last.Log.LastBeatAt))
		k.observe("last_beat_at", stamp(*last.Log.LastBeatAt))
		k.observeInterval("last_beat_after_deleted_seconds", beat)
		k.require(k.withinClocks(beat, time.Nanosecond, noUpperBound, "the time from the DELETED event to the last heartbeat"), "the last heartbeat (%s) is not after the DELETED event", stamp(*last.Log.LastBeatAt))
	}
	return k.done()
}

// NotReady: a node turns NotReady after its kubelet stops.
type NotReady struct {
	ID, Statement string
	Node          string
	After         evidence.ActionKind // action kind on the node, e.g. "stop-kubelet"
	Within        time.Duration
	// NotBefore, if set, needs the change to come at least this long after the action.
	NotBefore time.Duration
}

// NodeNotReady decides from the recorded node conditions that the node's
// Ready condition left True within the bound after the action.
func NodeNotReady(rec *evidence.Record, n NotReady) Claim {
	k := newCheck(n.ID, n.Statement)
	act, ok := action(k, rec, n.After, n.Node)
	if !ok {
		return k.done()
	}
	k.cite(nodesFile)
	e, ok := firstNotReady(rec, n.Node, act.StartedAt)
	if !ok {
		return k.missing("no change of node %s's Ready condition away from True was recorded after the %s", n.Node, n.After)
	}
	after := since(rec, act, e.ObservedAt)
	what := fmt.Sprintf("the time from the %s to the node's NotReady", n.After)
	k.observe("ready", e.Ready)
	k.observe("reason", e.Reason)
	k.observe("not_ready_at", stamp(e.ObservedAt))
	k.observeInterval("not_ready_after_seconds", after)
	k.require(k.withinClocks(after, noLowerBound, n.Within, what), "the node turned NotReady %s after the %s, later than %s", after.D.Round(time.Millisecond), n.After, n.Within)
	k.require(k.withinClocks(after, n.NotBefore, noUpperBound, what), "the node turned NotReady %s after the %s, earlier than %s", after.D.Round(time.Millisecond), n.After, n.NotBefore)
	// A change that came while the nodes watch was down is seen only when it is
	// back: "not before the request (and NotBefore)" needs the watch up then.
	k.watchedThroughout(rec, evidence.WatchNodes, act.StartedAt, later(act.FinishedAt, act.StartedAt.Add(n.NotBefore)))
	return k.done()
}
