package scale

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/scaleruns"
)

// The deletion pace claim against the committed runs' figures
// (labs/scale/measured) and records that contradict it.
func TestDeletePace(t *testing.T) {
	oneWorker := defaultLimits
	oneWorker.DeleteCollectionWorkers, oneWorker.KwokPodPlayParallelism = 1, 16
	raised := raisedLimits
	raised.DeleteCollectionWorkers, raised.KwokPodPlayParallelism = cluster.RaisedDeleteCollectionWorkers, 64
	bd7c := &scaleruns.Rates{RunID: "20261205-142424-bd7c", Pods: 5000, Limits: cluster.LimitsDefault, MarkedPerSecond: 32.2, DeletedPerSecond: 31.3}
	for _, tc := range []struct {
		name            string
		asked           string
		limits          *cluster.ControlPlaneLimits
		ref             *scaleruns.Rates
		marked, deleted float64
		want            claims.Verdict
		reasonHas       string
	}{
		{"default: DELETED as fast as marked (run bd7c)", "", &oneWorker, nil, 32.2, 31.3, claims.Pass, ""},
		{"default: DELETED behind the marking (run be79, kwok at 4)", "default", &oneWorker, nil, 21.8, 13.9, claims.Fail, "something after the marking"},
		{"limits not recorded", "", nil, nil, 32.2, 31.3, claims.Fail, "did not record the control plane's limits"},
		{"nothing marked", "", &oneWorker, nil, 0, 31.3, claims.Fail, "no marking"},
		{"raised asked, one worker", "raised", &oneWorker, bd7c, 32.2, 31.3, claims.Fail, "works a collection with 1 worker"},
		{"raised, no default run to compare", "raised", &raised, nil, 121.0, 31.7, claims.NotChecked, "lab:scale -pods=5000 -nodes=100"},
		{"raised, DELETED no faster than one worker marked (run e6e2, kwok at 16)", "raised", &raised, bd7c, 121.0, 31.7, claims.Fail, "did not raise the deletion's pace"},
		{"raised, DELETED faster", "raised", &raised, bd7c, 121.0, 60.0, claims.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &facts{size: Size{FakeNodes: 100, Pods: 5000, FinalizerPercent: 20, StageSet: "faithful", Limits: tc.asked}, sizeOK: true, defaultRun: tc.ref}
			if tc.limits != nil {
				f.limits, f.limitsOK = *tc.limits, true
			}
			c := deletePace(f, Figures{MarkedPerSecond: tc.marked, DeletedPerSecond: tc.deleted})
			if c.Verdict != tc.want || !strings.Contains(c.Reason, tc.reasonHas) {
				t.Errorf("got %s (%s), want %s with %q", c.Verdict, c.Reason, tc.want, tc.reasonHas)
			}
		})
	}
}

// The compared run travels through the record as a note.
func TestDefaultRunNote(t *testing.T) {
	if r := readDefaultRun(`{"pods":5000}`); r != nil {
		t.Errorf("a note without a run id: got %+v, want nil", r)
	}
	r := readDefaultRun(`{"run_id":"20261205-142424-bd7c","pods":5000,"limits":"default","marked_pods_per_second":32.2,"deleted_pods_per_second":31.3}`)
	if r == nil || r.MarkedPerSecond != 32.2 || r.Pods != 5000 {
		t.Errorf("got %+v", r)
	}
}
