package force

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:force run on the termlab cluster (kubelet v1.37.2);
// the whole objects are left out of events.jsonl.
const recorded = "testdata/20261202-111925-7f5b"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 0)
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  string
	}{
		{"the object lingered for 5 s", func(rec *evidence.Record) {
			for i, e := range rec.PodEvents {
				if e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(5 * time.Second)
				}
			}
		}, "force.api_object_gone"},
		{"a GET still found the pod", func(rec *evidence.Record) {
			for i := range rec.Snapshots {
				rec.Snapshots[i].Found = true
			}
		}, "force.api_object_gone"},
		{"the container was already gone when the object was", func(rec *evidence.Record) {
			gone, _ := rec.Deleted(pod)
			for i, o := range rec.Containers {
				if o.ObservedAt.After(gone.ObservedAt) {
					rec.Containers[i].State = evidence.ContainerExited
				}
			}
		}, "force.container_outlives_object"},
		{"the container never stopped", func(rec *evidence.Record) {
			for i := range rec.Containers {
				rec.Containers[i].State, rec.Containers[i].FinishedAt, rec.Containers[i].ExitCode = evidence.ContainerRunning, nil, nil
			}
		}, "force.container_stops"},
		{"crictl looked at another container", func(rec *evidence.Record) {
			for i := range rec.Containers {
				rec.Containers[i].ContainerID = "ffffffffffff"
			}
		}, "force.container_stops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.MustFail(t, Claims(rec), tc.fails)
		})
	}
}

func TestRecordedHowItStopped(t *testing.T) {
	var stops claims.Claim
	for _, c := range Claims(load(t)) {
		if c.ID == "force.container_stops" {
			stops = c
		}
	}
	// Observed on kubelet v1.37.2: SIGTERM at once, SIGKILL 2 s later
	// (the kubelet's minimum grace period), not the pod's 30 s.
	if stops.Observed["exit_code"] != float64(137) && stops.Observed["exit_code"] != int32(137) {
		t.Errorf("exit code %v", stops.Observed["exit_code"])
	}
	if stops.Observed["sigterm_logged"] != true {
		t.Errorf("sigterm_logged %v", stops.Observed["sigterm_logged"])
	}
}
