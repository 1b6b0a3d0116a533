package mount

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:mount run on the termlab cluster (kubelet v1.37.2,
// containerd 1.7); the whole objects are left out of events.jsonl.
const recorded = "testdata/20261207-150133-94dc"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 5)
}

// released is when the recorded run released the mount.
func released(t *testing.T, rec *evidence.Record) time.Time {
	a, ok := firstOf(rec, evidence.ActionReleaseMount)
	if !ok {
		t.Fatal("the recorded run has no release")
	}
	return a.StartedAt
}

// deletedAt moves the pod's DELETED event to at.
func deletedAt(t *testing.T, rec *evidence.Record, at time.Time) {
	for i, e := range rec.PodEvents {
		if e.Name == pod && e.Type == "DELETED" {
			rec.PodEvents[i].ObservedAt = at
			return
		}
	}
	t.Fatal("the recorded run has no DELETED event")
}

// keepJournal keeps the journal entries for which keep is true.
func keepJournal(rec *evidence.Record, keep func(evidence.JournalEntry) bool) {
	var out []evidence.JournalEntry
	for _, e := range rec.Journal {
		if keep(e) {
			out = append(out, e)
		}
	}
	rec.Journal = out
}

func TestGoneBeforeTheReleaseFails(t *testing.T) {
	rec := load(t)
	deletedAt(t, rec, released(t, rec).Add(-2*time.Second))
	labtest.MustFail(t, Claims(rec), idStays)
}

func TestTooFewBusyUnmountsFails(t *testing.T) {
	rec := load(t)
	n := 0
	keepJournal(rec, func(e evidence.JournalEntry) bool {
		if strings.Contains(e.Message, "TearDown failed") {
			n++
			return n < minFailures
		}
		return true
	})
	labtest.MustFail(t, Claims(rec), idStays)
}

func TestAnUnmountFailingForAnotherReasonIsNotTheCause(t *testing.T) {
	rec := load(t)
	for i, e := range rec.Journal {
		rec.Journal[i].Message = strings.ReplaceAll(strings.ReplaceAll(e.Message, "target is busy", "permission denied"), "device or resource busy", "permission denied")
	}
	labtest.MustFail(t, Claims(rec), idStays, idGone)
}

// termlab releasing sooner than it states is its own doing: not checked,
// naming the precondition (internal/claims.Precondition).
func TestReleasedSoonerThanTheHoldIsNotChecked(t *testing.T) {
	rec := load(t)
	exit, ok := exitSeen(rec, mustAction(t, rec, evidence.ActionDelete))
	if !ok {
		t.Fatal("no exit in the recorded run")
	}
	for i, a := range rec.Actions {
		if a.Kind == evidence.ActionReleaseMount {
			d := a.FinishedAt.Sub(a.StartedAt)
			rec.Actions[i].StartedAt = exit.ObservedAt.Add(holdPast / 2)
			rec.Actions[i].FinishedAt = rec.Actions[i].StartedAt.Add(d)
		}
	}
	labtest.Decided(t, Claims(rec), idStays, claims.NotChecked, "precondition not met — termlab releases the mount no sooner than 20 s after crictl saw the container exited")
	// A DELETED inside the shorter hold is the cluster's, and fails it.
	deletedAt(t, rec, exit.ObservedAt.Add(holdPast/4))
	labtest.Decided(t, Claims(rec), idStays, claims.Fail, "before the release")
}

func TestGoneLongAfterTheRetryFails(t *testing.T) {
	rec := load(t)
	deletedAt(t, rec, released(t, rec).Add(goneWithin))
	labtest.MustFail(t, Claims(rec), idGone)
}

func TestNoRetryTimeLoggedFails(t *testing.T) {
	rec := load(t)
	for i, e := range rec.Journal {
		rec.Journal[i].Message = strings.Replace(e.Message, "No retries permitted until", "No retries until", 1)
	}
	labtest.MustFail(t, Claims(rec), idGone)
}

func TestStillMountedAfterTheDeleteFails(t *testing.T) {
	rec := load(t)
	last := &rec.Mounts[len(rec.Mounts)-1]
	last.Mounted = append(last.Mounted, rec.Mounts[0].Mounted...)
	labtest.MustFail(t, Claims(rec), idUnmount)
}

func TestAHolderElsewhereFails(t *testing.T) {
	rec := load(t)
	for i := range rec.Mounts {
		if rec.Mounts[i].HolderState == "active" {
			rec.Mounts[i].HolderCwd = "/var/lib/kubelet"
		}
	}
	labtest.MustFail(t, Claims(rec), idUnmount)
}

func TestAContainerKilledIsNotAnExitByItself(t *testing.T) {
	rec := load(t)
	killed := int32(137)
	for i, o := range rec.Containers {
		if o.Pod == pod && o.ExitCode != nil {
			rec.Containers[i].ExitCode = &killed
		}
	}
	for i := range rec.TaskExits {
		rec.TaskExits[i].ExitStatus = killed
	}
	labtest.MustFail(t, Claims(rec), idExited)
}

func TestWithoutNodeAccessTheNodeClaimsAreNotChecked(t *testing.T) {
	rec := load(t)
	rec.NodeAccess = evidence.NodeAccessNone
	for _, c := range Claims(rec) {
		// The watch's order is the API server's, not the node's.
		if c.ID != idExited && c.ID != claims.WatchOrderID("mount") && c.Verdict != claims.NotChecked {
			t.Errorf("%s: %s without node access", c.ID, c.Verdict)
		}
	}
}

func mustAction(t *testing.T, rec *evidence.Record, kind evidence.ActionKind) evidence.Action {
	a, ok := firstOf(rec, kind)
	if !ok {
		t.Fatalf("no %s in the recorded run", kind)
	}
	return a
}

func TestNoUnmountLoggedAfterTheReleaseFails(t *testing.T) {
	rec := load(t)
	keepJournal(rec, func(e evidence.JournalEntry) bool { return !strings.Contains(e.Message, "TearDown succeeded") })
	labtest.MustFail(t, Claims(rec), idGone)
}

func TestUnmountedWhileHeldFails(t *testing.T) {
	rec := load(t)
	for i := range rec.Mounts {
		if rec.Mounts[i].HolderState == "active" {
			rec.Mounts[i].Mounted = nil
			break
		}
	}
	labtest.MustFail(t, Claims(rec), idUnmount)
}

func TestHolderGoneBeforeTheReleaseFails(t *testing.T) {
	rec := load(t)
	n := 0
	for i := range rec.Mounts {
		if rec.Mounts[i].HolderState == "active" {
			if n++; n == 2 { // the look after the hold's wait
				rec.Mounts[i].HolderState, rec.Mounts[i].HolderCwd = "inactive", ""
			}
		}
	}
	labtest.MustFail(t, Claims(rec), idUnmount)
}

// A pod's watch events in an order a watch never sends fail mount.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "mount")
}

// The statement says the workload exits its term delay after the SIGTERM: a
// container that stopped at once after it (a workload without the delay, as
// the manifest had before) contradicts it, though it is still within the
// bound from the delete.
func TestExitWithoutTheTermDelayFails(t *testing.T) {
	rec := load(t)
	n := 0
	for i, o := range rec.Containers {
		if o.Pod != pod || o.Log == nil || o.Log.SignalAt == nil || o.FinishedAt == nil {
			continue
		}
		at := o.Log.SignalAt.Add(50 * time.Millisecond)
		rec.Containers[i].FinishedAt = &at
		if o.Log.ExitAt != nil {
			rec.Containers[i].Log.ExitAt = &at
		}
		n++
	}
	if n == 0 {
		t.Fatal("the recorded run has no stopped container with its SIGTERM logged")
	}
	labtest.OnlyFail(t, Claims(rec), idExited)
}
