package orphan

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:orphan run on the termlab cluster (kubelet v1.37.2),
// the run after one killed with SIGKILL while the kubelet was stopped; the
// whole objects are left out of events.jsonl.
const recorded = "testdata/20261202-112154-d263"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 6)
}

// The bounds from the mechanism: each contradiction moves one recorded time
// past a bound (or changes one fact) and must fail that claim alone.
func TestContradictingTimesFail(t *testing.T) {
	stop := func(rec *evidence.Record) evidence.Action {
		a, _ := rec.Action("stop-kubelet", "termlab-worker2")
		return a
	}
	start := func(rec *evidence.Record) evidence.Action {
		a, _ := rec.Action("start-kubelet", "termlab-worker2")
		return a
	}
	// notReadyAt moves the node's changes away from Ready=True to at, keeping their order.
	notReadyAt := func(rec *evidence.Record, at time.Time) {
		var first time.Time
		for i, e := range rec.NodeEvents {
			if e.Ready == "True" || e.ObservedAt.Before(stop(rec).StartedAt) {
				continue
			}
			if first.IsZero() {
				first = e.ObservedAt
			}
			rec.NodeEvents[i].ObservedAt = at.Add(e.ObservedAt.Sub(first))
		}
	}
	// stoppedAt rewrites when the orphan exited (crictl finishedAt).
	stoppedAt := func(rec *evidence.Record, at time.Time) {
		for i, o := range rec.Containers {
			if o.State == evidence.ContainerExited {
				rec.Containers[i].FinishedAt = &at
			}
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  []string
	}{
		{"DELETED came 1.5 s after the force delete", func(rec *evidence.Record) {
			for i, e := range rec.PodEvents {
				if e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(1500 * time.Millisecond)
				}
			}
		}, []string{"orphan.api_object_exists_false"}},
		{"the last look came before the node turned NotReady", func(rec *evidence.Record) {
			notReadyAt(rec, stop(rec).StartedAt.Add(50500*time.Millisecond))
		}, []string{"orphan.container_running"}},
		{"the node turned NotReady 5 s after the stop, before any grace period ran out", func(rec *evidence.Record) {
			notReadyAt(rec, stop(rec).StartedAt.Add(5*time.Second))
		}, []string{"orphan.node_not_ready"}},
		{"the node turned NotReady twice as late: 98 s after the stop", func(rec *evidence.Record) {
			notReadyAt(rec, stop(rec).StartedAt.Add(98*time.Second))
		}, []string{"orphan.node_not_ready", "orphan.container_running"}},
		{"the heartbeat beat at half its rate", func(rec *evidence.Record) {
			for i, o := range rec.Containers {
				if o.Log != nil && o.Log.LastSeq == 49 {
					l := *o.Log
					l.LastSeq = 25
					rec.Containers[i].Log = &l
				}
			}
		}, []string{"orphan.heartbeat_advancing"}},
		{"the orphan was stopped 5 s after the kubelet started (a housekeeping later)", func(rec *evidence.Record) {
			stoppedAt(rec, start(rec).StartedAt.Add(5*time.Second))
		}, []string{"orphan.container_stopped_after_kubelet_restart"}},
		{"the orphan was stopped 1 s after the kubelet started, before its first housekeeping", func(rec *evidence.Record) {
			stoppedAt(rec, start(rec).StartedAt.Add(time.Second))
		}, []string{"orphan.container_stopped_after_kubelet_restart"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
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
		// Mutants that had no claim to kill them (internal/mutants).
		{"a MODIFIED came after DELETED", func(rec *evidence.Record) {
			n := len(rec.PodEvents)
			x, y := &rec.PodEvents[n-2], &rec.PodEvents[n-1]
			*x, *y = *y, *x
			x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
		}, "orphan.watch_order"},
		{"the watch never showed the force delete's update before DELETED", labtest.DropForceUpdate, "orphan.api_object_exists_false"},
		{"the pod's status reported the container terminated before the kubelet's return", labtest.TerminatedWhileRunning, "orphan.container_stopped_after_kubelet_restart"},
		{"crictl saw the container exited before the kubelet's return", func(rec *evidence.Record) {
			if !rec.Containers[0].ObservedAt.Before(start(rec).StartedAt) {
				panic("the recorded run's first look is not before the kubelet's start")
			}
			rec.Containers[0].State = evidence.ContainerExited
		}, "orphan.container_stopped_after_kubelet_restart"},
		{"the orphan exited 0 by itself after the kubelet's return", func(rec *evidence.Record) {
			for i, o := range rec.Containers {
				if o.ExitCode != nil {
					code := int32(0)
					rec.Containers[i].ExitCode = &code
				}
			}
		}, "orphan.container_stopped_after_kubelet_restart"},
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

// SIGTERM can win the race against the cgroup cleanup's SIGKILL (a CI run
// of 2026-12-04): the workload logs it and exits 0 at once. That is a kill,
// and the claim passes; the same exit 0 with no SIGTERM logged fails it
// (TestContradictingRecordsFail).
func TestOrphanEndedBySIGTERMStillCountsAsKilled(t *testing.T) {
	rec := load(t)
	zero := int32(0)
	for i, o := range rec.Containers {
		if o.ExitCode == nil {
			continue
		}
		rec.Containers[i].ExitCode = &zero
		if o.Log != nil {
			at := o.FinishedAt
			if at == nil {
				at = &o.ObservedAt
			}
			rec.Containers[i].Log.Signal, rec.Containers[i].Log.SignalAt = "SIGTERM", at
			logged := 0
			rec.Containers[i].Log.ExitCodeLogged = &logged
		}
	}
	for _, c := range Claims(rec) {
		if c.ID == "orphan.container_stopped_after_kubelet_restart" && !c.Passed() {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
}

// A pod's watch events in an order a watch never sends fail orphan.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "orphan")
}
