package claims

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// The bounds a claim states from the mechanism: SIGTERM after the request,
// the stop after that SIGTERM, the exit code, a stop not before a bound.
func TestContainerStoppedSignalBounds(t *testing.T) {
	// finalizerOnKubelet, with the workload's SIGTERM line at 10.4 s: 0.4 s
	// after the delete, 0.7 s before crictl's finishedAt.
	withSignal := func() *evidence.Record {
		rec := finalizerOnKubelet()
		rec.Containers[0].Log.SignalAt = tp(10.4)
		return rec
	}
	graceful := Stops{ID: "stops", Pod: "held", After: "delete", Within: 2 * time.Second, WantSIGTERM: true, WantExitCode: i32(0),
		SignalWithin: time.Second, StopAfterSignal: &Window{Min: 0, Max: time.Second}}
	c := ContainerStopped(withSignal(), graceful)
	want(t, c, Pass, "")
	if c.Observed["sigterm_after_seconds"] != 0.4 || c.Observed["stopped_after_sigterm_seconds"] != 0.7 {
		t.Fatalf("observed %v", c.Observed)
	}

	for _, tc := range []struct {
		name   string
		rec    func() *evidence.Record
		spec   func(Stops) Stops
		reason string
	}{
		{"SIGTERM later than the kubelet's reaction allows", withSignal, func(s Stops) Stops { s.SignalWithin = 300 * time.Millisecond; return s }, "later than 300ms"},
		{"killed after a minimum grace it did not get", withSignal, func(s Stops) Stops {
			s.StopAfterSignal = &Window{Min: 1500 * time.Millisecond, Max: 2500 * time.Millisecond}
			return s
		}, "not between 1.5s and 2.5s"},
		{"a slower exit than the term delay allows", withSignal, func(s Stops) Stops { s.StopAfterSignal = &Window{Max: 500 * time.Millisecond}; return s }, "stopped 700ms after the SIGTERM"},
		{"another exit code", withSignal, func(s Stops) Stops { s.WantExitCode = i32(137); return s }, "exit code is 0, want 137"},
		{"stopped before the earliest the mechanism allows", withSignal, func(s Stops) Stops { s.NotBefore = 2 * time.Second; return s }, "earlier than 2s"},
		{"no time for the SIGTERM the bounds count from", finalizerOnKubelet, func(s Stops) Stops { return s }, "no SIGTERM with its time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want(t, ContainerStopped(tc.rec(), tc.spec(graceful)), Fail, tc.reason)
		})
	}

	// The runtime removed the container before crictl looked: the stop is the
	// kubelet's finishedAt, whole seconds (10 s for 10.45 s), so it may read
	// before the SIGTERM line; the bounds allow that resolution.
	removed := withSignal()
	removed.Containers[0].State, removed.Containers[0].ExitCode, removed.Containers[0].FinishedAt = evidence.ContainerNotFound, nil, nil
	for i, e := range removed.PodEvents {
		cs := append([]evidence.ContainerState(nil), e.Containers...)
		for j := range cs {
			if cs[j].State == "terminated" {
				cs[j].FinishedAt = tp(10)
			}
		}
		removed.PodEvents[i].Containers = cs
	}
	c = ContainerStopped(removed, graceful)
	want(t, c, Pass, "")
	if c.Observed["stopped_after_sigterm_seconds"] != -0.4 {
		t.Fatalf("observed %v", c.Observed)
	}
}

// lab:orphan's "the last look after the node turned NotReady".
func TestRunningAfterDeletedLastAfterNotReady(t *testing.T) {
	spec := Orphaned{ID: "running", Pod: "orphan-process", Until: "start-kubelet", All: true, MinObservations: 2, LastAfterNotReady: "worker2"}
	c := RunningAfterDeleted(orphan(), spec)
	want(t, c, Pass, "")
	if c.Observed["last_look_after_not_ready_seconds"] != 0.2 {
		t.Fatalf("observed %v", c.Observed)
	}
	lateNotReady := orphan()
	lateNotReady.NodeEvents[1].ObservedAt = at(56)
	want(t, RunningAfterDeleted(lateNotReady, spec), Fail, "not seen leave True")
	neverNotReady := orphan()
	neverNotReady.NodeEvents = neverNotReady.NodeEvents[:1]
	want(t, RunningAfterDeleted(neverNotReady, spec), Fail, "not seen leave True")
}

// The heartbeat at the workload's own rate: the orphan fixture's reads span
// 45 s (10.2 s to 55.2 s) and the sequence advances by 45.
func TestHeartbeatAtItsInterval(t *testing.T) {
	spec := Beating{ID: "beats", Pod: "orphan-process", Until: "start-kubelet", MinBeats: 2, Interval: time.Second, MissedBeats: 2}
	c := HeartbeatAdvancing(orphan(), spec)
	want(t, c, Pass, "")
	if c.Observed["beats_at_full_rate"] != 45 {
		t.Fatalf("observed %v", c.Observed)
	}
	halfRate := orphan()
	halfRate.Containers[2].Log.LastSeq = 32 // 23 beats in 45 s
	want(t, HeartbeatAdvancing(halfRate, spec), Fail, "it would be 45")
}

func TestNodeNotReadyNotBefore(t *testing.T) {
	// The orphan fixture's node turns NotReady 50 s after the kubelet stops.
	spec := NotReady{ID: "notready", Node: "worker2", After: "stop-kubelet", NotBefore: 40 * time.Second, Within: 65 * time.Second}
	want(t, NodeNotReady(orphan(), spec), Pass, "")
	early := spec
	early.NotBefore = 51 * time.Second
	want(t, NodeNotReady(orphan(), early), Fail, "earlier than 51s")
}

func TestWithTolerance(t *testing.T) {
	c := Claim{ID: "x"}.WithTolerance("stopped_after_seconds", 1500*time.Millisecond)
	d := c.WithTolerance("sigterm_after_seconds", time.Second)
	if len(c.Tolerances) != 1 || c.Tolerances["stopped_after_seconds"] != 1.5 {
		t.Errorf("first claim's tolerances %v (a later WithTolerance must not change it)", c.Tolerances)
	}
	if len(d.Tolerances) != 2 || d.Tolerances["sigterm_after_seconds"] != 1 {
		t.Errorf("tolerances %v", d.Tolerances)
	}
}

func TestInSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0 s", 500 * time.Millisecond: "0.5 s", 10400 * time.Millisecond: "10.4 s", 50 * time.Second: "50 s"} {
		if got := InSeconds(d); got != want {
			t.Errorf("InSeconds(%s) = %q, want %q", d, got, want)
		}
	}
}
