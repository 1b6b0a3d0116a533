package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/cluster"
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
