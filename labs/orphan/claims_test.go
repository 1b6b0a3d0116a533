package orphan

import (
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:orphan run on the termlab cluster (kubelet v1.37.2),
// the run after one killed with SIGKILL while the kubelet was stopped; the
// whole objects are left out of events.jsonl.
const recorded = "testdata/20261202-112154-d263"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 0)
}

func TestContradictingRecordsFail(t *testing.T) {
	start := func(rec *evidence.Record) evidence.Action {
		a, _ := rec.Action("start-kubelet", "termlab-worker2")
		return a
	}
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  string
	}{
		{"the API object survived", func(rec *evidence.Record) {
			var keep []evidence.PodEvent
			for _, e := range rec.PodEvents {
				if e.Type != "DELETED" {
					keep = append(keep, e)
				}
			}
			rec.PodEvents = keep
		}, "orphan.api_object_exists_false"},
		{"the container stopped while the kubelet was down", func(rec *evidence.Record) {
			for i, o := range rec.Containers {
				if o.ObservedAt.Before(start(rec).StartedAt) && o.Step != rec.Containers[0].Step {
					rec.Containers[i].State = evidence.ContainerExited
					break
				}
			}
		}, "orphan.container_running"},
		{"the heartbeat stood still", func(rec *evidence.Record) {
			for i := range rec.Containers {
				if rec.Containers[i].Log != nil {
					rec.Containers[i].Log.LastSeq = 3
				}
			}
		}, "orphan.heartbeat_advancing"},
		{"the node never turned NotReady", func(rec *evidence.Record) {
			var keep []evidence.NodeEvent
			for _, e := range rec.NodeEvents {
				if e.Ready == "True" {
					keep = append(keep, e)
				}
			}
			rec.NodeEvents = keep
		}, "orphan.node_not_ready"},
		{"the container kept running after the kubelet came back", func(rec *evidence.Record) {
			for i, o := range rec.Containers {
				if o.ObservedAt.After(start(rec).StartedAt) {
					rec.Containers[i].State, rec.Containers[i].FinishedAt, rec.Containers[i].ExitCode = evidence.ContainerRunning, nil, nil
				}
			}
		}, "orphan.container_stopped_after_kubelet_restart"},
		{"the kubelet was never started again", func(rec *evidence.Record) {
			var keep []evidence.Action
			for _, a := range rec.Actions {
				if a.Kind != "start-kubelet" {
					keep = append(keep, a)
				}
			}
			rec.Actions = keep
		}, "orphan.container_stopped_after_kubelet_restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.MustFail(t, Claims(rec), tc.fails)
		})
	}
}
