package workshop

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/stack"
)

// ResetResult says what Reset did.
type ResetResult struct {
	Env *cluster.Env
	// Repairs are one line per thing put back.
	Repairs []string
	Took    time.Duration
}

// nsGoneTimeout bounds the wait for deleted run namespaces to disappear.
const nsGoneTimeout = 90 * time.Second

// Reset returns the cluster to the state a session starts from, in seconds:
//
//  1. stack.Up: every real node's kubelet runs (a stopped one is started
//     before the cluster is checked: a node that is only NotReady because a
//     lab stopped its kubelet must not make it recreate the cluster);
//     the cluster is reused when healthy, kwok and its fake nodes
//     are ensured, the images are on the nodes; only a broken cluster
//     (stopped node containers, half-created) is recreated;
//  3. every run namespace is deleted, those a run kept on purpose
//     (TERMLAB_KEEP) too, the finalizers of their pods removed first;
//  4. lab.RepairLeftovers for the rest (pods of runs with finalizers
//     elsewhere), then Reset waits until every run namespace is gone.
//
// It changes nothing but what runs left behind. While a lab run looks in
// progress (see ActiveRuns) it refuses before changing anything, unless
// TERMLAB_FORCE is set.
func Reset(ctx context.Context, log *progress.Logger, opts stack.Options) (*ResetResult, error) {
	if log == nil {
		log = progress.Default()
	}
	begin := time.Now()
	res := &ResetResult{}
	say := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		res.Repairs = append(res.Repairs, s)
		log.Infof("reset: %s", s)
	}

	co := stack.ClusterOptions(opts.Root)
	// The same locks as lab runs: a reset in the middle of a run would undo it.
	locks, err := stack.Lock(ctx, log, co, "workshop:reset", false)
	if err != nil {
		return res, err
	}
	defer locks.Release()
	// Before anything changes: a run in progress (a colleague's, CI's) would be broken.
	if c := quickClient(ctx, co.Name, co.KubeconfigPath); c != nil {
		if err := refuseActiveRuns(ctx, log, c); err != nil {
			return res, err
		}
	}
	env, err := stack.Up(ctx, log, opts)
	if err != nil {
		return res, err
	}
	res.Env = env
	// The cluster answers now, if it did not when the locks were taken.
	if err := locks.InCluster(ctx, log, env.RESTConfig); err != nil {
		return res, err
	}
	if err := refuseActiveRuns(ctx, log, env.Client); err != nil {
		return res, err
	}

	// Every run namespace first (kept ones too), without waiting, so that
	// RepairLeftovers finds them being deleted and the waits overlap.
	names, err := deleteRunNamespaces(ctx, env, say)
	if err != nil {
		return res, err
	}
	repairs, err := lab.RepairLeftovers(ctx, env, log, "")
	res.Repairs = append(res.Repairs, repairs...)
	if err != nil {
		return res, err
	}
	if err := waitNamespacesGone(ctx, env, names); err != nil {
		return res, err
	}
	if err := cluster.WaitNodesReady(ctx, env.Client, 90*time.Second, nil); err != nil {
		return res, err
	}
	res.Took = time.Since(begin)
	if len(res.Repairs) == 0 {
		log.Infof("reset: nothing to repair; cluster %q is in its start state (%s)", env.Name, res.Took.Round(100*time.Millisecond))
	} else {
		log.Infof("reset: cluster %q is in its start state after %d repairs (%s)", env.Name, len(res.Repairs), res.Took.Round(100*time.Millisecond))
	}
	return res, nil
}

// deleteRunNamespaces deletes every namespace labelled with a run id (kept
// ones included, not those a live termlab marks in use), removing the
// finalizers of their pods first, and returns their names.
func deleteRunNamespaces(ctx context.Context, env *cluster.Env, say func(string, ...any)) ([]string, error) {
	core := env.Client.CoreV1()
	list, err := core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: lab.RunIDLabel})
	if err != nil {
		return nil, fmt.Errorf("listing run namespaces: %w", err)
	}
	var errs []error
	var names []string
	for _, ns := range list.Items {
		if holder, err := runlock.AliveHolder(ctx, env.Client, ns.Name); err != nil || holder != "" {
			if err == nil {
				say("left namespace %s alone: in use by %s", ns.Name, holder)
			}
			errs = append(errs, err)
			continue
		}
		names = append(names, ns.Name)
		pods, err := core.Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, pod := range pods.Items {
			if len(pod.Finalizers) == 0 {
				continue
			}
			if err := lab.ReleaseFinalizers(ctx, env.Client, ns.Name, pod.Name); err != nil {
				errs = append(errs, err)
				continue
			}
			say("removed finalizers %v of pod %s/%s", pod.Finalizers, ns.Name, pod.Name)
		}
		if ns.DeletionTimestamp == nil {
			if err := core.Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting namespace %s: %w", ns.Name, err))
				continue
			}
			kept := ""
			if ns.Labels[lab.KeepLabel] == "true" {
				kept = " (kept for inspection by its run)"
			}
			say("deleted namespace %s%s", ns.Name, kept)
		}
	}
	return names, errors.Join(errs...)
}

// waitNamespacesGone waits until the namespaces are gone.
func waitNamespacesGone(ctx context.Context, env *cluster.Env, names []string) error {
	if len(names) == 0 {
		return nil
	}
	core := env.Client.CoreV1()
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, nsGoneTimeout, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, n := range names {
			if _, err := core.Namespaces().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, n)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("run namespaces still there after %s: %v", nsGoneTimeout, left)
	}
	return nil
}
