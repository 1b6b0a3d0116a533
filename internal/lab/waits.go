package lab

import (
	"context"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

// containerProbeEvery is how often crictl inspect is asked while waiting for
// a container to stop: often enough to see a container the kubelet removes a
// second after it exits (the watch, not this, is the record of the pod).
const containerProbeEvery = 250 * time.Millisecond

// WaitNotReady waits on the recorder's node watch, at most within, for the
// node's Ready condition to leave True. A wait that runs out is noted in the
// record (the claims that need it will fail) and the run goes on.
func (r *Run) WaitNotReady(ctx context.Context, node string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	defer cancel()
	e, err := r.Rec.WaitNode(wctx, node, "turn NotReady", func(e evidence.NodeEvent) bool { return e.Ready != "True" })
	if err == nil {
		r.Infof("node %s Ready=%s (%s)", node, e.Ready, e.Reason)
	}
	return r.Unobserved(ctx, err)
}

// WaitStopped polls crictl on the node, at most within, until the container
// has exited or is gone, and records that observation. A wait that runs out
// is noted in the record and the run goes on.
func (r *Run) WaitStopped(ctx context.Context, node cluster.Node, pod, containerID string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	defer cancel()
	o, err := r.Rec.WaitContainer(wctx, node, pod, containerID, "stop running", containerProbeEvery, evidence.ContainerObservation.Stopped)
	if err == nil {
		r.Infof("crictl: %s", o.Describe())
	}
	return r.Unobserved(ctx, err)
}

// WaitDeleted waits on the recorder's pod watch, at most within, for the
// pod's DELETED event, then reads the pod (a GET that should answer
// NotFound) into the record. A wait that runs out is noted in the record and
// the run goes on.
func (r *Run) WaitDeleted(ctx context.Context, pod string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	e, err := r.Rec.WaitPod(wctx, pod, "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
	cancel()
	if err == nil {
		r.Infof("%s DELETED (resourceVersion %s, phase %s): the API object is gone", pod, e.ResourceVersion, e.Phase)
	}
	if err := r.Unobserved(ctx, err); err != nil {
		return err
	}
	_, err = r.Rec.Snapshot(ctx, pod)
	return err
}

// Look records what crictl on the node says about the container now and
// tells the user, with remark after it.
func (r *Run) Look(ctx context.Context, node cluster.Node, pod, containerID, remark string) (evidence.ContainerObservation, error) {
	o, err := r.Rec.ObserveContainer(ctx, node, pod, containerID)
	if err == nil {
		r.Infof("crictl on %s: %s%s", node, o.Describe(), remark)
	}
	return o, r.Unobserved(ctx, err)
}
