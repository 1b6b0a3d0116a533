package sidecar

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go
// and the kubelet's pkg/kubelet/kuberuntime, v1.37.2).
const (
	// handoffWithin bounds the gap from one container's exit (crictl) to the
	// SIGTERM of the sidecar that waited for it (the workload's log): the
	// kubelet's goroutine for the exited container closes its channel when
	// the runtime's StopContainer returns, and the waiting sidecar's
	// goroutine asks the runtime to stop it at once (terminationOrdering in
	// kuberuntime_termination_order.go). Observed 0.23–1.17 s over seven
	// runs (about 1 s in three): the next SIGTERM comes that long after the exit
	// crictl records (where the time goes between containerd and the
	// kubelet is not in the kubelet's log at its default level). The bound
	// is about twice the most, and short of the sidecars' 3 s preStop, which
	// a preStop started only at that moment would add. (Two sidecars
	// signalled together would show the later one's SIGTERM a second before
	// the other's exit: a negative gap, which fails on its own.)
	handoffWithin = 2500 * time.Millisecond
	// stoppingWithin bounds the kubelet's Killing event ("Stopping container
	// <name>", recorded right before that container's preStop runs) after
	// the delete: the kubelet's reaction to the deletionTimestamp.
	stoppingWithin = claims.KubeletSyncAllowance
	// stoppingSpread bounds how far apart the three Killing events of one
	// pod arrive: the kubelet starts every container's kill in the same
	// sync, one goroutine each (killContainersWithSyncResult), milliseconds
	// apart; what remains is the events' delivery, WatchAllowance. A preStop
	// started only after the main container's exit would come 5 s later.
	stoppingSpread = claims.WatchAllowance
	// wholeSecond: the kubelet counts the grace period in whole seconds and
	// truncates the time a preStop or a wait took (killContainer, "the time
	// we've waited gets truncated downward"), so a container's deadline may
	// lie up to a second after the pod's.
	wholeSecond = time.Second
	// mainKilledWithin bounds when sidecars-overrun's app is killed after
	// the delete: the 6 s grace from the kubelet's reaction, a truncated
	// second, the exit record.
	mainKilledWithin = overrunGrace + claims.KubeletSyncAllowance + wholeSecond + claims.ExitAllowance
	// togetherWithin bounds how close the overrun pod's sidecars are
	// signalled: both preStops start in one sync and last the same 3 s, so
	// both sidecars' remaining grace runs out at the same moment; the
	// allowance is for the log lines. Short of sidecar-b's 1 s term delay,
	// which reverse order would put between them.
	togetherWithin = claims.ExitAllowance
	// endedRightAfter bounds the overrun pod's sidecar SIGTERMs around the
	// main container's kill (before or after: both deadlines are the grace
	// period's end, each up to a truncated second late) plus the log line.
	endedRightAfter = wholeSecond + claims.ExitAllowance
	// shortGrace bounds a sidecar's SIGTERM-to-exit once the grace period
	// is used up: the kubelet gives what remains its minimum grace period
	// (2 s) before SIGKILL; the sidecars' 1 s term delay fits in it.
	shortGrace = claims.KubeletMinimumGracePeriod + claims.ExitAllowance
)

// Evidence files the claims cite beside the crictl observations.
const (
	eventsFile     = evidence.EventsFile
	kubeEventsFile = evidence.KubeEventsFile
	actionsFile    = evidence.ActionsFile
)

// containerRun is what the record says about one container of a pod.
type containerRun struct {
	Name, ID string
	// Started is crictl's word (inspect).
	Started *time.Time
	// Finished and ExitCode are crictl's word when crictl saw the container
	// exited. The kubelet removes a deleted pod's containers within
	// milliseconds of the last one's exit, often before a look can see it
	// exited: then Finished is the workload's own exit line (it exits right
	// after writing it) and ExitCode the one the kubelet put in the pod's
	// status before it removed the container. FinishedBy says which.
	Finished *time.Time
	ExitCode *int32
	// FinishedBy is "crictl" or "workload log, pod status".
	FinishedBy string
	// Sigterm is the workload's own SIGTERM line.
	Sigterm *time.Time
	// Stopping is when the kubelet's Killing event for the container
	// ("Stopping container <name>") was observed.
	Stopping *time.Time
	files    []string
}

// podRun is one pod's shutdown as recorded.
type podRun struct {
	Pod string
	// Deleted is the delete request, on the clock that read it (the API
	// server's receipt, or termlab's send: evidence.ActionStamp).
	Deleted *evidence.Stamp
	// Node is the pod's node, whose clock reads crictl's times and the
	// workloads' log lines; Stopping times are the host's.
	Node       string
	Containers map[string]*containerRun
	files      []string
}

// shutdownOf gathers what the record says about the pod's containers: their
// IDs from the pod's status (events.jsonl), crictl's observations of those
// IDs, the workloads' logs, and the kubelet's Killing events.
func shutdownOf(rec *evidence.Record, pod string) podRun {
	p := podRun{Pod: pod, Containers: map[string]*containerRun{}}
	for _, name := range containersOf {
		p.Containers[name] = &containerRun{Name: name}
	}
	if a, ok := rec.Action(evidence.ActionDelete, pod); ok && a.Succeeded() {
		s := rec.ActionStamp(a)
		p.Deleted = &s
		p.files = append(p.files, actionsFile)
	}
	for _, e := range rec.EventsFor(pod) {
		for _, c := range append(append([]evidence.ContainerState(nil), e.InitContainers...), e.Containers...) {
			if run := p.Containers[c.Name]; run != nil && run.ID == "" && c.ContainerID != "" {
				run.ID = c.ContainerID
				p.files = append(p.files, eventsFile)
			}
		}
	}
	for _, run := range p.Containers {
		if run.ID == "" {
			continue
		}
		var exitLogged *time.Time
		for _, o := range rec.ContainersFor(pod) {
			if o.ContainerID != run.ID {
				continue
			}
			p.Node = o.Node
			run.files = append(run.files, o.Files()...)
			if o.StartedAt != nil {
				run.Started = o.StartedAt
			}
			if o.State == evidence.ContainerExited {
				run.Finished, run.ExitCode, run.FinishedBy = o.FinishedAt, o.ExitCode, byCrictl
			}
			if o.Log != nil && o.Log.Signal == "SIGTERM" && o.Log.SignalAt != nil {
				run.Sigterm = o.Log.SignalAt
			}
			if o.Log != nil && o.Log.ExitAt != nil {
				exitLogged = o.Log.ExitAt
			}
		}
		if run.FinishedBy == "" && exitLogged != nil {
			if code, ok := statusExitCode(rec, pod, run); ok {
				run.Finished, run.ExitCode, run.FinishedBy = exitLogged, &code, byLogAndStatus
				p.files = append(p.files, eventsFile)
			}
		}
		for _, k := range rec.KubeEvents {
			if k.Object == "Pod/"+pod && k.Reason == "Killing" && k.Message == "Stopping container "+run.Name {
				t := k.ObservedAt
				run.Stopping = &t
				run.files = append(run.files, kubeEventsFile)
				break
			}
		}
	}
	return p
}

// Where a container's exit was read (containerRun.FinishedBy).
const (
	byCrictl       = "crictl"
	byLogAndStatus = "workload log, pod status"
)

// statusExitCode is the exit code the pod's status last reported for the
// container (the same container ID), from the kubelet.
func statusExitCode(rec *evidence.Record, pod string, run *containerRun) (int32, bool) {
	var code *int32
	for _, e := range rec.EventsFor(pod) {
		for _, c := range append(append([]evidence.ContainerState(nil), e.InitContainers...), e.Containers...) {
			if c.Name == run.Name && c.ContainerID == run.ID && c.State == "terminated" && c.ExitCode != nil {
				code = c.ExitCode
			}
		}
	}
	if code == nil {
		return 0, false
	}
	return *code, true
}

// verdict builds one claim of this lab (claims.Builder).
type verdict struct{ *claims.Builder }

func newVerdict(id, statement string) *verdict { return &verdict{claims.NewBuilder(id, statement)} }

// gap observes b−a in seconds (ms) under key and returns it.
func (v *verdict) gap(key string, a, b time.Time) time.Duration {
	d := b.Sub(a)
	v.Observe(key, float64(d.Round(time.Millisecond))/float64(time.Second))
	return d
}

// between observes b−a on the host's clock under key (each end corrected
// by its clock's measured offset, evidence.Record.Between) and returns it:
// for times of two clocks, decided with WithinClocks.
func (v *verdict) between(rec *evidence.Record, key string, a, b evidence.Stamp) evidence.Interval {
	iv := rec.Between(a, b)
	v.ObserveInterval(key, iv)
	return iv
}

// onNode is a time the pod's node read.
func (p podRun) onNode(t time.Time) evidence.Stamp { return evidence.OnNode(p.Node, t) }

// has requires that a time was recorded.
func (v *verdict) has(t *time.Time, what string) bool {
	return v.Require(t != nil, "%s was not recorded", what)
}

// done decides the claim; without node access (crictl, the workload's
// log) it is not checked.
func (v *verdict) done(rec *evidence.Record) claims.Claim {
	if rec.NodeAccess == evidence.NodeAccessNone {
		v.NotChecked(claims.NeedsNodeAccess)
	}
	return v.Done()
}

// key is a container name as an observed key: sidecar-a → sidecar_a.
func key(name string) string { return strings.ReplaceAll(name, "-", "_") }

// usePod cites the pod's own evidence and requires its delete and container IDs.
func (v *verdict) usePod(p podRun, names ...string) bool {
	v.Cite(p.files...)
	ok := v.Require(p.Deleted != nil, "no successful delete of pod %s was recorded", p.Pod)
	for _, n := range names {
		c := p.Containers[n]
		ok = v.Require(c.ID != "", "the API never reported a container ID for %s of pod %s", n, p.Pod) && ok
		v.Cite(c.files...)
		if c.FinishedBy != "" {
			v.Observe(key(n)+"_exit_read_from", c.FinishedBy)
		}
	}
	return ok
}

// Claims decides lab:sidecar's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	ordered, overrun := shutdownOf(rec, podOrdered), shutdownOf(rec, podOverrun)
	return []claims.Claim{
		sidecarsAfterMain(rec, ordered),
		reverseStartOrder(rec, ordered),
		preStopWithMain(rec, ordered),
		mainKilledAtGraceEnd(rec, overrun),
		sidecarsEndedRightAfter(rec, overrun),
		claims.WatchOrder(rec, "sidecar"),
	}
}

func sidecarsAfterMain(rec *evidence.Record, p podRun) claims.Claim {
	sec := claims.InSeconds
	v := newVerdict("sidecar.sidecars_after_main",
		fmt.Sprintf("In pod %s (grace %s, far more than its shutdown needs) no sidecar gets SIGTERM before the main container %s has exited: each sidecar's SIGTERM line comes after %s's exit as crictl records it, and the sidecar exits only after that SIGTERM — for %s, the sidecar started last, within %s of it (the kubelet stops the next container as soon as the runtime reports the exit). The main container got SIGTERM itself (after its own preStop), and every container exited 0: none was killed. Runs compare within ±%[6]s.",
			p.Pod, sec(orderedGracePeriod), mainName, mainName, sidecarB, sec(handoffWithin)))
	if !v.usePod(p, containersOf...) {
		return v.done(rec)
	}
	main := p.Containers[mainName]
	if v.has(main.Sigterm, mainName+"'s SIGTERM (its log)") {
		v.between(rec, "main_sigterm_after_delete_seconds", *p.Deleted, p.onNode(*main.Sigterm))
	}
	if a := p.Containers[sidecarA]; a.Finished != nil {
		v.between(rec, "sidecar_a_exit_after_delete_seconds", *p.Deleted, p.onNode(*a.Finished))
	}
	if v.has(main.Finished, mainName+"'s exit (crictl, or its exit line)") {
		v.between(rec, "main_exit_after_delete_seconds", *p.Deleted, p.onNode(*main.Finished))
		for _, name := range sidecarsInStartOrder {
			s := p.Containers[name]
			if !v.has(s.Sigterm, name+"'s SIGTERM (its log)") {
				continue
			}
			d := v.gap(key(name)+"_sigterm_after_main_exit_seconds", *main.Finished, *s.Sigterm)
			v.Require(d >= 0, "%s got SIGTERM %s before %s exited", name, (-d).Round(time.Millisecond), mainName)
			// A sidecar that exited before its SIGTERM stopped on its own,
			// not in its turn: its SIGTERM's order would say nothing.
			if s.Finished != nil {
				v.Require(!s.Finished.Before(*s.Sigterm), "%s exited at %s, before its own SIGTERM at %s: it stopped on its own, not in its turn", name, s.Finished.Format(time.RFC3339Nano), s.Sigterm.Format(time.RFC3339Nano))
			}
		}
		if s := p.Containers[sidecarB]; s.Sigterm != nil {
			d := s.Sigterm.Sub(*main.Finished)
			v.Require(d <= handoffWithin, "%s got SIGTERM %s after %s exited, not within %s", sidecarB, d.Round(time.Millisecond), mainName, sec(handoffWithin))
		}
	}
	for _, name := range containersOf {
		c := p.Containers[name]
		if v.Require(c.ExitCode != nil, "%s's exit code was not recorded (neither crictl nor the pod's status gave it)", name) {
			v.Observe(key(name)+"_exit_code", int(*c.ExitCode))
			v.Require(*c.ExitCode == 0, "%s exited %d, not 0", name, *c.ExitCode)
		}
	}
	return v.done(rec).WithTolerance(key(sidecarB)+"_sigterm_after_main_exit_seconds", handoffWithin)
}

func reverseStartOrder(rec *evidence.Record, p podRun) claims.Claim {
	sec := claims.InSeconds
	v := newVerdict("sidecar.reverse_start_order",
		fmt.Sprintf("In pod %s the sidecars are ended in reverse start order: crictl shows %s started before %s, and %s before %s; %s, started last, got SIGTERM first, and %s got SIGTERM only after %s had exited (crictl), within %s of that exit. Runs compare within ±%[9]s.",
			p.Pod, sidecarA, sidecarB, sidecarB, mainName, sidecarB, sidecarA, sidecarB, sec(handoffWithin)))
	if !v.usePod(p, containersOf...) {
		return v.done(rec)
	}
	a, b, main := p.Containers[sidecarA], p.Containers[sidecarB], p.Containers[mainName]
	if v.has(a.Started, sidecarA+"'s start (crictl)") && v.has(b.Started, sidecarB+"'s start (crictl)") && v.has(main.Started, mainName+"'s start (crictl)") {
		v.Require(v.gap("sidecar_b_started_after_sidecar_a_seconds", *a.Started, *b.Started) > 0, "%s did not start after %s", sidecarB, sidecarA)
		v.Require(v.gap("main_started_after_sidecar_b_seconds", *b.Started, *main.Started) > 0, "%s did not start after %s", mainName, sidecarB)
	}
	if v.has(a.Sigterm, sidecarA+"'s SIGTERM (its log)") && v.has(b.Sigterm, sidecarB+"'s SIGTERM (its log)") {
		v.Require(b.Sigterm.Before(*a.Sigterm), "%s got SIGTERM before %s: not reverse start order", sidecarA, sidecarB)
		if v.has(b.Finished, sidecarB+"'s exit (crictl, or its exit line)") {
			d := v.gap("sidecar_a_sigterm_after_sidecar_b_exit_seconds", *b.Finished, *a.Sigterm)
			v.Require(d >= 0, "%s got SIGTERM %s before %s exited", sidecarA, (-d).Round(time.Millisecond), sidecarB)
			v.Require(d <= handoffWithin, "%s got SIGTERM %s after %s exited, not within %s", sidecarA, d.Round(time.Millisecond), sidecarB, sec(handoffWithin))
		}
	}
	return v.done(rec).WithTolerance("sidecar_a_sigterm_after_sidecar_b_exit_seconds", handoffWithin)
}

func preStopWithMain(rec *evidence.Record, p podRun) claims.Claim {
	sec := claims.InSeconds
	v := newVerdict("sidecar.prestop_with_main",
		fmt.Sprintf("In pod %s the sidecars' preStops start with the main container's, not when their turn to stop comes: the kubelet's Killing event (\"Stopping container <name>\", which it records right before that container's preStop) arrives for all three containers within %s of the delete and within %s of each other; %s's SIGTERM comes its %s preStop after its Killing event (to %s later); and each sidecar's SIGTERM came less than its own %s preStop after the exit it waited for (%s's, then %s's), so that preStop had ended before — had it started only then, the SIGTERM would have come %[7]s after that exit.",
			p.Pod, sec(stoppingWithin), sec(stoppingSpread), mainName, sec(mainPreStop), sec(mainPreStop+claims.KubeletSyncAllowance), sec(sidecarPreStop), mainName, sidecarB))
	if !v.usePod(p, containersOf...) {
		return v.done(rec)
	}
	var first, last *time.Time
	for _, name := range containersOf {
		c := p.Containers[name]
		if !v.has(c.Stopping, "the kubelet's Killing event for "+name) {
			continue
		}
		d := v.between(rec, key(name)+"_stopping_after_delete_seconds", *p.Deleted, evidence.OnHost(*c.Stopping))
		v.Require(v.CausedWithin(d, stoppingWithin, "the time from the delete to the Killing event for "+name), "the Killing event for %s came %s after the delete, not within %s", name, d.D.Round(time.Millisecond), sec(stoppingWithin))
		if first == nil || c.Stopping.Before(*first) {
			first = c.Stopping
		}
		if last == nil || c.Stopping.After(*last) {
			last = c.Stopping
		}
	}
	if first != nil {
		d := v.gap("stopping_spread_seconds", *first, *last)
		v.Require(d <= stoppingSpread, "the three Killing events came %s apart, not within %s", d.Round(time.Millisecond), sec(stoppingSpread))
	}
	main := p.Containers[mainName]
	if main.Stopping != nil && v.has(main.Sigterm, mainName+"'s SIGTERM (its log)") {
		d := v.between(rec, "main_sigterm_after_stopping_seconds", evidence.OnHost(*main.Stopping), p.onNode(*main.Sigterm))
		// The Killing event may be observed a little after the preStop began.
		v.Require(v.WithinClocks(d, mainPreStop-claims.WatchAllowance, mainPreStop+claims.KubeletSyncAllowance, "the time from "+mainName+"'s Killing event to its SIGTERM"),
			"%s got SIGTERM %s after its Killing event, not its %s preStop later", mainName, d.D.Round(time.Millisecond), sec(mainPreStop))
	}
	for _, w := range []struct{ sidecar, awaited string }{{sidecarB, mainName}, {sidecarA, sidecarB}} {
		s, awaited := p.Containers[w.sidecar], p.Containers[w.awaited]
		if v.has(s.Sigterm, w.sidecar+"'s SIGTERM (its log)") && v.has(awaited.Finished, w.awaited+"'s exit (crictl, or its exit line)") {
			d := v.gap(key(w.sidecar)+"_sigterm_after_awaited_exit_seconds", *awaited.Finished, *s.Sigterm)
			v.Require(d < sidecarPreStop, "%s got SIGTERM %s after %s exited: its %s preStop may have run only then", w.sidecar, d.Round(time.Millisecond), w.awaited, sec(sidecarPreStop))
		}
	}
	return v.done(rec).WithTolerance("stopping_spread_seconds", stoppingSpread)
}

func mainKilledAtGraceEnd(rec *evidence.Record, p podRun) claims.Claim {
	sec := claims.InSeconds
	killed := int32(137)
	v := newVerdict("sidecar.overrun_main_killed_at_grace_end",
		fmt.Sprintf("In pod %s the main container %s, which wants %s after SIGTERM, uses up the pod's %s grace period: it got SIGTERM after its %s preStop and was killed (crictl: exit code %d) %s to %s after the delete — the grace period from the kubelet's reaction (≤ %s), plus up to %s the kubelet loses truncating the preStop's time to whole seconds, plus %s for the exit record. Runs compare within ±%[9]s.",
			p.Pod, mainName, sec(overrunMainWants), sec(overrunGrace), sec(mainPreStop), killed, sec(overrunGrace), sec(mainKilledWithin), sec(claims.KubeletSyncAllowance), sec(wholeSecond), sec(claims.ExitAllowance)))
	if !v.usePod(p, mainName) {
		return v.done(rec)
	}
	main := p.Containers[mainName]
	if v.has(main.Sigterm, mainName+"'s SIGTERM (its log)") {
		d := v.between(rec, "main_sigterm_after_delete_seconds", *p.Deleted, p.onNode(*main.Sigterm))
		v.Require(v.WithinClocks(d, mainPreStop, claims.NoUpperBound, "the time from the delete to "+mainName+"'s SIGTERM"), "%s got SIGTERM %s after the delete, before its %s preStop could end", mainName, d.D.Round(time.Millisecond), sec(mainPreStop))
	}
	if v.has(main.Finished, mainName+"'s exit (crictl, or its exit line)") {
		d := v.between(rec, "main_killed_after_delete_seconds", *p.Deleted, p.onNode(*main.Finished))
		v.Require(v.WithinClocks(d, overrunGrace, mainKilledWithin, "the time from the delete to "+mainName+"'s kill"), "%s stopped %s after the delete, not between %s and %s", mainName, d.D.Round(time.Millisecond), sec(overrunGrace), sec(mainKilledWithin))
	}
	if v.Require(main.ExitCode != nil, "%s's exit code was not recorded (neither crictl nor the pod's status gave it)", mainName) {
		v.Observe("main_exit_code", int(*main.ExitCode))
		v.Require(*main.ExitCode == killed, "%s exited %d, not %d (SIGKILL)", mainName, *main.ExitCode, killed)
	}
	return v.done(rec).WithTolerance("main_killed_after_delete_seconds", claims.KubeletSyncAllowance)
}

func sidecarsEndedRightAfter(rec *evidence.Record, p podRun) claims.Claim {
	sec := claims.InSeconds
	v := newVerdict("sidecar.overrun_sidecars_ended_right_after",
		fmt.Sprintf("When the main container has used up the grace period (pod %s), the sidecars are ended right after, together, with a short grace: each sidecar's SIGTERM comes within %s of %s's kill (crictl; before or after: both are the grace period's end, each up to a truncated second late, plus the log line), the two SIGTERMs within %s of each other (not one sidecar after the other), and each sidecar exits within %s of its SIGTERM (the kubelet's 2 s minimum grace, plus the exit record) — with exit code 0, its %s term delay fitting in that grace. Recorded: how long after the main container's kill each sidecar got SIGTERM and was gone. Runs compare within ±%[2]s.",
			p.Pod, sec(endedRightAfter), mainName, sec(togetherWithin), sec(shortGrace), sec(sidecarTermDelay)))
	if !v.usePod(p, containersOf...) {
		return v.done(rec)
	}
	main := p.Containers[mainName]
	if !v.has(main.Finished, mainName+"'s kill (crictl)") {
		return v.done(rec)
	}
	for _, name := range sidecarsInStartOrder {
		s := p.Containers[name]
		if v.has(s.Sigterm, name+"'s SIGTERM (its log)") {
			d := v.gap(key(name)+"_sigterm_after_main_killed_seconds", *main.Finished, *s.Sigterm)
			v.Require(d >= -endedRightAfter && d <= endedRightAfter, "%s got SIGTERM %s after %s was killed, not within ±%s", name, d.Round(time.Millisecond), mainName, sec(endedRightAfter))
			if v.has(s.Finished, name+"'s exit (crictl, or its exit line)") {
				v.gap(key(name)+"_ended_after_main_killed_seconds", *main.Finished, *s.Finished)
				e := v.gap(key(name)+"_ended_after_sigterm_seconds", *s.Sigterm, *s.Finished)
				v.Require(e <= shortGrace, "%s ended %s after its SIGTERM, not within %s", name, e.Round(time.Millisecond), sec(shortGrace))
			}
		}
		if v.Require(s.ExitCode != nil, "%s's exit code was not recorded (neither crictl nor the pod's status gave it)", name) {
			v.Observe(key(name)+"_exit_code", int(*s.ExitCode))
			v.Require(*s.ExitCode == 0, "%s exited %d, not 0", name, *s.ExitCode)
		}
	}
	a, b := p.Containers[sidecarA], p.Containers[sidecarB]
	if a.Sigterm != nil && b.Sigterm != nil {
		d := v.gap("sidecars_sigterm_apart_seconds", *b.Sigterm, *a.Sigterm)
		v.Require(d.Abs() <= togetherWithin, "the sidecars got SIGTERM %s apart, not together (within %s)", d.Abs().Round(time.Millisecond), sec(togetherWithin))
	}
	return v.done(rec).
		WithTolerance(key(sidecarA)+"_sigterm_after_main_killed_seconds", endedRightAfter).
		WithTolerance(key(sidecarB)+"_sigterm_after_main_killed_seconds", endedRightAfter)
}
