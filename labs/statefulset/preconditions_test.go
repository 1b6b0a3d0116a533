package statefulset

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/ledger"
)

const (
	staysID  = "statefulset.stays_terminating"
	singleID = "statefulset.no_replacement_while_terminating"
	againID  = "statefulset.one_writer_again"
)

// forceSoon moves the force delete to 20 s after the ordinary delete:
// sooner than the grace period and the hold past it termlab states.
func forceSoon(t *testing.T, rec *evidence.Record) time.Time {
	t.Helper()
	del, ok := rec.Action(evidence.ActionDelete, pod)
	if !ok {
		t.Fatal("no delete in the recorded run")
	}
	at := del.StartedAt.Add(20 * time.Second)
	for i, a := range rec.Actions {
		if a.Kind == evidence.ActionForceDelete && a.Target == pod {
			d := a.FinishedAt.Sub(a.StartedAt)
			rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at, at.Add(d)
			return at
		}
	}
	t.Fatal("no force delete in the recorded run")
	return at
}

func TestForceDeleteSoonerThanTheHoldIsNotChecked(t *testing.T) {
	rec := load(t)
	forceSoon(t, rec)
	cs := Claims(rec)
	labtest.Decided(t, cs, singleID, claims.NotChecked, "precondition not met — termlab sends the force-delete request no sooner than 45 s after the delete request")
	labtest.Decided(t, cs, staysID, claims.NotChecked, "precondition not met — termlab sends the force-delete request no sooner than 15 s past the pod's grace deadline")
}

// A second writer inside the shorter window is the cluster's: it fails.
func TestSecondWriterInsideAShortWindowFails(t *testing.T) {
	rec := load(t)
	at := forceSoon(t, rec)
	_, replacement := incarnations(t, rec)
	e := ledger.Entry{ReceivedAt: at.Add(-time.Second)}
	e.UID, e.Pod, e.Node = replacement, pod, "elsewhere"
	entries := ledgerEntries(rec)
	*entries = append(*entries, e)
	sortEntries(*entries)
	labtest.Decided(t, Claims(rec), singleID, claims.Fail, "a longer hold would not undo it")
}

// lastOriginalWrite is when the original's last write reached the ledger.
func lastOriginalWrite(t *testing.T, rec *evidence.Record) time.Time {
	original, _ := incarnations(t, rec)
	var last time.Time
	for _, e := range *ledgerEntries(rec) {
		if e.UID == original {
			last = e.ReceivedAt
		}
	}
	return last
}

// readAt makes the last ledger read happen at at, with what had arrived by then.
func readAt(rec *evidence.Record, at time.Time) {
	l := &rec.Ledgers[len(rec.Ledgers)-1]
	l.At = at
	var kept []ledger.Entry
	for _, e := range l.Entries {
		if !e.ReceivedAt.After(at) {
			kept = append(kept, e)
		}
	}
	l.Entries = kept
}

func TestLedgerReadSoonerThanTheHoldIsNotChecked(t *testing.T) {
	rec := load(t)
	readAt(rec, lastOriginalWrite(t, rec).Add(2*time.Second))
	labtest.Decided(t, Claims(rec), againID, claims.NotChecked, "precondition not met — termlab lets the new incarnation write alone for 5 s")
}

func TestAnotherWriterAfterTheOriginalFails(t *testing.T) {
	rec := load(t)
	last := lastOriginalWrite(t, rec)
	readAt(rec, last.Add(2*time.Second))
	e := ledger.Entry{ReceivedAt: last.Add(time.Second)}
	e.UID, e.Pod, e.Node = "a-third-uid", pod, "elsewhere"
	entries := ledgerEntries(rec)
	*entries = append(*entries, e)
	sortEntries(*entries)
	labtest.Decided(t, Claims(rec), againID, claims.Fail, "not the new incarnation alone")
}

// The new incarnation must still be writing when termlab reads the ledger.
func TestNewIncarnationStoppedWritingFails(t *testing.T) {
	rec := load(t)
	last := lastOriginalWrite(t, rec)
	var kept []ledger.Entry
	for _, e := range *ledgerEntries(rec) {
		if !e.ReceivedAt.After(last.Add(time.Second)) {
			kept = append(kept, e)
		}
	}
	*ledgerEntries(rec) = kept
	labtest.Decided(t, Claims(rec), againID, claims.Fail, "it had stopped writing")
}

func sortEntries(es []ledger.Entry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].ReceivedAt.Before(es[j-1].ReceivedAt); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
