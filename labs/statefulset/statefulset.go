// Package statefulset is lab:statefulset — at most one pod per identity, and
// how a force delete breaks it.
//
// A one-replica StatefulSet's pod, ident-0, posts its identity (pod name,
// UID, node, sequence number) twice a second to a ledger in the cluster (a
// Deployment and Service of the workload image, on the control plane, which
// the lab does not touch). The lab stops the kubelet of ident-0's node and
// deletes the pod the ordinary way: the StatefulSet controller creates no
// replacement while ident-0 is Terminating, and the ledger shows one writer.
// Then it force-deletes ident-0: the controller at once creates a new
// ident-0 (a new UID) on the other worker, and the ledger shows both
// processes writing under one name — split brain. When the kubelet comes
// back, it kills the old container and the ledger has one writer again.
package statefulset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/ledger"
	"github.com/termlab/termlab/internal/report"
)

// The objects.
const (
	set           = "ident"
	pod           = set + "-0"
	ledgerName    = "ledger"
	ledgerPort    = 8080
	ledgerPortStr = "8080"
)

// Bounds, each from the mechanism it waits for.
const (
	readyWithin  = 90 * time.Second
	ledgerWithin = 90 * time.Second
	// writeEvery is the writer's period (LEDGER_EVERY); firstWriteWithin
	// bounds the wait for ident-0's first write to reach the ledger.
	writeEvery       = 500 * time.Millisecond
	firstWriteWithin = 15 * time.Second
	// grace is ident-0's terminationGracePeriodSeconds.
	grace = 30 * time.Second
	// pastDeadline: the force delete comes no sooner than this past the
	// grace deadline, so "no replacement while Terminating" covers the whole
	// grace period and a margin the kubelet would long have used up.
	pastDeadline = 15 * time.Second
	// The lab's waits for NotReady and the unreachable taint: about twice the
	// claims' bounds (claims.NotReadyLatest, UnreachableTaintedLatest).
	notReadyWithin = 2 * claims.NotReadyLatest
	taintWithin    = 2 * claims.NodeMonitorPeriod
	// recreatedWithin: the StatefulSet controller creates a missing ordinal
	// in the sync its informer's DELETED event triggers — no period, no
	// backoff — so the new pod's ADDED event follows within the controller's
	// reaction and the create's watch event.
	recreatedWithin = claims.ControllerSyncAllowance + claims.WatchAllowance
	// replacementWithin bounds the lab's wait for the new incarnation to run.
	replacementWithin = 90 * time.Second
	// splitHold is how long the lab lets both incarnations run after the new
	// one is Ready; minOverlap is what the ledger must show of it: the hold,
	// less one write period before the new writer's first write.
	splitHold  = 10 * time.Second
	minOverlap = splitHold - writeEvery
	// minAlternations: two writers with one period switch in the ledger's
	// arrival order about twice per period; the claim asks for half that.
	minAlternations = int(minOverlap / writeEvery)
	// A started kubelet kills a container no pod asks for at its first
	// housekeeping (as in lab:orphan and lab:stuck); the old writer's last
	// write arrives before its exit.
	killedWithin  = claims.OrphanKilledWithin
	stoppedWithin = 30 * time.Second // the lab's wait
	// aloneHold: after the kill the lab lets the new incarnation write alone
	// this long before it reads the ledger (the original's last write came
	// before the kill, so at least this long after it).
	aloneHold       = 5 * time.Second
	nodeReadyWithin = 90 * time.Second
)

// KubeletRestoreAfter arms the node's dead-man's switch: the kubelet stays
// stopped through the NotReady wait, the hold past the deadline, the
// replacement and the split-brain hold, so the node restarts it by itself
// only after all of them plus 10 s (295 s). It stays under the 300 s every
// pod tolerates an unreachable node by default (lab.DefaultUnreachableToleration),
// so a killed run evicts no other tenant's pod; the waits are bounds the
// normal path stays far inside (a passing run keeps the kubelet down about
// 70 s).
const KubeletRestoreAfter = notReadyWithin + taintWithin + grace + pastDeadline + replacementWithin + splitHold + 10*time.Second

// Definition is the lab.
var Definition = lab.Definition{
	Name:     "statefulset",
	Question: "A StatefulSet promises at most one pod per identity. Does it keep that promise while its pod's node is unreachable — and what happens to it after a force delete?",
	Summary:  "no replacement while the pod is Terminating; after a force delete two processes write under one identity until the old kubelet returns",
	Predict:  "A StatefulSet pod on a node whose kubelet is down: after an ordinary delete, does the controller start a second ident-0? After a force delete? How many processes write as ident-0, and for how long?",
	Uses:     lab.Uses{Worker: 1, Changes: []lab.Change{lab.KubeletStop{DownAtMost: KubeletRestoreAfter}}},
	ByHand: []lab.HandStep{
		{Title: "the ledger: a Deployment and a Service on the control plane",
			Do:  []string{"kubectl create -n {ns} -f inputs/objects/service-ledger.sent.yaml -f inputs/objects/deployment-ledger.sent.yaml  # from the run folder: image, placement and run labels filled in"},
			See: []string{"kubectl get --raw /api/v1/namespaces/{ns}/services/ledger:8080/proxy/"}},
		{Title: "StatefulSet ident: one replica that writes its identity to the ledger", Pod: pod,
			Do:  []string{"kubectl create -n {ns} -f inputs/objects/statefulset-ident.sent.yaml", "kubectl wait pod/ident-0 -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"kubectl get pod ident-0 -n {ns} -o wide", "kubectl get --raw /api/v1/namespaces/{ns}/services/ledger:8080/proxy/ | tail -3"}},
		{Title: "stop only the kubelet of ident-0's node",
			Do:  []string{"docker exec {node} systemd-run --unit=restore-kubelet --on-active=295s --timer-property=AccuracySec=1s systemctl start kubelet  # a safety net", "docker exec {node} systemctl stop kubelet"},
			See: []string{"docker exec {node} systemctl is-active kubelet"}},
		{Title: "an ordinary delete: the controller waits, no second ident-0", Pod: pod,
			Do:  []string{"kubectl delete pod ident-0 -n {ns} --wait=false"},
			See: []string{"kubectl get pod ident-0 -n {ns} -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,NODE:.spec.nodeName,DELETING:.metadata.deletionTimestamp -w"}},
		{Title: "a force delete: a new ident-0 starts on the other worker while the old one runs", Pod: pod,
			Do:  []string{"kubectl delete pod ident-0 -n {ns} --force --grace-period=0"},
			See: []string{"kubectl get pod ident-0 -n {ns} -o wide", "kubectl get --raw /api/v1/namespaces/{ns}/services/ledger:8080/proxy/ | tail -6  # two UIDs, interleaved", "docker exec {node} crictl ps --label io.kubernetes.pod.name={pod}"}},
		{Title: "start the kubelet: it kills the old container; one writer again", Pod: pod,
			Do:  []string{"docker exec {node} systemctl start kubelet", "docker exec {node} systemctl stop restore-kubelet.timer"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "kubectl get --raw /api/v1/namespaces/{ns}/services/ledger:8080/proxy/ | tail -4"}},
	},
	Steps:  steps,
	Claims: Claims,
	Report: Report,
	Answer: Answer,
}

func steps(ctx context.Context, r *lab.Run) error {
	if len(r.Env.Workers) < 2 {
		return fmt.Errorf("the lab needs 2 real workers (one for the replacement), the cluster has %d", len(r.Env.Workers))
	}
	var ledgerIP string
	err := r.Step(ctx, fmt.Sprintf("create the ledger on %s and wait until it answers through the service proxy", r.Env.ControlPlane), func(ctx context.Context) error {
		svc := ledgerService()
		if err := r.CreateObject(ctx, svc); err != nil {
			return err
		}
		ledgerIP = svc.Spec.ClusterIP
		if err := r.CreateObject(ctx, ledgerDeployment(r.Env.ControlPlane.String())); err != nil {
			return err
		}
		// Polling to reach a state: the ledger's history is the ledger itself.
		err := wait.PollUntilContextTimeout(ctx, time.Second, ledgerWithin, true, func(ctx context.Context) (bool, error) {
			_, err := r.Rec.PeekLedger(ctx, ledgerName, ledgerPortStr)
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("waiting up to %s for the ledger to answer: %w", ledgerWithin, err)
		}
		r.Infof("ledger answers at %s:%d (service %s)", ledgerIP, ledgerPort, ledgerName)
		return nil
	})
	if err != nil {
		return err
	}

	var (
		first       evidence.PodEvent
		node        cluster.Node
		containerID string
	)
	err = r.Step(ctx, fmt.Sprintf("create StatefulSet %s (one replica, preferring %s) and wait for %s to run and write to the ledger", set, r.Env.Workers[1], pod), func(ctx context.Context) error {
		sts := identSet(r.Env.Workers[1].String(), r.Env.Workers[0].String(), ledgerIP)
		if r.Env.FaultNode == r.Env.Workers[1].String() {
			// The node named for faults is cordoned (the fault node guard).
			sts.Spec.Template.Spec.Tolerations = append(sts.Spec.Template.Spec.Tolerations, lab.ToleratesCordon)
		}
		if err := r.CreateObject(ctx, sts); err != nil {
			return err
		}
		if first, err = r.WaitRunning(ctx, pod, readyWithin); err != nil {
			return err
		}
		if node = r.Env.Worker(first.NodeName); node == nil {
			return fmt.Errorf("%s runs on %s, not a real worker", pod, first.NodeName)
		}
		c, _ := first.Container("")
		containerID = c.ContainerID
		if _, err := r.Rec.Snapshot(ctx, pod); err != nil {
			return err
		}
		if _, err := r.Rec.ObserveContainer(ctx, node, pod, containerID); err != nil {
			return err
		}
		return waitWrites(ctx, r, first.UID)
	})
	if err != nil {
		return err
	}

	if err := r.Step(ctx, fmt.Sprintf("stop only the kubelet on %s", node), func(ctx context.Context) error {
		return r.StopKubelet(ctx, node, KubeletRestoreAfter)
	}); err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("ordinary delete of %s (its %s grace period); wait for %s to turn NotReady and be tainted unreachable, and %s past the grace deadline", pod, grace, node, pastDeadline), func(ctx context.Context) error {
		if err := r.Delete(ctx, pod); err != nil {
			return err
		}
		if err := r.WaitNotReady(ctx, node.String(), notReadyWithin); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, taintWithin)
		e, err := r.Rec.WaitNode(wctx, node.String(), "be tainted unreachable", func(e evidence.NodeEvent) bool { return e.HasTaint(evidence.UnreachableTaint) })
		cancel()
		if err == nil {
			r.Infof("node %s taints %v", node, e.Taints)
		}
		if err := r.Unobserved(ctx, err); err != nil {
			return err
		}
		return holdPastDeadline(ctx, r, node, containerID)
	})
	if err != nil {
		return err
	}

	var second evidence.PodEvent
	err = r.Step(ctx, fmt.Sprintf("force delete %s and wait for its replacement (a new UID) to run", pod), func(ctx context.Context) error {
		if err := r.ForceDelete(ctx, pod); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, replacementWithin)
		defer cancel()
		second, err = r.Rec.WaitPod(wctx, pod, "run again with a new UID", func(e evidence.PodEvent) bool {
			c, ok := e.Container("")
			return e.UID != first.UID && e.Type != "DELETED" && e.Ready == "True" && ok && c.State == "running"
		})
		if err != nil {
			return err
		}
		c, _ := second.Container("")
		r.Infof("new %s (uid %s) Ready on %s, container %s", pod, second.UID, second.NodeName, c.ContainerID)
		if n := r.Env.Worker(second.NodeName); n != nil {
			r.Rec.FollowLogs(n, pod, c.ContainerID)
		}
		return nil
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("hold %s: two %s processes, on two nodes, write to the ledger", splitHold, pod), func(ctx context.Context) error {
		newNode := r.Env.Worker(second.NodeName)
		if newNode == nil {
			return fmt.Errorf("the replacement runs on %s, not a real worker", second.NodeName)
		}
		c, _ := second.Container("")
		look := func() error {
			for _, o := range []struct {
				node cluster.Node
				id   string
			}{{node, containerID}, {newNode, c.ContainerID}} {
				seen, err := r.Rec.ObserveContainer(ctx, o.node, pod, o.id)
				if err != nil {
					return err
				}
				r.Infof("crictl on %s: %s", o.node, seen.Describe())
			}
			return nil
		}
		if err := look(); err != nil {
			return err
		}
		if err := sleep(ctx, splitHold); err != nil {
			return err
		}
		return look()
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("start the kubelet on %s, watch it kill the old container, let the new one write alone %s, measure the ledger's clock and read the ledger", node, aloneHold), func(ctx context.Context) error {
		if err := r.StartKubelet(ctx, node); err != nil {
			return err
		}
		if err := r.WaitStopped(ctx, node, pod, containerID, stoppedWithin); err != nil {
			return err
		}
		if err := sleep(ctx, aloneHold); err != nil {
			return err
		}
		// The ledger stamps the writes with its node's clock: measured here,
		// by asking the ledger, where termlab has no node pod on that node
		// (a cluster it did not create). Unmeasured, the claims that put the
		// writes against the host's times are not checked, not failed.
		if o, err := r.Rec.ProbeLedgerClock(ctx, ledgerName, ledgerPortStr); err != nil {
			r.Rec.Notef("the ledger's clock was not measured: %v", err)
		} else {
			r.Infof("the ledger's clock: %s", o)
		}
		l, err := r.Rec.ReadLedger(ctx, ledgerName, ledgerPortStr)
		if err == nil {
			r.Infof("ledger: %d writes (%s)", len(l.Entries), l.Path)
		}
		return err
	})
	if err != nil {
		return err
	}
	return r.Step(ctx, fmt.Sprintf("wait for %s to be Ready again", node), func(ctx context.Context) error {
		return lab.WaitNodeReady(ctx, r.Env, node.String(), nodeReadyWithin)
	})
}

// waitWrites waits until the ledger holds a write of the incarnation uid.
func waitWrites(ctx context.Context, r *lab.Run, uid string) error {
	err := wait.PollUntilContextTimeout(ctx, writeEvery, firstWriteWithin, true, func(ctx context.Context) (bool, error) {
		entries, err := r.Rec.PeekLedger(ctx, ledgerName, ledgerPortStr)
		if err != nil {
			return false, nil
		}
		for _, e := range entries {
			if e.UID == uid {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting up to %s for a write of %s (uid %s) in the ledger: %w", firstWriteWithin, pod, uid, err)
	}
	r.Infof("the ledger has writes of %s (uid %s)", pod, uid)
	return nil
}

// holdPastDeadline holds until pastDeadline past the pod's deletionTimestamp
// and looks at the container: the object is still Terminating, the process runs.
func holdPastDeadline(ctx context.Context, r *lab.Run, node cluster.Node, containerID string) error {
	s, err := r.Rec.Snapshot(ctx, pod)
	if err != nil {
		return err
	}
	if !s.Found || s.State == nil || s.State.DeletionTimestamp == nil {
		r.Log.Warnf("pod %s is not Terminating (found %v): the lab goes on, the claims will say", pod, s.Found)
		return nil
	}
	until := s.State.DeletionTimestamp.Add(pastDeadline + time.Second)
	r.Infof("deletionTimestamp %s: holding until %s past it", s.State.DeletionTimestamp.Format(time.RFC3339), pastDeadline)
	// The hold itself is the experiment: the watch records whatever happens meanwhile.
	if err := sleep(ctx, time.Until(until)); err != nil {
		return err
	}
	if _, err := r.Rec.Snapshot(ctx, pod); err != nil {
		return err
	}
	o, err := r.Rec.ObserveContainer(ctx, node, pod, containerID)
	if err == nil {
		r.Infof("crictl: %s — the object is Terminating, no second %s", o.Describe(), pod)
	}
	return err
}

// sleep is a hold that ends early only when the run does.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// ledgerService is the ledger's Service; its ClusterIP, filled in by the
// create, is what the writers post to (no DNS: a CoreDNS replica on the
// stopped node must not decide the experiment).
func ledgerService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ledgerName},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": ledgerName},
			Ports:    []corev1.ServicePort{{Name: "http", Port: ledgerPort, TargetPort: intstr.FromInt32(ledgerPort)}},
		},
	}
}

// ledgerDeployment runs `heartbeat ledger` on the control plane, a node the
// lab does not touch (tolerating its NoSchedule taint).
func ledgerDeployment(controlPlane string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": ledgerName}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ledgerName},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector:                 map[string]string{corev1.LabelHostname: controlPlane},
					Tolerations:                  []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					AutomountServiceAccountToken: new(false),
					EnableServiceLinks:           new(false),
					Containers: []corev1.Container{{
						Name:            ledgerName,
						Image:           "termlab/heartbeat:placeholder", // replaced by the cluster's workload image
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            []string{"ledger"},
						Env:             []corev1.EnvVar{{Name: "LEDGER_LISTEN", Value: fmt.Sprintf(":%d", ledgerPort)}},
						Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: ledgerPort}},
					}},
				},
			},
		},
	}
}

// identSet is the one-replica StatefulSet. Its pod must run on a real
// worker (not a kwok fake node) and prefers the one whose kubelet the lab
// stops, so the replacement can land on the other.
func identSet(preferred, other, ledgerIP string) *appsv1.StatefulSet {
	labels := map[string]string{"app.kubernetes.io/name": set}
	one := int32(1)
	gracePeriod := int64(grace / time.Second)
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &gracePeriod,
					AutomountServiceAccountToken:  new(false),
					EnableServiceLinks:            new(false),
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{preferred, other}}},
						}}},
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{preferred}}},
						}}},
					}},
					Containers: []corev1.Container{{
						Name:            "heartbeat",
						Image:           "termlab/heartbeat:placeholder", // replaced by the cluster's workload image
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            []string{"--interval=1s", "--term-delay=0s"},
						Env: []corev1.EnvVar{
							{Name: "LEDGER_URL", Value: fmt.Sprintf("http://%s:%d/", ledgerIP, ledgerPort)},
							{Name: "LEDGER_EVERY", Value: writeEvery.String()},
							{Name: "POD_NAME", ValueFrom: field("metadata.name")},
							{Name: "POD_UID", ValueFrom: field("metadata.uid")},
							{Name: "NODE_NAME", ValueFrom: field("spec.nodeName")},
						},
					}},
				},
			},
		},
	}
}

// Claims decides lab:statefulset's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	node := rec.TargetOf(evidence.ActionStopKubelet)
	return []claims.Claim{
		claims.StaysTerminating(rec, claims.Stuck{
			ID: "statefulset.stays_terminating",
			Statement: fmt.Sprintf("After an ordinary delete of %s (grace period %s) with its kubelet stopped, termlab waits until the node has turned NotReady and at least %s past the grace deadline before the force delete (precondition); in that time the object gets a deletionTimestamp, which the watch shows within %s of the request (the API server writes it whether or not the kubelet runs; the allowance is the watch delivery's), and stays — no DELETED event — while crictl shows the container running: nobody but the kubelet finishes a graceful delete.",
				pod, claims.InSeconds(grace), claims.InSeconds(pastDeadline), claims.InSeconds(claims.WatchAllowance)),
			Pod: pod, Node: node, Delete: evidence.ActionDelete, Until: evidence.ActionForceDelete, PastDeadline: pastDeadline,
			MarkedWithin: claims.WatchAllowance,
		}),
		claims.NoSecondIncarnation(rec, claims.Single{
			ID: "statefulset.no_replacement_while_terminating",
			Statement: fmt.Sprintf("termlab waits at least %s (the grace period and %s past it) from the ordinary delete to the force delete (precondition); in that time the name %s has one UID in the API — the StatefulSet controller creates an ordinal only once the old pod is gone from the API — and the ledger one writer, that UID, still writing: at most one, kept, with the pod watch up throughout.",
				claims.InSeconds(grace+pastDeadline), claims.InSeconds(pastDeadline), pod),
			Pod: pod, Delete: evidence.ActionDelete, Until: evidence.ActionForceDelete, MinWindow: grace + pastDeadline,
		}),
		claims.KubeletStopNotReady(rec, "statefulset.node_not_ready"),
		claims.KubeletStopTainted(rec, "statefulset.node_unreachable_taint"),
		claims.ReplacedOnAnotherNode(rec, claims.Replaced{
			ID: "statefulset.replaced_after_force_delete",
			Statement: fmt.Sprintf("After the force delete the original %s is DELETED within %s (grace 0, no finalizer: the API server removes it at once) and a new %s — a new UID — is ADDED within %s of that (the StatefulSet controller recreates the ordinal in the sync the DELETED event triggers, %s, plus %s for its watch event), and runs Ready on the other worker (the stopped node is tainted unreachable:NoSchedule).",
				pod, claims.InSeconds(claims.WatchAllowance), pod, claims.InSeconds(recreatedWithin), claims.InSeconds(claims.ControllerSyncAllowance), claims.InSeconds(claims.WatchAllowance)),
			Pod: pod, After: evidence.ActionForceDelete, GoneWithin: claims.WatchAllowance, CreatedWithin: recreatedWithin,
		}),
		claims.SplitBrain(rec, claims.Split{
			ID: "statefulset.split_brain",
			Statement: fmt.Sprintf("Two processes with one identity: the ledger shows writes of both UIDs of %s in a common window of at least %s (the lab's %s hold less one %s write period), interleaved (the arrival order switches at least %d times, half of what two writers of one period give), from two nodes; crictl on both nodes shows both containers running inside that window. The replacement being Ready said nothing about the old process.",
				pod, claims.InSeconds(minOverlap), claims.InSeconds(splitHold), claims.InSeconds(writeEvery), minAlternations),
			Pod: pod, MinOverlap: minOverlap, MinAlternations: minAlternations,
		}),
		claims.ContainerStopped(rec, claims.Stops{
			ID:        "statefulset.old_container_killed_after_kubelet_restart",
			Statement: fmt.Sprintf("Once the kubelet is started again, the original container is no longer running within %s: the kubelet's first housekeeping (%s) after its start (up to %s) kills a container no pod asks for, plus %s for the exit; killed, it ends with exit code 137 (SIGKILL), 143 (SIGTERM) or 0 after a SIGTERM its log shows (the workload handles it), never a clean 0 without one.", claims.InSeconds(killedWithin), claims.InSeconds(claims.KubeletHousekeepingPeriod), claims.InSeconds(claims.KubeletStartAllowance), claims.InSeconds(claims.ExitAllowance)),
			Pod:       pod, After: evidence.ActionStartKubelet, Within: killedWithin, Killed: true,
		}),
		claims.OneWriterAgain(rec, claims.Again{
			ID:        "statefulset.one_writer_again",
			Statement: fmt.Sprintf("The original wrote to the ledger until the kubelet came back, its last write at most %s after the start (the kill's bound: a write arrives before the writer dies). termlab then lets the new %s write alone for at least %s before it reads the ledger (precondition); in that time the ledger has no writer but the new %[2]s, still writing at the read: its last write at most %[4]s before it (one %[5]s write period, plus %[6]s for the write's delivery).", claims.InSeconds(killedWithin), pod, claims.InSeconds(aloneHold), claims.InSeconds(writeEvery+claims.WatchAllowance), claims.InSeconds(writeEvery), claims.InSeconds(claims.WatchAllowance)),
			Pod:       pod, After: evidence.ActionStartKubelet, Within: killedWithin, MinAlone: aloneHold, WriteEvery: writeEvery,
		}),
		claims.WatchOrder(rec, "statefulset"),
	}
}

// Report shows the ledger where it tells the story: the writes around the
// replacement's first one (two writers, interleaved) and around the
// original's last one (one writer again), times from the force delete.
func Report(rec *evidence.Record, _ []claims.Claim) []report.Section {
	l, ok := rec.LastLedger()
	uids := rec.UIDsOf(pod)
	force, forced := rec.Action(evidence.ActionForceDelete, pod)
	if !ok || len(uids) < 2 || !forced {
		return nil
	}
	who := map[string]string{uids[0]: "original", uids[1]: "replacement"}
	firstNew := -1
	lastOld := -1
	for i, e := range l.Entries {
		if e.UID == uids[1] && firstNew < 0 {
			firstNew = i
		}
		if e.UID == uids[0] {
			lastOld = i
		}
	}
	if firstNew < 0 || lastOld < 0 {
		return nil
	}
	// The writes are the ledger's clock's, the force delete the host's.
	clock, unmeasured := claims.LedgerClock(rec, l), false
	rows := func(entries []ledger.Entry) [][]string {
		var out [][]string
		for _, e := range entries {
			iv := rec.Between(rec.ActionStamp(force), evidence.Stamp{Time: e.ReceivedAt, Clock: clock})
			unmeasured = unmeasured || len(iv.Unmeasured) > 0
			out = append(out, []string{fmt.Sprintf("%+.3f s", iv.D.Seconds()), who[e.UID] + " `" + e.UID[:8] + "`", e.Node, fmt.Sprint(e.Seq)})
		}
		return out
	}
	around := func(i int) []ledger.Entry { return l.Entries[max(i-4, 0):min(i+6, len(l.Entries))] }
	header := []string{"received (from the force delete)", "writer", "node", "seq"}
	restarted := "after the kubelet came back"
	if start, ok := rec.Action(evidence.ActionStartKubelet, rec.TargetOf(evidence.ActionStartKubelet)); ok {
		restarted = fmt.Sprintf("after the kubelet came back (started at %+.3f s)", start.StartedAt.Sub(force.StartedAt).Seconds())
	}
	before, after := report.Table(header, rows(around(firstNew))), report.Table(header, rows(around(lastOld)))
	stamped := "stamps each write on arrival"
	if unmeasured {
		stamped += fmt.Sprintf(" with the clock of %s, which the run did not measure: the times from the force delete are raw differences of two clocks", clock)
	}
	body := fmt.Sprintf("The ledger (%s, %d writes) %s. Around the replacement's first write: two processes named %s write, interleaved.\n\n%s\nAround the original's last write, %s:\n\n%s",
		l.Path, len(l.Entries), stamped, pod, before, restarted, after)
	return []report.Section{{Title: "The ledger", Body: body}}
}
