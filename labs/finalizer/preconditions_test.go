package finalizer

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// releaseSoon moves the finalizer's removal of pod to 1 s after its force
// delete was answered: sooner than the hold termlab states.
func releaseSoon(t *testing.T, rec *evidence.Record, pod string) time.Time {
	t.Helper()
	force, ok := rec.Action(evidence.ActionForceDelete, pod)
	if !ok {
		t.Fatalf("no force delete of %s", pod)
	}
	at := force.FinishedAt.Add(time.Second)
	for i, a := range rec.Actions {
		if a.Kind == evidence.ActionRemoveFinalizers && a.Target == pod {
			d := a.FinishedAt.Sub(a.StartedAt)
			rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at, at.Add(d)
			return at
		}
	}
	t.Fatalf("no removal of %s's finalizer", pod)
	return at
}

func TestReleasedSoonerThanTheHoldIsNotChecked(t *testing.T) {
	rec := load(t)
	releaseSoon(t, rec, "held")
	cs := Claims(rec)
	labtest.Decided(t, cs, "finalizer.kubelet.force.object_stays", claims.NotChecked, "precondition not met — termlab sends the remove-finalizers request no sooner than 5 s after the force-delete request was answered")
	labtest.Decided(t, cs, "finalizer.kubelet.delete.object_stays", claims.NotChecked, "after the delete request was answered")
}

// A DELETED before the release, inside the shorter hold, still fails.
func TestDeletedInsideAShortHoldFails(t *testing.T) {
	rec := load(t)
	at := releaseSoon(t, rec, "held")
	for i, e := range rec.PodEvents {
		if e.Name == "held" && e.Type == "DELETED" {
			rec.PodEvents[i].ObservedAt = at.Add(-time.Second / 2)
		}
	}
	labtest.Decided(t, Claims(rec), "finalizer.kubelet.force.object_stays", claims.Fail, "DELETED event arrived")
}
