package force

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:force run on the termlab cluster (kubelet v1.37.2);
// the whole objects are left out of events.jsonl.
const recorded = "testdata/20261202-111925-7f5b"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 5)
}

func TestContradictingRecordsFail(t *testing.T) {
	// signal is when the workload logged SIGTERM (0.032 s after the request).
	signal := func(rec *evidence.Record) time.Time {
		for _, o := range rec.Containers {
			if o.State == evidence.ContainerExited {
				return *o.Log.SignalAt
			}
		}
		panic("the recorded run has no exited container")
	}
	// exitAt rewrites when and how the container exited.
	exitAt := func(rec *evidence.Record, at time.Time, code int32) {
		for i, o := range rec.Containers {
			if o.State == evidence.ContainerExited {
				rec.Containers[i].FinishedAt, rec.Containers[i].ExitCode = &at, &code
			}
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  []string
	}{
		{"the object lingered for 1.5 s", func(rec *evidence.Record) {
			for i, e := range rec.PodEvents {
				if e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(1500 * time.Millisecond)
				}
			}
			// The look at the node came 0.18 s after the real DELETED, now before the moved one.
		}, []string{"force.api_object_gone", "force.container_outlives_object"}},
		// Mutants that had no claim to kill them (internal/mutants).
		{"a MODIFIED came after DELETED", func(rec *evidence.Record) {
			n := len(rec.PodEvents)
			x, y := &rec.PodEvents[n-2], &rec.PodEvents[n-1]
			*x, *y = *y, *x
			x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
			// …and so the force delete's update no longer comes before the DELETED.
		}, []string{"force.watch_order", "force.api_object_gone"}},
		{"the deletionTimestamp was seen before the force delete", func(rec *evidence.Record) {
			force, _ := rec.Action("force-delete", pod)
			for i, e := range rec.PodEvents {
				if e.Type == "MODIFIED" && e.DeletionTimestamp != nil {
					rec.PodEvents[i].ObservedAt = force.StartedAt.Add(-time.Millisecond)
				}
			}
		}, []string{"force.api_object_gone"}},
		{"a GET still found the pod", func(rec *evidence.Record) {
			for i := range rec.Snapshots {
				rec.Snapshots[i].Found = true
			}
		}, []string{"force.api_object_gone"}},
		{"the container was already gone when the object was", func(rec *evidence.Record) {
			gone, _ := rec.Deleted(pod)
			for i, o := range rec.Containers {
				if o.ObservedAt.After(gone.ObservedAt) {
					rec.Containers[i].State = evidence.ContainerExited
				}
			}
			// …and so stopped 0.2 s after SIGTERM, not after the minimum grace.
		}, []string{"force.container_outlives_object", "force.sigkill_after_minimum_grace"}},
		{"the container never stopped", func(rec *evidence.Record) {
			for i := range rec.Containers {
				rec.Containers[i].State, rec.Containers[i].FinishedAt, rec.Containers[i].ExitCode = evidence.ContainerRunning, nil, nil
			}
		}, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"crictl looked at another container", func(rec *evidence.Record) {
			for i := range rec.Containers {
				rec.Containers[i].ContainerID = "ffffffffffff"
			}
		}, []string{"force.container_outlives_object", "force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"the kubelet let the workload finish its 8 s and exit 0", func(rec *evidence.Record) {
			exitAt(rec, signal(rec).Add(8*time.Second), 0)
		}, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"SIGKILL twice as late: 4 s after SIGTERM", func(rec *evidence.Record) {
			exitAt(rec, signal(rec).Add(4*time.Second), 137)
		}, []string{"force.sigkill_after_minimum_grace"}},
		{"the workload ran out its 8 s term delay (no SIGKILL)", func(rec *evidence.Record) {
			exitAt(rec, signal(rec).Add(8*time.Second), 0)
		}, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"SIGKILL at once, no minimum grace", func(rec *evidence.Record) {
			exitAt(rec, signal(rec).Add(50*time.Millisecond), 137)
		}, []string{"force.sigkill_after_minimum_grace"}},
		{"killed without SIGTERM", func(rec *evidence.Record) {
			for i, o := range rec.Containers {
				if o.Log != nil {
					l := *o.Log
					l.Signal, l.SignalAt = "", nil
					rec.Containers[i].Log = &l
				}
			}
		}, []string{"force.sigkill_after_minimum_grace"}},
		{"the watch never showed the force delete's update before DELETED", labtest.DropForceUpdate, []string{"force.api_object_gone"}},
		{"the pod's status reported the container terminated before the force delete", labtest.TerminatedWhileRunning, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"crictl saw the container exited before the force delete", func(rec *evidence.Record) {
			force, _ := rec.Action("force-delete", pod)
			if !rec.Containers[0].ObservedAt.Before(force.StartedAt) {
				panic("the recorded run's first look is not before the force delete")
			}
			rec.Containers[0].State = evidence.ContainerExited
		}, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
		{"the kubelet sent SIGTERM 4.5 s after the request", func(rec *evidence.Record) {
			force, _ := rec.Action("force-delete", pod)
			late := force.StartedAt.Add(4500 * time.Millisecond)
			for i, o := range rec.Containers {
				if o.Log != nil && o.Log.SignalAt != nil {
					l := *o.Log
					l.SignalAt = &late
					rec.Containers[i].Log = &l
				}
			}
			exitAt(rec, late.Add(2*time.Second), 137)
		}, []string{"force.container_stops", "force.sigkill_after_minimum_grace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

// A pod's watch events in an order a watch never sends fail force.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "force")
}
