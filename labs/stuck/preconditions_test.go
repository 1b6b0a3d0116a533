package stuck

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

const stays = "stuck.stays_terminating"

// taintAt moves the out-of-service taint request (the end of the window
// termlab holds) to at.
func taintAt(t *testing.T, rec *evidence.Record, at time.Time) {
	t.Helper()
	for i, a := range rec.Actions {
		if a.Kind == evidence.ActionTaintNode {
			d := a.FinishedAt.Sub(a.StartedAt)
			rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at, at.Add(d)
			return
		}
	}
	t.Fatal("no taint-node in the recorded run")
}

// deadline is the pod's grace deadline, as the watch showed it.
func deadline(t *testing.T, rec *evidence.Record) time.Time {
	t.Helper()
	for _, e := range rec.EventsFor(pod) {
		if e.DeletionTimestamp != nil {
			return *e.DeletionTimestamp
		}
	}
	t.Fatal("no deletionTimestamp in the recorded run")
	return time.Time{}
}

// termlab tainting sooner than it states is its own doing: not checked,
// naming the precondition, however little the shorter window showed.
func TestTaintSoonerThanTheHoldIsNotChecked(t *testing.T) {
	rec := load(t)
	taintAt(t, rec, deadline(t, rec).Add(pastDeadline/3))
	labtest.Decided(t, Claims(rec), stays, claims.NotChecked, "precondition not met — termlab sends the taint-node request no sooner than 15 s past the pod's grace deadline")
}

func TestTaintSoonerAfterNotReadyIsNotChecked(t *testing.T) {
	rec := load(t)
	var notReady time.Time
	for _, e := range rec.NodeEvents {
		if e.Name == rec.TargetOf(evidence.ActionStopKubelet) && e.Ready != "True" {
			notReady = e.ObservedAt
			break
		}
	}
	taintAt(t, rec, notReady.Add(pastNotReady/2))
	if notReady.Add(pastNotReady/2).Sub(deadline(t, rec)) < pastDeadline {
		t.Fatal("the test's taint comes too soon after the deadline as well")
	}
	labtest.Decided(t, Claims(rec), stays, claims.NotChecked, "after the node watch saw node "+rec.TargetOf(evidence.ActionStopKubelet)+" leave Ready")
}

// A DELETED inside the part of the window termlab did give contradicts
// the claim whatever termlab did after it: a failure, not "not checked".
func TestDeletedInsideAShortHoldFails(t *testing.T) {
	rec := load(t)
	dl := deadline(t, rec)
	taintAt(t, rec, dl.Add(pastDeadline/3))
	for i, e := range rec.PodEvents {
		if e.Name == pod && e.Type == "DELETED" {
			rec.PodEvents[i].ObservedAt = dl.Add(time.Second)
		}
	}
	labtest.Decided(t, Claims(rec), stays, claims.Fail, "a longer hold would not undo it")
}
