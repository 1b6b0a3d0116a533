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

// Bounds of the waits: long enough to record what happens even when a claim
// rejects it, so a failed claim says how late, not just "not observed".
const (
	readyWithin      = 90 * time.Second
	goneWithin       = 2 * time.Second   // DELETED after the force delete request
	beatsAfterGone   = 2                 // heartbeats the log must advance by, read after DELETED
	beatWithin       = 10 * time.Second  // time allowed for those heartbeats
	notReadyWithin   = 120 * time.Second // node NotReady after the kubelet stops: about twice the claim's bound
	stoppedWithin    = 30 * time.Second  // container no longer running after the kubelet starts
	nodeReadyWithin  = 90 * time.Second
	probeEvery       = 250 * time.Millisecond
	logProbeInterval = 500 * time.Millisecond
)

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go).
const (
	// deletedWithin: with gracePeriodSeconds 0 and no finalizer the API
	// server removes the object in the request itself, kubelet or not.
	deletedWithin = claims.WatchAllowance
	// heartbeatInterval is the workload's (--interval=1s in
	// manifests/pods/orphan-process.yaml); missedBeats allows one beat still
	// being written when the log is read and one tick lost under load.
	heartbeatInterval = time.Second
	missedBeats       = 2
	// A started kubelet finds the orphan at its first housekeeping, one
	// period after its sync loop starts, and ends it at once: its cgroup
	// cleanup SIGKILLs the processes of a pod it does not know, racing its own
	// kill (SIGTERM, which this workload answers by exiting 0 at once).
	killedNotBefore = claims.KubeletHousekeepingPeriod
	killedWithin    = claims.OrphanKilledWithin
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
	Summary:   "with the kubelet stopped, a force delete removes the object while the container keeps running",
	Predict:   "The kubelet is stopped, then the pod is force-deleted: does the API object go? Does the container keep running, and for how long? What does the API say about the node meanwhile?",
	Uses:      lab.Uses{Worker: 1, Changes: []lab.Change{lab.KubeletStop{DownAtMost: KubeletRestoreAfter}}},
	Manifests: []string{"orphan-process.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pod orphan-process on the second worker and wait until it is Ready", Pod: "orphan-process",
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/orphan-process.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels", "kubectl wait pod/orphan-process -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
		{Title: "stop only the kubelet (containerd keeps running)", Pod: "orphan-process",
			Do:  []string{"docker exec {node} systemd-run --unit=restore-kubelet --on-active=180s --timer-property=AccuracySec=1s systemctl start kubelet  # a safety net", "docker exec {node} systemctl stop kubelet"},
			See: []string{"docker exec {node} systemctl is-active kubelet"}},
		{Title: "force delete: the object goes, the container does not", Pod: "orphan-process",
			Do:  []string{"kubectl delete pod orphan-process -n {ns} --force --grace-period=0 --wait=false"},
			See: []string{"kubectl get pod orphan-process -n {ns}", "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "docker exec {node} crictl logs --tail 3 $(docker exec {node} crictl ps -q --label io.kubernetes.pod.name=orphan-process)"}},
		{Title: "wait for the node to turn NotReady", See: []string{"kubectl get node {node} -w"}},
		{Title: "start the kubelet again: it kills the orphan", Pod: "orphan-process",
			Do:  []string{"docker exec {node} systemctl start kubelet", "docker exec {node} systemctl stop restore-kubelet.timer"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "kubectl get node {node} -w"}},
	},
	Steps:  steps,
	Claims: Claims,
	Answer: Answer,
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
		return r.WaitDeleted(ctx, pod, goneWithin)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("look at the container on %s: state and heartbeat", worker), func(ctx context.Context) error {
		first, err := r.Look(ctx, worker, pod, containerID, "")
		if err != nil {
			return err
		}
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
		if err := r.WaitNotReady(ctx, worker.String(), notReadyWithin); err != nil {
			return err
		}
		_, err := r.Look(ctx, worker, pod, containerID, "")
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("start the kubelet on %s and watch the container", worker), func(ctx context.Context) error {
		if err := r.StartKubelet(ctx, worker); err != nil {
			return err
		}
		return r.WaitStopped(ctx, worker, pod, containerID, stoppedWithin)
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
	sec := claims.InSeconds
	zeroGrace := int64(0) // a force delete's grace period
	node := rec.TargetOf(evidence.ActionStopKubelet)
	return []claims.Claim{
		claims.DeletedWithin(rec, claims.Deleted{
			ID:        "orphan.api_object_exists_false",
			Statement: fmt.Sprintf("With the kubelet stopped, a force delete (gracePeriodSeconds=0) of pod %s removes the API object anyway: the API server deletes it in the request itself — writing the deletion first as an update (deletionTimestamp, deletionGracePeriodSeconds 0), which the watch shows before the DELETED, as it does for every pod — so DELETED arrives within %s of the request (the allowance for the watch delivery), and a GET afterwards answers NotFound (api_object_exists: false); no watch event shows a deletionTimestamp before the request (that the events come in an order a watch sends is orphan.watch_order). Runs compare within ±%[2]s.", pod, sec(deletedWithin)),
			Pod:       pod, After: evidence.ActionForceDelete, Within: deletedWithin, RequireGone: true, MarkedAfterRequest: true, UpdateBeforeDeleted: &zeroGrace,
		}).WithTolerance("deleted_after_seconds", deletedWithin),
		claims.RunningAfterDeleted(rec, claims.Orphaned{
			ID:        "orphan.container_running",
			Statement: "After the API object is gone and until the kubelet is started again, crictl inspect of the recorded container ID says CONTAINER_RUNNING at every look (at least 2 looks, the last after the node's Ready condition left True).",
			Pod:       pod, Until: evidence.ActionStartKubelet, All: true, MinObservations: 2, LastAfterNotReady: node,
		}),
		claims.HeartbeatAdvancing(rec, claims.Beating{
			ID:        "orphan.heartbeat_advancing",
			Statement: fmt.Sprintf("The orphaned workload keeps working at its own pace: between the first and the last crictl logs read after the DELETED event and before the kubelet is started again, its heartbeat sequence advances by at least %d and by one per %s (its --interval) of the time between the reads, less %d (a beat still being written when read, a tick lost under load); the last heartbeat is later than the DELETED event.", beatsAfterGone, sec(heartbeatInterval), missedBeats),
			Pod:       pod, Until: evidence.ActionStartKubelet, MinBeats: beatsAfterGone, Interval: heartbeatInterval, MissedBeats: missedBeats,
		}),
		claims.KubeletStopNotReady(rec, "orphan.node_not_ready"),
		claims.ContainerStopped(rec, claims.Stops{
			ID: "orphan.container_stopped_after_kubelet_restart",
			Statement: fmt.Sprintf("Once the kubelet is started again, the orphaned container is no longer running (crictl: exited or removed) between %[1]s and %[2]s after the start: the kubelet ends a pod it does not know at its first housekeeping, %[1]s after its sync loop starts, allowing %[3]s for it to start up and %[4]s for the exit to be recorded. It is killed, by whichever signal wins the race between the kubelet's cgroup cleanup (SIGKILL: exit code 137) and its own kill (SIGTERM first: the workload logs it and exits 0 at once, its term delay being 0) — never a clean 0 without a SIGTERM in its log. Recorded: which; SIGKILL won in most runs, SIGTERM in one CI run of 2026-12-04 (exit 0, SIGTERM logged 2.94 s after the start). Runs compare within ±%[5]s, the range this bound allows.",
				sec(killedNotBefore), sec(killedWithin), sec(claims.KubeletStartAllowance), sec(claims.ExitAllowance), sec(killedWithin-killedNotBefore)),
			Pod: pod, After: evidence.ActionStartKubelet, NotBefore: killedNotBefore, Within: killedWithin, Killed: true,
		}).WithTolerance("stopped_after_seconds", killedWithin-killedNotBefore),
		claims.WatchOrder(rec, "orphan"),
	}
}
