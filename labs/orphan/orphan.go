// Package orphan is lab:orphan — the kubelet stopped on a real worker.
//
// Pod orphan-process (no finalizer) runs on the second real worker. The lab
// records its container ID, stops only the kubelet on that node (containerd
// keeps running), force-deletes the pod, and shows the container running on
// with no API object, until the kubelet is started again. The kubelet is
// restarted on every exit path of the run.
package orphan

import (
	"context"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
)

const pod = "orphan-process"

// Bounds of the waits; the claims state them.
const (
	readyWithin      = 90 * time.Second
	goneWithin       = 2 * time.Second   // DELETED after the force delete request
	beatsAfterGone   = 2                 // heartbeats the log must advance by, read after DELETED
	beatWithin       = 10 * time.Second  // time allowed for those heartbeats
	notReadyWithin   = 120 * time.Second // node NotReady after the kubelet stops (node-monitor-grace-period is 50 s)
	stoppedWithin    = 30 * time.Second  // container no longer running after the kubelet starts
	nodeReadyWithin  = 90 * time.Second
	probeEvery       = 250 * time.Millisecond
	logProbeInterval = 500 * time.Millisecond
)

// KubeletRestoreAfter arms the node's dead-man's switch: the kubelet stays
// stopped through the force delete, the heartbeat reads and the wait for
// NotReady, so the node starts it by itself only after all three bounds plus
// half a minute, which the normal path never reaches.
const KubeletRestoreAfter = goneWithin + beatWithin + notReadyWithin + 30*time.Second

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "orphan",
	Question:  "The kubelet on a worker is stopped and its pod is force-deleted. Is the container still running with no API object — and what happens to it when the kubelet comes back?",
	Manifests: []string{"orphan-process.yaml"},
	Steps:     steps,
	Claims:    Claims,
}

// Run runs lab:orphan on the cluster.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(1)
	if err != nil {
		return err
	}
	var containerID string
	err = r.Step(ctx, fmt.Sprintf("create pod %s on %s and record its container ID", pod, worker), func(ctx context.Context) error {
		var err error
		containerID, err = r.StartPod(ctx, "orphan-process.yaml", pod, worker, readyWithin)
		return err
	})
	if err != nil {
		return err
	}

	if err := r.Step(ctx, fmt.Sprintf("stop only the kubelet on %s", worker), func(ctx context.Context) error {
		return r.StopKubelet(ctx, worker, KubeletRestoreAfter)
	}); err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("force delete %s (gracePeriodSeconds 0)", pod), func(ctx context.Context) error {
		if err := r.ForceDelete(ctx, pod); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, goneWithin)
		e, err := r.Rec.WaitPod(wctx, pod, "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
		cancel()
		if err == nil {
			r.Infof("DELETED (resourceVersion %s): api_object_exists false", e.ResourceVersion)
		}
		if err := r.Unobserved(ctx, err); err != nil {
			return err
		}
		_, err = r.Rec.Snapshot(ctx, pod)
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("look at the container on %s: state and heartbeat", worker), func(ctx context.Context) error {
		first, err := r.Rec.ObserveContainer(ctx, worker, pod, containerID)
		if err != nil {
			return err
		}
		r.Infof("crictl: %s", first.Describe())
		from := 0
		if first.Log != nil {
			from = first.Log.LastSeq
		}
		wctx, cancel := lab.Within(ctx, beatWithin)
		defer cancel()
		later, err := r.Rec.WaitLog(wctx, worker, pod, containerID, fmt.Sprintf("advance by %d heartbeats", beatsAfterGone), logProbeInterval, func(l evidence.LogSummary) bool {
			return l.LastSeq >= from+beatsAfterGone
		})
		if err == nil {
			r.Infof("crictl: %s — still beating with no API object", later.Describe())
		}
		return r.Unobserved(ctx, err)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("wait for %s to turn NotReady", worker), func(ctx context.Context) error {
		wctx, cancel := lab.Within(ctx, notReadyWithin)
		e, err := r.Rec.WaitNode(wctx, worker.String(), "turn NotReady", func(e evidence.NodeEvent) bool { return e.Ready != "True" })
		cancel()
		if err == nil {
			r.Infof("node %s Ready=%s (%s)", worker, e.Ready, e.Reason)
		}
		if err := r.Unobserved(ctx, err); err != nil {
			return err
		}
		o, err := r.Rec.ObserveContainer(ctx, worker, pod, containerID)
		if err == nil {
			r.Infof("crictl: %s", o.Describe())
		}
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("start the kubelet on %s and watch the container", worker), func(ctx context.Context) error {
		if err := r.StartKubelet(ctx, worker); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, stoppedWithin)
		defer cancel()
		o, err := r.Rec.WaitContainer(wctx, worker, pod, containerID, "stop running", probeEvery, func(o evidence.ContainerObservation) bool {
			return o.Stopped()
		})
		if err == nil {
			r.Infof("crictl: %s", o.Describe())
		}
		return r.Unobserved(ctx, err)
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, fmt.Sprintf("wait for %s to be Ready again", worker), func(ctx context.Context) error {
		return lab.WaitNodeReady(ctx, r.Env, worker.String(), nodeReadyWithin)
	})
}

// Claims decides lab:orphan's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	return []claims.Claim{
		claims.DeletedWithin(rec, claims.Deleted{
			ID:        "orphan.api_object_exists_false",
			Statement: fmt.Sprintf("With the kubelet stopped, a force delete (gracePeriodSeconds=0) of pod %s removes the API object anyway: DELETED within %s of the request, and a GET afterwards answers NotFound (api_object_exists: false).", pod, goneWithin),
			Pod:       pod, After: "force-delete", Within: goneWithin, RequireGone: true,
		}),
		claims.RunningAfterDeleted(rec, claims.Orphaned{
			ID:        "orphan.container_running",
			Statement: fmt.Sprintf("After the API object is gone and until the kubelet is started again, crictl inspect of the recorded container ID says CONTAINER_RUNNING at every look (at least 2 looks, the last after the node turned NotReady)."),
			Pod:       pod, Until: "start-kubelet", All: true, MinObservations: 2,
		}),
		claims.HeartbeatAdvancing(rec, claims.Beating{
			ID:        "orphan.heartbeat_advancing",
			Statement: fmt.Sprintf("The orphaned workload keeps working: its heartbeat sequence (crictl logs) advances by at least %d between reads taken after the DELETED event, and the last heartbeat is later than the DELETED event.", beatsAfterGone),
			Pod:       pod, Until: "start-kubelet", MinBeats: beatsAfterGone,
		}),
		claims.NodeNotReady(rec, claims.NotReady{
			ID:        "orphan.node_not_ready",
			Statement: fmt.Sprintf("The node whose kubelet was stopped turns NotReady (Ready condition not True) within %s of the stop; when is recorded.", notReadyWithin),
			Node:      nodeOf(rec), After: "stop-kubelet", Within: notReadyWithin,
		}),
		claims.ContainerStopped(rec, claims.Stops{
			ID:        "orphan.container_stopped_after_kubelet_restart",
			Statement: fmt.Sprintf("Once the kubelet is started again, the orphaned container is no longer running within %s (crictl: exited or removed). Recorded: its exit code and whether it got SIGTERM (logged by the workload).", stoppedWithin),
			Pod:       pod, After: "start-kubelet", Within: stoppedWithin,
		}),
	}
}

// nodeOf is the node the lab stopped the kubelet on.
func nodeOf(rec *evidence.Record) string {
	for _, a := range rec.Actions {
		if a.Kind == "stop-kubelet" {
			return a.Target
		}
	}
	return "(no kubelet was stopped)"
}
