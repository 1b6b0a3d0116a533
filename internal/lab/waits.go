package lab

import (
	"context"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

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
func (r *Run) WaitStopped(ctx context.Context, node nodes.Node, pod, containerID string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	defer cancel()
	o, err := r.Rec.WaitContainer(wctx, node, pod, containerID, "stop running", containerProbeEvery, evidence.ContainerObservation.Stopped)
	if err == nil {
		r.Infof("crictl: %s", o.Describe())
	}
	return r.Unobserved(ctx, err)
}
