// Package force is lab:force — a force delete on a healthy worker.
//
// Pod slow-exit has no finalizer; its workload keeps running for 8 s after
// SIGTERM. The lab force-deletes it (gracePeriodSeconds 0) and records that
// the API object is gone at once while crictl on the node still shows the
// container running, then how and when the container stops.
package force

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

const pod = "slow-exit"

// Bounds of the waits; the claims state them.
const (
	readyWithin   = 90 * time.Second
	goneWithin    = 2 * time.Second  // "almost at once": DELETED after the force delete request
	stoppedWithin = 45 * time.Second // container exit after the request: the pod's 30 s grace + 15 s
	probeEvery    = 250 * time.Millisecond
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "force",
	Question:  "A pod is force-deleted (gracePeriodSeconds 0) on a healthy worker. Is its container gone when the API object is — and if not, how long does it outlive it, and how does it end?",
	Manifests: []string{"slow-exit.yaml"},
	Steps:     steps,
	Claims:    Claims,
}

// Run runs lab:force on the cluster.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	var containerID string
	err = r.Step(ctx, fmt.Sprintf("create pod %s on %s and wait until it is Ready", pod, worker), func(ctx context.Context) error {
		var err error
		containerID, err = r.StartPod(ctx, "slow-exit.yaml", pod, worker, readyWithin)
		return err
	})
	if err != nil {
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
			r.Infof("DELETED (resourceVersion %s): the API object is gone", e.ResourceVersion)
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

	err = r.Step(ctx, fmt.Sprintf("look at the container on %s", worker), func(ctx context.Context) error {
		o, err := r.Rec.ObserveContainer(ctx, worker, pod, containerID)
		if err == nil {
			r.Infof("crictl: %s", o.Describe())
		}
		return err
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, "wait for the container to stop", func(ctx context.Context) error {
		wctx, cancel := lab.Within(ctx, stoppedWithin)
		defer cancel()
		o, err := r.Rec.WaitContainer(wctx, worker, pod, containerID, "stop", probeEvery, func(o evidence.ContainerObservation) bool {
			return o.Stopped()
		})
		if err == nil {
			r.Infof("crictl: %s", o.Describe())
		}
		return r.Unobserved(ctx, err)
	})
}

// Claims decides lab:force's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	return []claims.Claim{
		claims.DeletedWithin(rec, claims.Deleted{
			ID:        "force.api_object_gone",
			Statement: fmt.Sprintf("A force delete (DeleteOptions gracePeriodSeconds=0, as kubectl --force --grace-period=0 sends) of pod %s, which has no finalizer, removes the API object almost at once: a DELETED event within %s of the request, and a GET afterwards answers NotFound.", pod, goneWithin),
			Pod:       pod, After: "force-delete", Within: goneWithin, RequireGone: true,
		}),
		claims.RunningAfterDeleted(rec, claims.Orphaned{
			ID:        "force.container_outlives_object",
			Statement: fmt.Sprintf("The container outlives the API object: after the DELETED event, crictl on the node still shows the container of %s (the ID the pod's status reported) CONTAINER_RUNNING.", pod),
			Pod:       pod, MinObservations: 1,
		}),
		claims.ContainerStopped(rec, claims.Stops{
			ID:        "force.container_stops",
			Statement: fmt.Sprintf("The container does stop: crictl shows it exited within %s of the force delete (the pod's 30 s grace period + 15 s). Recorded: the gap from the DELETED event to the exit (crictl finishedAt), the exit code and whether SIGTERM was logged.", stoppedWithin),
			Pod:       pod, After: "force-delete", Within: stoppedWithin,
		}),
	}
}
