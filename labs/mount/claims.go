package mount

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
)

// Bounds of the claims, each from the mechanism (k8s.io/kubernetes v1.37.2).
const (
	// afterRetryAllowance bounds, past the kubelet's next unmount retry, the
	// pod's DELETED: the volume manager's reconciler runs every 100 ms and
	// the retry's umount takes milliseconds; the pod worker's wait for the
	// unmount polls every 300 ms (volume_manager.go WaitForUnmount), then the
	// status manager sends the final delete (the kubelet's sync path, the
	// allowance measured for it) and the watch delivers it.
	afterRetryAllowance = claims.KubeletSyncAllowance + claims.WatchAllowance
	// minFailures: a busy mount fails the first unmount right after the
	// exit and the retries after 0.5, 1 and 2 s; holdPast sees more.
	minFailures = 3
)

// Claim ids.
const (
	idExited  = "mount.container_exited"
	idStays   = "mount.stays_while_busy"
	idGone    = "mount.gone_after_release"
	idUnmount = "mount.unmounted"
	journal   = "kubelet"
)

// Claims decides lab:mount's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	exitedCode := int32(0)
	return []claims.Claim{
		claims.ContainerStopped(rec, claims.Stops{
			ID: idExited,
			Statement: fmt.Sprintf("The process is not what holds the pod: after the ordinary delete its container logs SIGTERM and exits by itself (exit code 0) %s to %s after that SIGTERM (its %[1]s term delay, plus %s for the exit to be recorded), within %s of the delete (the kubelet's sync after the delete, the term delay and the exit), while the object still exists, reported in a terminal phase — long before its %s grace period ends. Runs compare within ±%[4]s and ±%[2]s.",
				claims.InSeconds(termDelay), claims.InSeconds(exitAfterSigterm), claims.InSeconds(claims.ExitAllowance), claims.InSeconds(exitWithin), claims.InSeconds(grace)),
			Pod: pod, After: evidence.ActionDelete, Within: exitWithin, WhileObjectExists: true, WantSIGTERM: true, WantExitCode: &exitedCode,
			StopAfterSignal: &claims.Window{Min: termDelay, Max: exitAfterSigterm},
		}).WithTolerance("stopped_after_seconds", exitWithin).WithTolerance("stopped_after_sigterm_seconds", exitAfterSigterm),
		staysWhileBusy(rec),
		goneAfterRelease(rec).WithTolerance("deleted_after_retry_seconds", afterRetryAllowance),
		unmounted(rec),
		claims.WatchOrder(rec, "mount"),
	}
}

// teardown is one of the kubelet's journal entries on the volume's unmount.
type teardown struct {
	entry evidence.JournalEntry
	kubelet.Teardown
}

// podUID is the UID of the lab's pod, as its watch events gave it.
func podUID(rec *evidence.Record) string {
	for _, e := range rec.EventsFor(pod) {
		if e.UID != "" {
			return e.UID
		}
	}
	return ""
}

// teardowns are the kubelet's entries on the pod's volume's unmount, in
// order: the failures of a busy mount, and the success. (A failure of
// another kind is not this lab's cause, and left out.)
func teardowns(rec *evidence.Record) []teardown {
	uid := podUID(rec)
	var out []teardown
	for _, e := range joined(rec.Journal) {
		t, ok := kubelet.ParseTeardown(e.Message)
		if e.Unit != journal || !ok || uid == "" || !kubelet.VolumeOfPod(t.Volume, uid, volume) || (t.Failed && !t.Busy) {
			continue
		}
		out = append(out, teardown{entry: e, Teardown: t})
	}
	return out
}

// unmountSucceeded reports whether a journal entry is the kubelet's success
// at unmounting the volume of the pod with that UID (a one-line message).
func unmountSucceeded(e evidence.JournalEntry, uid string) bool {
	t, ok := kubelet.ParseTeardown(e.Message)
	return e.Unit == journal && ok && !t.Failed && uid != "" && kubelet.VolumeOfPod(t.Volume, uid, volume)
}

// joined puts the kubelet's multi-line messages back together: journald
// keeps each further line (umount's "target is busy") as an entry of its own.
func joined(entries []evidence.JournalEntry) []evidence.JournalEntry {
	var out []evidence.JournalEntry
	for _, e := range entries {
		if n := len(out); n > 0 && kubelet.Continues(e.Message) && out[n-1].Node == e.Node && out[n-1].Unit == e.Unit {
			out[n-1].Message += "\n" + e.Message
			continue
		}
		out = append(out, e)
	}
	return out
}

// onNode is the entry's time on its node's clock.
func (t teardown) onNode() evidence.Stamp { return evidence.OnNode(t.entry.Node, t.entry.At) }

// before reports whether a (node clock) lies before b, the clocks corrected.
func before(rec *evidence.Record, a, b evidence.Stamp) bool { return rec.Between(a, b).D > 0 }

// exitSeen is crictl's first look that found the container stopped after the delete.
func exitSeen(rec *evidence.Record, del evidence.Action) (evidence.ContainerObservation, bool) {
	for _, o := range rec.ContainersFor(pod) {
		if !o.ObservedAt.Before(del.StartedAt) && o.Stopped() {
			return o, true
		}
	}
	return evidence.ContainerObservation{}, false
}

func staysWhileBusy(rec *evidence.Record) claims.Claim {
	b := claims.NewBuilder(idStays, fmt.Sprintf("While a process on the node has its working directory in the pod's tmpfs volume %s, the object stays. termlab holds the mount %s past the container's exit (precondition); in that time the object is still there, with no DELETED event, until the mount is released, and the kubelet's journal shows its unmount failing with the mount busy (UnmountVolume.TearDown failed … target is busy) at least %d times, its retries backing off (the volume manager's exponential back-off: 0.5 s, doubling, at most 2 min 2 s). The kubelet lets a pod go only once its volumes are cleaned up.",
		volume, claims.InSeconds(holdPast), minFailures), evidence.EventsFile)
	if rec.NodeAccess == evidence.NodeAccessNone {
		b.NotChecked("the run had no node access: the journal and crictl were not read")
		return b.Done()
	}
	del, okDel := rec.Action(evidence.ActionDelete, pod)
	rel, okRel := firstOf(rec, evidence.ActionReleaseMount)
	if !b.Require(okDel, "no %s of pod %s in the record", evidence.ActionDelete, pod) || !b.Require(okRel, "no %s in the record: the mount was never released", evidence.ActionReleaseMount) {
		return b.Done()
	}
	exit, ok := exitSeen(rec, del)
	if !b.Require(ok, "crictl never saw the container of %s stopped after the delete", pod) {
		return b.Done()
	}
	b.Cite(exit.Files()...)
	relAt := rec.ActionStamp(rel)
	// Both ends are termlab's own: the look that saw the exit ends its wait,
	// the release is its request.
	held := rec.Between(evidence.OnHost(exit.ObservedAt), relAt)
	b.Precondition("held_after_exit_seconds", fmt.Sprintf("termlab releases the mount no sooner than %s after crictl saw the container exited", claims.InSeconds(holdPast)), holdPast, held.D, true)
	if gone, ok := rec.Deleted(pod); ok {
		b.Contradicts(!before(rec, evidence.OnHost(gone.ObservedAt), relAt), "pod %s was DELETED at %s, before the release at %s: something other than the mount let it go", pod, gone.ObservedAt.Format(time.RFC3339Nano), rel.StartedAt.Format(time.RFC3339Nano))
	}
	// A gap in the pod watch while it was held could hide a DELETED.
	if gaps := rec.GapsOverlapping(evidence.WatchPods, exit.ObservedAt, relAt.Time); len(gaps) > 0 {
		b.Require(false, "the pod watch was down from %s to %s while the mount was held: a DELETED could be missing", gaps[0].From.Format(time.RFC3339Nano), gaps[0].To.Format(time.RFC3339Nano))
	}
	var failures []teardown
	for _, t := range teardowns(rec) {
		if t.Failed && before(rec, t.onNode(), relAt) {
			failures = append(failures, t)
		}
	}
	b.Observe("teardown_failures_while_held", len(failures))
	if len(failures) > 0 {
		b.Cite(failures[0].entry.Path)
		b.Observe("first_failure_at", failures[0].entry.At.Format(time.RFC3339Nano))
		b.Observe("last_backoff", failures[len(failures)-1].Backoff)
		b.Observe("first_failure", firstLine(failures[0].entry.Message))
	}
	b.Require(len(failures) >= minFailures, "the kubelet's journal shows %d failed unmounts of volume %s (mount busy) before the release, want at least %d", len(failures), volume, minFailures)
	return b.Done()
}

func goneAfterRelease(rec *evidence.Record) claims.Claim {
	b := claims.NewBuilder(idGone, fmt.Sprintf("Released, the pod goes at the kubelet's next unmount retry: the kubelet's journal says UnmountVolume.TearDown succeeded, and the pod's DELETED event comes after that and no later than %s after the retry time the kubelet's last failure before the release logged (No retries permitted until …), or after the release where that time had passed: the reconciler runs every 100 ms, the pod worker's wait for the unmount polls every 300 ms, then the kubelet's final delete (%s) and the watch (%s). Not at once: the back-off decides, so the longer a mount was busy, the longer after its release the pod can take (up to 2 min 2 s).",
		claims.InSeconds(afterRetryAllowance), claims.InSeconds(claims.KubeletSyncAllowance), claims.InSeconds(claims.WatchAllowance)), evidence.EventsFile)
	if rec.NodeAccess == evidence.NodeAccessNone {
		b.NotChecked("the run had no node access: the kubelet's journal was not read")
		return b.Done()
	}
	rel, ok := firstOf(rec, evidence.ActionReleaseMount)
	if !b.Require(ok, "no %s in the record", evidence.ActionReleaseMount) {
		return b.Done()
	}
	gone, ok := rec.Deleted(pod)
	if !b.Require(ok, "no DELETED event of pod %s after the release", pod) {
		return b.Done()
	}
	relAt := rec.ActionStamp(rel)
	after := rec.Between(relAt, evidence.OnHost(gone.ObservedAt))
	b.ObserveInterval("deleted_after_release_seconds", after)
	var last *teardown
	for _, t := range teardowns(rec) {
		if t.Failed && before(rec, t.onNode(), relAt) {
			t := t
			last = &t
		}
	}
	if !b.Require(last != nil, "the kubelet's journal shows no failed unmount of volume %s before the release: no retry time to count from", volume) {
		return b.Done()
	}
	b.Cite(last.entry.Path)
	if !b.Require(!last.RetryAt.IsZero(), "the kubelet's last failure before the release logged no retry time: %q", firstLine(last.entry.Message)) {
		return b.Done()
	}
	b.Observe("retry_permitted_at", last.RetryAt.Format(time.RFC3339Nano))
	b.Observe("backoff_at_release", last.Backoff)
	// The next retry counted from the release: zero when it was already due.
	wait := rec.Between(relAt, evidence.OnNode(last.entry.Node, last.RetryAt))
	if wait.D < 0 {
		wait.D = 0
	}
	b.ObserveInterval("retry_after_release_seconds", wait)
	b.Observe("deleted_after_retry_seconds", math.Round((after.D-wait.D).Seconds()*1000)/1000)
	// The kubelet's own word that the retry unmounted it, between the release and the DELETED.
	var unmountedAt *teardown
	for _, t := range teardowns(rec) {
		if !t.Failed && !before(rec, t.onNode(), relAt) {
			t := t
			unmountedAt = &t
			break
		}
	}
	if b.Require(unmountedAt != nil, "the kubelet's journal shows no UnmountVolume.TearDown succeeded for volume %s after the release", volume) {
		b.Observe("unmounted_at", unmountedAt.entry.At.Format(time.RFC3339Nano))
		b.Require(before(rec, unmountedAt.onNode(), evidence.OnHost(gone.ObservedAt)), "the kubelet logged the unmount at %s, after the DELETED event at %s", unmountedAt.entry.At.Format(time.RFC3339Nano), gone.ObservedAt.Format(time.RFC3339Nano))
	}
	b.Require(b.WithinClocks(after, claims.NoLowerBound, wait.D+afterRetryAllowance, "from the release to the DELETED event"),
		"pod %s was DELETED %s after the release, later than the kubelet's next retry (%s after it) + %s", pod, after.D.Round(time.Millisecond), wait.D.Round(time.Millisecond), afterRetryAllowance)
	b.Require(after.D >= 0, "pod %s was DELETED %s before the release", pod, (-after.D).Round(time.Millisecond))
	return b.Done()
}

func unmounted(rec *evidence.Record) claims.Claim {
	b := claims.NewBuilder(idUnmount, fmt.Sprintf("The node's mount table says the same: at every look before the release the volume %s is a tmpfs mounted under the kubelet's pod directory, and at every look from the hold to the release the holding process runs with its working directory (/proc/<pid>/cwd) in that mount; after the pod is gone, nothing is mounted there and no process holds it.", volume))
	if rec.NodeAccess == evidence.NodeAccessNone {
		b.NotChecked("the run had no node access: the mount table was not read")
		return b.Done()
	}
	hold, okHold := firstOf(rec, evidence.ActionHoldMount)
	rel, okRel := firstOf(rec, evidence.ActionReleaseMount)
	gone, okGone := rec.Deleted(pod)
	if !b.Require(okHold && okRel, "no %s and %s in the record", evidence.ActionHoldMount, evidence.ActionReleaseMount) {
		return b.Done()
	}
	var beforeRelease, held, after int
	for _, l := range rec.Mounts {
		if l.Error != "" {
			b.Require(false, "the look %q at %s failed: %s", l.Why, l.Node, l.Error)
			continue
		}
		at := evidence.OnHost(l.At)
		switch {
		case okGone && l.At.After(gone.ObservedAt):
			after++
			b.Cite(l.Path)
			b.Observe("mounted_after_gone", len(l.Mounted))
			b.Require(len(l.Mounted) == 0, "after the pod was gone, %s is still mounted: %v", l.Dir, l.Mounted)
			b.Require(l.HolderState != "active", "after the pod was gone, the holding process still runs (%s)", l.HolderState)
		case rec.Between(at, rec.ActionStamp(rel)).D > 0:
			beforeRelease++
			b.Require(len(l.Mounted) > 0 && strings.Contains(l.Mounted[0], " - tmpfs "), "at the look %q, before the release, %s was not a tmpfs mount: %v", l.Why, l.Dir, l.Mounted)
			if rec.Between(rec.ActionStamp(hold), at).D < 0 {
				continue // before the hold: nothing holds it yet
			}
			held++
			b.Cite(l.Path)
			if held == 1 {
				b.Observe("held_mount", strings.Join(l.Mounted, "\n"))
				b.Observe("holder_pid", l.HolderPID)
				b.Observe("holder_cwd", l.HolderCwd)
			}
			b.Require(l.HolderState == "active" && l.HolderCwd == l.Dir, "at the look %q the holding process is %s with its working directory %q, not in the volume %s", l.Why, l.HolderState, l.HolderCwd, l.Dir)
		}
	}
	b.Observe("looks_before_release", beforeRelease)
	b.Observe("looks_held", held)
	b.Require(held > 0, "no look at the node between the hold and the release")
	b.Require(after > 0, "no look at the node after pod %s was gone", pod)
	return b.Done()
}

// firstOf is the first action of the kind.
func firstOf(rec *evidence.Record, kind evidence.ActionKind) (evidence.Action, bool) {
	for _, a := range rec.Actions {
		if a.Kind == kind {
			return a, true
		}
	}
	return evidence.Action{}, false
}

// firstLine is a message's first line (the kubelet's errors carry umount's output below).
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
