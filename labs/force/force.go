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

// Bounds of the waits: long enough to record what happens even when a claim
// rejects it, so a failed claim says how late, not just "not observed".
const (
	readyWithin = 90 * time.Second
	goneWait    = 2 * time.Second  // DELETED after the force delete request
	stopWait    = 45 * time.Second // container exit after the request: even a kubelet that honoured the pod's 30 s grace is recorded
	probeEvery  = 250 * time.Millisecond
)

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go).
const (
	// goneWithin: with gracePeriodSeconds 0 and no finalizer the API server
	// removes the object in the delete request itself; only the watch
	// delivery remains.
	goneWithin = claims.WatchAllowance
	// sigtermWithin: the kubelet sees the deleted pod and sends SIGTERM at once.
	sigtermWithin = claims.KubeletSyncAllowance
	// killedAfterSigterm: the kubelet stops the container with the grace
	// period the deletion carries (0), raised to its minimum of 2 s: SIGKILL
	// 2 s after SIGTERM, long before the workload's 8 s term delay is over.
	// ExitAllowance either way: the SIGTERM may be logged a little late, the
	// exit recorded a little after the SIGKILL.
	killedAfterSigterm = claims.KubeletMinimumGracePeriod
	// stoppedWithin (6 s) adds those up: short of the pod's 30 s grace
	// period and of the workload's 8 s term delay.
	stoppedWithin = sigtermWithin + killedAfterSigterm + claims.ExitAllowance
	// termDelay is how long the workload keeps going after SIGTERM before it
	// exits 0 by itself (--term-delay=8s in manifests/pods/slow-exit.yaml).
	termDelay = 8 * time.Second
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "force",
	Question:  "A pod is force-deleted (gracePeriodSeconds 0) on a healthy worker. Is its container gone when the API object is — and if not, how long does it outlive it, and how does it end?",
	Summary:   "the API object is gone at once; the container is killed 2 s after SIGTERM, outliving it",
	Predict:   "A force delete of a healthy pod whose program needs 8 s to shut down: how long is the container still running after the API object is gone, and does it finish its shutdown?",
	Uses:      lab.Uses{Worker: 0},
	Manifests: []string{"slow-exit.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pod slow-exit on a real worker and wait until it is Ready", Pod: "slow-exit",
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/slow-exit.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels", "kubectl wait pod/slow-exit -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
		{Title: "force delete (gracePeriodSeconds 0)", Pod: "slow-exit",
			Do:  []string{"kubectl delete pod slow-exit -n {ns} --force --grace-period=0 --wait=false"},
			See: []string{"kubectl get pod slow-exit -n {ns}", "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
		{Title: "watch the container stop after the object is gone", Pod: "slow-exit",
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "docker exec {node} crictl logs $(docker exec {node} crictl ps -aq --label io.kubernetes.pod.name=slow-exit | head -1)"}},
	},
	Steps:  steps,
	Claims: Claims,
	Answer: Answer,
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
		return r.WaitDeleted(ctx, pod, goneWait)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("look at the container on %s", worker), func(ctx context.Context) error {
		_, err := r.Look(ctx, worker, pod, containerID, "")
		return err
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, "wait for the container to stop", func(ctx context.Context) error {
		wctx, cancel := lab.Within(ctx, stopWait)
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
	sec := claims.InSeconds
	zeroGrace := int64(0) // a force delete's grace period
	killed := int32(137)  // 128 + SIGKILL
	return []claims.Claim{
		claims.DeletedWithin(rec, claims.Deleted{
			ID:        "force.api_object_gone",
			Statement: fmt.Sprintf("A force delete (DeleteOptions gracePeriodSeconds=0, as kubectl --force --grace-period=0 sends) of pod %s, which has no finalizer, removes the API object at once: the API server deletes it in the request itself — writing the deletion first as an update (deletionTimestamp, deletionGracePeriodSeconds 0), which the watch shows before the DELETED, as it does for every pod — so a DELETED event arrives within %s of the request (the allowance for the watch delivery), and a GET afterwards answers NotFound; no watch event shows a deletionTimestamp before the request (that the events come in an order a watch sends is force.watch_order). Runs compare within ±%[2]s.", pod, sec(goneWithin)),
			Pod:       pod, After: evidence.ActionForceDelete, Within: goneWithin, RequireGone: true, MarkedAfterRequest: true, UpdateBeforeDeleted: &zeroGrace,
		}).WithTolerance("deleted_after_seconds", goneWithin),
		claims.RunningAfterDeleted(rec, claims.Orphaned{
			ID:        "force.container_outlives_object",
			Statement: fmt.Sprintf("The container outlives the API object: after the DELETED event, crictl on the node still shows the container of %s (the ID the pod's status reported) CONTAINER_RUNNING.", pod),
			Pod:       pod, MinObservations: 1,
		}),
		claims.ContainerStopped(rec, claims.Stops{
			ID: "force.container_stops",
			Statement: fmt.Sprintf("The container does stop, and soon: it stopped (crictl: exited or removed) within %s of the force delete — %s for the kubelet to send SIGTERM, its %s minimum grace and %s for the exit to be recorded — far short of the pod's 30 s grace period and of the workload's %s term delay. Recorded: the gap from the DELETED event to the stop. Runs compare within ±%s, the two allowances.",
				sec(stoppedWithin), sec(sigtermWithin), sec(killedAfterSigterm), sec(claims.ExitAllowance), sec(termDelay), sec(sigtermWithin+claims.ExitAllowance)),
			Pod: pod, After: evidence.ActionForceDelete, Within: stoppedWithin,
		}).WithTolerance("stopped_after_seconds", sigtermWithin+claims.ExitAllowance),
		claims.ContainerStopped(rec, claims.Stops{
			ID: "force.sigkill_after_minimum_grace",
			Statement: fmt.Sprintf("The kubelet kills it after its minimum grace, not the pod's: the workload logged SIGTERM within %s of the force delete, and the container stopped %s ± %s after that SIGTERM (the kubelet's minimum grace period, minimumGracePeriodInSeconds, which a deletion grace of 0 is raised to; ± the allowance for a late SIGTERM log line and the exit record) with exit code 137 (SIGKILL) — the workload, which wanted %s, never finished its shutdown. Runs compare within ±%s and ±%[3]s.",
				sec(sigtermWithin), sec(killedAfterSigterm), sec(claims.ExitAllowance), sec(termDelay), sec(sigtermWithin)),
			Pod: pod, After: evidence.ActionForceDelete, Within: stoppedWithin, WantSIGTERM: true, WantExitCode: &killed,
			SignalWithin:    sigtermWithin,
			StopAfterSignal: &claims.Window{Min: killedAfterSigterm - claims.ExitAllowance, Max: killedAfterSigterm + claims.ExitAllowance},
		}).WithTolerance("sigterm_after_seconds", sigtermWithin).WithTolerance("stopped_after_sigterm_seconds", claims.ExitAllowance),
		claims.WatchOrder(rec, "force"),
	}
}
