package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/mounthold"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/runlock"
)

// RepairLeftovers puts back what a killed earlier run may have left: a real
// worker whose kubelet is not active (started again, and any dead-man's
// switch still armed disarmed: internal/kubelet.Restore), nodes a run created
// (kwok fake nodes labelled with its run id: deleted), pods labelled with a
// run id that still carry finalizers (finalizers removed), and namespaces of
// earlier runs (deleted). Namespaces kept on purpose (Options.Keep), and
// those another live termlab marks in use (its node pods: runlock.KeepAlive),
// are left alone. It returns one line per repair, for the user and the record.
// It runs under the cluster's run lock (a Lease): any other run's objects it
// finds belong to a run that no longer holds it (ended, or killed and its
// Lease expired).
func RepairLeftovers(ctx context.Context, env *cluster.Env, log *progress.Logger, currentRunID string) ([]string, error) {
	var repairs []string
	var errs []error
	say := sayRepair(&repairs, log)

	restored, released, kerr, merr := RestoreNodes(ctx, kubeletNodes(env)) // the nodes a run may have held a mount on are those of kubelets
	errs = append(errs, kerr, merr)
	for _, rep := range restored {
		say("%s", rep.Text)
		if rep.Started {
			if err := WaitNodeReady(ctx, env, rep.Node, 90*time.Second); err != nil {
				errs = append(errs, err)
			}
		}
	}

	for _, line := range released {
		say("%s", line)
	}
	removed, err := RemoveLeftovers(ctx, env, log, currentRunID)
	return append(repairs, removed...), errors.Join(append(errs, err)...)
}

// sayRepair returns a function that says a repair and adds it to repairs.
func sayRepair(repairs *[]string, log *progress.Logger) func(format string, args ...any) {
	return func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		*repairs = append(*repairs, s)
		log.Warnf("repairing a leftover: %s", s)
	}
}

// RemoveLeftovers is RepairLeftovers' part in the API: the out-of-service
// taints, fake nodes, objects, pods' finalizers and namespaces that earlier
// runs left. cluster:up does it too, under the same lock, once the cluster
// answers: a run whose cleanup could not reach the cluster (the engine under
// its nodes stopped) leaves nothing for longer than the next cluster:up.
func RemoveLeftovers(ctx context.Context, env *cluster.Env, log *progress.Logger, currentRunID string) ([]string, error) {
	var repairs []string
	var errs []error
	say := sayRepair(&repairs, log)

	untainted, err := removeLeftoverTaints(ctx, env.Client)
	for _, line := range untainted {
		say("%s", line)
	}
	if err != nil {
		errs = append(errs, err)
	}

	deleted, err := removeLeftoverNodes(ctx, env.Client, currentRunID)
	for _, line := range deleted {
		say("%s", line)
	}
	if err != nil {
		errs = append(errs, err)
	}

	objects, err := removeLeftoverObjects(ctx, env, currentRunID)
	for _, line := range objects {
		say("%s", line)
	}
	if err != nil {
		errs = append(errs, err)
	}

	core := env.Client.CoreV1()
	nsList, err := core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		return repairs, errors.Join(append(errs, fmt.Errorf("listing namespaces of earlier runs: %w", err))...)
	}
	kept := map[string]bool{}
	var stale []string
	for _, ns := range nsList.Items {
		if ns.Labels[RunIDLabel] == currentRunID || slices.Contains(env.InUse, ns.Name) {
			continue
		}
		if ns.DeletionTimestamp != nil {
			continue // already being deleted (a run's cleanup does not wait for it); stuck pods are handled below
		}
		if holder, err := runlock.AliveHolder(ctx, env.Client, ns.Name); err != nil {
			errs = append(errs, err)
			continue
		} else if holder != "" {
			kept[ns.Name] = true
			log.Infof("namespace %s is in use by %s: left alone", ns.Name, holder)
			continue
		}
		if ns.Labels[KeepLabel] == "true" {
			kept[ns.Name] = true
			log.Infof("namespace %s was kept by an earlier run (delete it with: kubectl delete namespace %s)", ns.Name, ns.Name)
			continue
		}
		stale = append(stale, ns.Name)
	}

	stuck := map[string][]string{}
	_, err = EachPod(ctx, core.Pods(metav1.NamespaceAll), metav1.ListOptions{LabelSelector: RunIDLabel}, func(p *corev1.Pod) error {
		if p.Labels[RunIDLabel] == currentRunID || kept[p.Namespace] || len(p.Finalizers) == 0 {
			return nil
		}
		if err := ReleaseFinalizers(ctx, env.Client, p.Namespace, p.Name); err != nil {
			errs = append(errs, fmt.Errorf("leftover pod %s/%s with finalizers %v: %w", p.Namespace, p.Name, p.Finalizers, err))
			return nil
		}
		stuck[p.Namespace] = append(stuck[p.Namespace], fmt.Sprintf("%s %v", p.Name, p.Finalizers))
		return nil
	})
	if err != nil {
		return repairs, errors.Join(append(errs, fmt.Errorf("listing pods of earlier runs: %w", err))...)
	}
	nsNames := make([]string, 0, len(stuck))
	for ns := range stuck {
		nsNames = append(nsNames, ns)
	}
	sort.Strings(nsNames)
	for _, ns := range nsNames {
		say("pods of an earlier run in %s still had finalizers: removed them from %s", ns, firstFew(stuck[ns]))
	}

	zero := int64(0)
	for _, ns := range stale {
		// Pods played by kwok (its stage-set label) have no container
		// anywhere: force-deleted, thousands of them (a killed lab:scale)
		// go at once, instead of draining through kwok for minutes.
		err := core.Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: kwok.StageSetLabel})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("force-deleting the kwok pods of namespace %s of an earlier run: %w", ns, err))
		}
		err = core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting namespace %s of an earlier run: %w", ns, err))
			continue
		}
		say("namespace %s of an earlier run was still there: deleted it", ns)
	}
	if len(stale) > 0 {
		// Give the deletions a bounded moment, so the new run starts on a quiet cluster.
		_ = wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			for _, ns := range stale {
				if _, err := core.Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, nil
				}
			}
			return true, nil
		})
	}
	return repairs, errors.Join(errs...)
}

// RestoreNodes puts back what a killed run left on the nodes: a stopped
// kubelet or an armed restore timer (kubelet.Restore) and a process holding
// a pod's volume (mounthold.Restore). Both at once, each on every node at
// once: a docker exec per question, asked before every run and cluster:up.
func RestoreNodes(ctx context.Context, nodes []kubelet.Node) (kubelets []kubelet.Repair, mounts []string, kubeletErr, mountErr error) {
	var wg sync.WaitGroup
	wg.Go(func() { kubelets, kubeletErr = kubelet.Restore(ctx, nodes) })
	wg.Go(func() { mounts, mountErr = mounthold.Restore(ctx, nodes) })
	wg.Wait()
	return kubelets, mounts, kubeletErr, mountErr
}

// kubeletNodes is every real node of the cluster, as internal/kubelet takes them.
func kubeletNodes(env *cluster.Env) []kubelet.Node {
	// Only termlab's own cluster and a node named for faults have kubelets a
	// run may have stopped (canRun): elsewhere the check would start a node
	// pod on every node for nothing.
	if nodeAccess(env) != evidence.NodeAccessDocker {
		if w := env.Worker(env.FaultNode); env.FaultNode != "" && w != nil {
			return []kubelet.Node{w}
		}
		return nil
	}
	var out []kubelet.Node
	if env.ControlPlane != nil {
		out = append(out, env.ControlPlane)
	}
	for _, w := range env.Workers {
		out = append(out, w)
	}
	return out
}

// ReleaseFinalizers removes every finalizer of a pod termlab created (the
// same merge patch a lab's remove-finalizers step sends). A pod that is
// already gone is not an error.
func ReleaseFinalizers(ctx context.Context, client kubernetes.Interface, namespace, pod string) error {
	_, err := client.CoreV1().Pods(namespace).Patch(ctx, pod, types.MergePatchType, []byte(finalizersPatch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizers of pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// removeLeftoverTaints removes from every node marked TaintedByAnnotation
// the taints a run adds (the out-of-service taint): that run did not finish.
func removeLeftoverTaints(ctx context.Context, client kubernetes.Interface) ([]string, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes for leftover taints: %w", err)
	}
	var repairs []string
	var errs []error
	for _, n := range list.Items {
		run, ok := n.Annotations[TaintedByAnnotation]
		if !ok {
			continue
		}
		oos := corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute}
		if err := setTaint(ctx, client, n.Name, oos, run, false); err != nil {
			errs = append(errs, fmt.Errorf("removing leftover taint %s from %s: %w", oos.Key, n.Name, err))
			continue
		}
		repairs = append(repairs, fmt.Sprintf("node %s still carried the %s taint of run %s (it did not finish): removed it", n.Name, oos.Key, run))
	}
	return repairs, errors.Join(errs...)
}

// removeLeftoverNodes deletes the nodes an earlier run created (a lab's own
// kwok fake nodes, labelled with its run id): that run did not finish.
func removeLeftoverNodes(ctx context.Context, client kubernetes.Interface, currentRunID string) ([]string, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		return nil, fmt.Errorf("listing nodes of earlier runs: %w", err)
	}
	byRun := map[string][]string{}
	var runs []string
	var errs []error
	for _, n := range list.Items {
		run := n.Labels[RunIDLabel]
		if run == currentRunID {
			continue
		}
		if err := client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting node %s of run %s: %w", n.Name, run, err))
			continue
		}
		if byRun[run] == nil {
			runs = append(runs, run)
		}
		byRun[run] = append(byRun[run], n.Name)
	}
	var repairs []string
	for _, run := range runs {
		repairs = append(repairs, fmt.Sprintf("%d node(s) of run %s were still there (it did not finish): deleted them (%s)", len(byRun[run]), run, strings.Join(byRun[run], ", ")))
	}
	return repairs, errors.Join(errs...)
}

// listedInFull is how many names a repair line lists: an interrupted
// lab:scale leaves a thousand, and one line per thousand names is noise.
const listedInFull = 5

// firstFew joins the first names and counts the rest.
func firstFew(names []string) string {
	if len(names) <= listedInFull {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:listedInFull], ", "), len(names)-listedInFull)
}
