package claims

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// A node clock 0.8 s off the host's flips a claim whose bound is closer than
// that, unless the timing is corrected by the measured offset; an offset
// known only to ±0.8 s leaves the claim not checked, naming the clocks.
func TestClockSkewIsCorrected(t *testing.T) {
	stops := Stops{ID: "stops", Pod: "held", After: "delete", Within: time.Second}
	skewed := func(finishedAt float64, clocks ...evidence.ClockOffset) *evidence.Record {
		rec := finalizerOnKubelet() // the delete is sent at 10 s (host)
		rec.Containers[0].FinishedAt = tp(finishedAt)
		rec.Clocks = clocks
		return rec
	}
	ahead := evidence.ClockOffset{Clock: evidence.ClockNode("worker"), Offset: 0.8, Uncertainty: 0.002, Samples: 5}

	// The node read 11.5 s for a stop at 10.7 s host time: 0.7 s after the delete.
	want(t, ContainerStopped(skewed(11.5), stops), Fail, "later than")
	c := ContainerStopped(skewed(11.5, ahead), stops)
	want(t, c, Pass, "")
	if c.Observed["stopped_after_seconds"] != 0.7 || c.Observed["stopped_after_clock_correction_seconds"] != -0.8 {
		t.Fatalf("observed %v", c.Observed)
	}

	// A node 0.8 s behind read 9.5 s for a stop at 10.3 s: after the delete, not before it.
	behind := ahead
	behind.Offset = -0.8
	want(t, ContainerStopped(skewed(9.5), stops), Fail, "before the delete request")
	want(t, ContainerStopped(skewed(9.5, behind), stops), Pass, "")

	// Known to ±0.8 s, 0.7 s may be 1.5 s: the 1 s bound is not decided.
	vague := ahead
	vague.Uncertainty = 0.8
	c = ContainerStopped(skewed(11.5, vague), stops)
	want(t, c, NotChecked, "node/worker +0.800 s ± 0.800 s")

	// Far out of bounds whatever the uncertainty, it still fails.
	want(t, ContainerStopped(skewed(15, vague), stops), Fail, "later than")
}

// The kubelet that comes back may remove the container before crictl looks
// (the statefulset run of 2026-12-04 05:44 under load 10–25): containerd's
// exit event then decides the exit code and time.
func TestContainerdExitDecidesWhenCrictlFoundNothing(t *testing.T) {
	killed := Stops{ID: "killed", Pod: "orphan-process", After: "start-kubelet", Within: 4500 * time.Millisecond, Killed: true}
	removed := func(exits ...evidence.TaskExit) *evidence.Record {
		rec := orphan()
		last := &rec.Containers[len(rec.Containers)-1]
		last.State, last.ExitCode, last.FinishedAt = evidence.ContainerNotFound, nil, nil
		rec.TaskExits = exits
		return rec
	}
	want(t, ContainerStopped(removed(), killed), Fail, "exit code is unknown")
	exit := evidence.TaskExit{Node: "worker", ContainerID: cid, ExitStatus: 137, ExitedAt: at(71.5), Path: "containers/task-exits-worker.log"}
	c := ContainerStopped(removed(exit), killed)
	want(t, c, Pass, "")
	if c.Observed["exit_code"] != int32(137) || c.Observed["stopped_after_seconds"] != 1.5 {
		t.Fatalf("observed %v", c.Observed)
	}
	clean := exit
	clean.ExitStatus = 0
	want(t, ContainerStopped(removed(clean), killed), Fail, "not killed")
	other := exit
	other.ContainerID = "ffff"
	want(t, ContainerStopped(removed(other), killed), Fail, "exit code is unknown")
}
