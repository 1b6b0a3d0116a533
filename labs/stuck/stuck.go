// Package stuck is lab:stuck — an ordinary delete on a node whose kubelet is
// stopped, then the documented way out.
//
// Pod stuck (no finalizer) runs on the second real worker. The lab stops
// only that kubelet and deletes the pod the ordinary way. Nobody can finish
// the deletion: the object stays Terminating past its grace deadline and
// past the node turning NotReady, while the container runs on. Then the lab
// applies node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, the
// remedy meant for a node that is really shut down, and the pod garbage
// collector force-deletes the pod. The node was not shut down: the container
// still runs after the object is gone. Cleanup removes the taint and starts
// the kubelet, which kills the container.
package stuck

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
)

const pod = "stuck"

// idDeletedByPodGC is the claim on who removed the pod: it needs the audit log.
const idDeletedByPodGC = "stuck.pod_gc_deleted_by"

// outOfService is the taint the Kubernetes docs give for a node that is
// shut down: pods terminating on it are force-deleted by the pod GC.
var outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// Bounds, each from the mechanism it waits for.
const (
	readyWithin = 90 * time.Second
	// grace is the pod's terminationGracePeriodSeconds (manifests/pods/stuck.yaml).
	grace = 30 * time.Second
	// notReadyWithin and taintWithin bound the lab's waits: about twice the
	// claims' bounds (claims.NotReadyLatest, UnreachableTaintedLatest), so a
	// late change is recorded and the claim says how late.
	notReadyWithin = 2 * claims.NotReadyLatest
	taintWithin    = 2 * claims.NodeMonitorPeriod
	// pastDeadline: the object must still be there this long after its grace
	// deadline (deletionTimestamp) — by then the kubelet would long have
	// finished a deletion it could see.
	pastDeadline = 15 * time.Second
	// pastNotReady: and this long after its node turned NotReady — one whole
	// run of the pod garbage collector (podGCPeriod), the controller that
	// would force-delete it were the node tainted out-of-service: NotReady
	// alone finishes nothing.
	pastNotReady = podGCPeriod
	// podGCPeriod is how often the pod garbage collector runs (gcCheckPeriod
	// in pkg/controller/podgc/gc_controller.go); each run force-deletes pods
	// terminating on NotReady nodes with the out-of-service taint, after a
	// status patch to phase Failed. podGCWithin adds the API round trips.
	podGCPeriod = 20 * time.Second
	podGCWithin = podGCPeriod + claims.NodeStatusAllowance
	// A started kubelet kills a container no pod asks for at its first
	// housekeeping (as in lab:orphan).
	killedWithin    = claims.OrphanKilledWithin
	stoppedWithin   = 30 * time.Second // the lab's wait
	nodeReadyWithin = 90 * time.Second
)

// KubeletRestoreAfter arms the node's dead-man's switch: the kubelet stays
// stopped through the NotReady wait, the hold past the deadline and the pod
// GC, so the node restarts it by itself only after all of them plus half a minute.
const KubeletRestoreAfter = notReadyWithin + taintWithin + pastDeadline + pastNotReady + podGCWithin + 30*time.Second

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "stuck",
	Question:  "A pod is deleted the ordinary way while its node's kubelet is down. Why does it stay Terminating — and what does the out-of-service taint, the documented way out, do to it and to its still-running container?",
	Summary:   "a delete nobody can finish stays Terminating; the out-of-service taint gets the pod GC to force-delete it, while the container runs on",
	Predict:   "An ordinary delete while the node's kubelet is down: when does the pod leave Terminating \u2014 after its 30 s grace period, when the node turns NotReady, or never? And after the out-of-service taint?",
	Uses:      lab.Uses{Worker: 1, Changes: []lab.Change{lab.KubeletStop{DownAtMost: KubeletRestoreAfter}, lab.OutOfServiceTaint{}}},
	Manifests: []string{"stuck.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pod stuck on the second worker and wait until it is Ready", Pod: pod,
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/stuck.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels", "kubectl wait pod/stuck -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"docker exec {node} crictl ps --label io.kubernetes.pod.name={pod}"}},
		{Title: "stop only the kubelet (containerd keeps running)",
			Do:  []string{"docker exec {node} systemd-run --unit=restore-kubelet --on-active=180s --timer-property=AccuracySec=1s systemctl start kubelet  # a safety net", "docker exec {node} systemctl stop kubelet"},
			See: []string{"docker exec {node} systemctl is-active kubelet"}},
		{Title: "an ordinary delete: nobody can finish it", Pod: pod,
			Do:  []string{"kubectl delete pod stuck -n {ns} --wait=false"},
			See: []string{"kubectl get pod stuck -n {ns} -w", "kubectl get node {node} -o jsonpath='{.spec.taints}'"}},
		{Title: "the out-of-service taint: the pod GC force-deletes the pod", Pod: pod,
			Do:  []string{"kubectl taint node {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"},
			See: []string{"kubectl get pod stuck -n {ns}", "docker exec {node} crictl ps --label io.kubernetes.pod.name={pod}"}},
		{Title: "undo: remove the taint, start the kubelet; it kills the container", Pod: pod,
			Do:  []string{"kubectl taint node {node} node.kubernetes.io/out-of-service:NoExecute-", "docker exec {node} systemctl start kubelet", "docker exec {node} systemctl stop restore-kubelet.timer"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
	},
	Steps:   steps,
	Claims:  Claims,
	Answer:  Answer,
	Moments: Moments,
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(1)
	if err != nil {
		return err
	}
	var containerID string
	var notReadySeen time.Time // when the lab saw the node NotReady (after the record did)
	err = r.Step(ctx, fmt.Sprintf("create pod %s on %s and record its container ID", pod, worker), func(ctx context.Context) error {
		containerID, err = r.StartPod(ctx, "stuck.yaml", pod, worker, readyWithin)
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

	err = r.Step(ctx, fmt.Sprintf("ordinary delete of %s (its %s grace period), then wait for %s to turn NotReady and be tainted unreachable", pod, grace, worker), func(ctx context.Context) error {
		if err := r.Delete(ctx, pod); err != nil {
			return err
		}
		if err := r.WaitNotReady(ctx, worker.String(), notReadyWithin); err != nil {
			return err
		}
		notReadySeen = time.Now()
		wctx, cancel := lab.Within(ctx, taintWithin)
		e, err := r.Rec.WaitNode(wctx, worker.String(), "be tainted unreachable", func(e evidence.NodeEvent) bool { return e.HasTaint(evidence.UnreachableTaint) })
		cancel()
		if err == nil {
			r.Infof("node %s taints %v", worker, e.Taints)
		}
		return r.Unobserved(ctx, err)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("hold until %s past the grace deadline and %s past NotReady: %s stays Terminating, its container runs", pastDeadline, pastNotReady, pod), func(ctx context.Context) error {
		s, err := r.Rec.Snapshot(ctx, pod)
		if err != nil {
			return err
		}
		if !s.Found || s.State == nil || s.State.DeletionTimestamp == nil {
			r.Log.Warnf("pod %s is not Terminating (found %v): the lab goes on, the claims will say", pod, s.Found)
			return nil
		}
		until := s.State.DeletionTimestamp.Add(pastDeadline + time.Second)
		if !notReadySeen.IsZero() {
			until = later(until, notReadySeen.Add(pastNotReady+time.Second))
		}
		if wait := time.Until(until); wait > 0 {
			r.Infof("deletionTimestamp %s: holding %s", s.State.DeletionTimestamp.Format(time.RFC3339), wait.Round(time.Second))
			// The hold itself is the experiment: the watch records whatever happens meanwhile.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		if _, err := r.Rec.Snapshot(ctx, pod); err != nil {
			return err
		}
		_, err = r.Look(ctx, worker, pod, containerID, " — the object is still Terminating")
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("taint %s out-of-service and wait for the pod GC to delete %s", worker, pod), func(ctx context.Context) error {
		if err := r.TaintNode(ctx, worker.String(), outOfService); err != nil {
			return err
		}
		if err := r.WaitDeleted(ctx, pod, podGCWithin); err != nil {
			return err
		}
		_, err := r.Look(ctx, worker, pod, containerID, " — with no API object")
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("remove the taint, start the kubelet on %s and watch the container", worker), func(ctx context.Context) error {
		if err := r.UntaintNode(ctx, worker.String(), outOfService); err != nil {
			return err
		}
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

// Claims decides lab:stuck's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	node := rec.TargetOf(evidence.ActionStopKubelet)
	return []claims.Claim{
		claims.StaysTerminating(rec, claims.Stuck{
			ID: "stuck.stays_terminating",
			Statement: fmt.Sprintf("After an ordinary delete of pod %s (grace period %s) with its kubelet stopped, termlab waits until at least %s past its grace deadline and %s past the node turning NotReady (one whole run of the pod garbage collector) before the out-of-service taint (precondition); in that time the object gets a deletionTimestamp, which the watch shows within %s of the request (the API server writes it whether or not the kubelet runs; the allowance is the watch delivery's), and stays — no DELETED event: the pod garbage collector leaves it, NotReady alone finishes nothing — while crictl still shows the container running after the deadline. Nobody but the kubelet finishes a graceful delete.",
				pod, grace, pastDeadline, pastNotReady, claims.InSeconds(claims.WatchAllowance)),
			Pod: pod, Node: node, Delete: evidence.ActionDelete, Until: evidence.ActionTaintNode, PastDeadline: pastDeadline, PastNotReady: pastNotReady,
			MarkedWithin: claims.WatchAllowance,
		}),
		claims.KubeletStopNotReady(rec, "stuck.node_not_ready"),
		claims.KubeletStopTainted(rec, "stuck.node_unreachable_taint"),
		claims.FailedAndDeletedWithin(rec, claims.Collected{
			ID:        "stuck.pod_gc_deleted",
			Statement: fmt.Sprintf("Within %s of the out-of-service taint (the pod GC runs every %s, plus %s), the pod is marked phase Failed and DELETED while its kubelet is still stopped: a controller's doing, not the kubelet's (who sent the delete is %s).", claims.InSeconds(podGCWithin), claims.InSeconds(podGCPeriod), claims.InSeconds(claims.NodeStatusAllowance), idDeletedByPodGC),
			Pod:       pod, After: evidence.ActionTaintNode, Within: podGCWithin, KubeletStopped: evidence.ActionStopKubelet, KubeletStarted: evidence.ActionStartKubelet,
		}),
		claims.DeletedByUser(rec, claims.DeletedBy{
			ID:        idDeletedByPodGC,
			Statement: fmt.Sprintf("The requests that marked pod %s Failed and removed it were the pod garbage collector's: the API server's audit log names %s as the sender of a status write received before the watch showed the pod Failed (it patches the phase first), and of the force delete (gracePeriodSeconds 0) received before the watch showed it DELETED. Only the audit log says who sent a request: without one this is not checked (and who wrote the status is left open by one that keeps no status writes of the pod).", pod, claims.PodGCUser),
			Pod:       pod, User: claims.PodGCUser, MarkedFailed: true,
		}),
		claims.RunningAfterDeleted(rec, claims.Orphaned{
			ID:        "stuck.container_running_after_gone",
			Statement: fmt.Sprintf("The node was not shut down, so the taint's promise was false: after the DELETED event and until the kubelet is started again, crictl shows the container of %s CONTAINER_RUNNING at every look.", pod),
			Pod:       pod, Until: evidence.ActionStartKubelet, All: true, MinObservations: 1,
		}),
		claims.ContainerStopped(rec, claims.Stops{
			ID:        "stuck.container_stopped_after_kubelet_restart",
			Statement: fmt.Sprintf("Once the kubelet is started again, the container is no longer running within %s: the kubelet's first housekeeping (%s) after its start (up to %s) kills a container no pod asks for, plus %s for the exit. It is killed, by whichever signal wins the race between the kubelet's cgroup cleanup (SIGKILL: exit code 137) and its own kill (SIGTERM first: the workload logs it and exits 0 at once, its term delay being 0) — never a clean 0 without a SIGTERM in its log. Recorded: its exit code and whether it got SIGTERM.", claims.InSeconds(killedWithin), claims.InSeconds(claims.KubeletHousekeepingPeriod), claims.InSeconds(claims.KubeletStartAllowance), claims.InSeconds(claims.ExitAllowance)),
			Pod:       pod, After: evidence.ActionStartKubelet, Within: killedWithin, Killed: true,
		}),
		claims.WatchOrder(rec, "stuck"),
	}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
