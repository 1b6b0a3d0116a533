package namespace

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// The recorded run with the API server's clock 2 s behind the host's: its
// offset is measured from termlab's own request the audit log holds (the
// pod's create), and the claims that compare the audit log's times with the
// watch's and termlab's decide as on one clock. Uncorrected, the PVC
// protection controller would let the claim go 2 s before the pod's DELETED.
func TestAnAPIServerTwoSecondsBehind(t *testing.T) {
	rec := load(t)
	if o, ok := rec.APIServerOffset(); !ok || o.Samples == 0 {
		t.Fatalf("the recorded run measures no API server offset: %+v", o)
	}
	for i := range rec.Audit {
		rec.Audit[i].ReceivedAt = rec.Audit[i].ReceivedAt.Add(-2 * time.Second)
		rec.Audit[i].CompletedAt = rec.Audit[i].CompletedAt.Add(-2 * time.Second)
	}
	if o, _ := rec.APIServerOffset(); o.Offset > -1.9 || o.Offset < -2.1 {
		t.Fatalf("offset %+v, want about −2 s", o)
	}
	labtest.AllPass(t, Claims(rec), 7)
}

// The same, on a cluster reached through a node pod, with the server's
// clock not measured (no request of termlab's in the audit log): the claims
// that compare the audit log's times with the host's are not checked.
func TestAnUnmeasuredAPIServerClock(t *testing.T) {
	rec := load(t)
	rec.NodeAccess = evidence.NodeAccessPod
	var keep []evidence.AuditEvent
	for _, e := range rec.Audit {
		if !e.ByPerson() {
			keep = append(keep, e)
		}
	}
	rec.Audit = keep
	if _, ok := rec.APIServerOffset(); ok {
		t.Fatal("measured")
	}
	cs := labtest.ByID(Claims(rec))
	for _, id := range []string{idClaimHeld} {
		if c := cs[id]; c.Verdict != "not checked" {
			t.Errorf("%s: %s (%s)", id, c.Verdict, c.Reason)
		}
	}
}
