package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/clusterswitch"
	"github.com/termlab/termlab/internal/evidence"
)

// OutOfServiceTaint is node.kubernetes.io/out-of-service:NoExecute on the
// lab's worker: the pod GC force-deletes the pods terminating there, and the
// taint manager evicts every pod there that does not tolerate it, other
// tenants' too. A pod in the cluster, armed before the taint, removes it
// once this run's lock goes stale (switch.go).
type OutOfServiceTaint struct{}

func (OutOfServiceTaint) Name() string   { return "puts the out-of-service taint on a node" }
func (OutOfServiceTaint) Scope() Scope   { return NodeScope }
func (OutOfServiceTaint) NodeSide() bool { return false }

// Guard: only on the worker named for faults.
func (t OutOfServiceTaint) Guard(env *cluster.Env) error { return needsFaultNode(env, t) }

// Undo removes every taint the run added and has not removed.
func (OutOfServiceTaint) Undo(ctx context.Context, r *Run) error { return r.untaintNodes(ctx) }

func (OutOfServiceTaint) Switch() DeadMansSwitch {
	return DeadMansSwitch{What: "a pod in the cluster removes the taint once the run lock's Lease stops naming the run or goes unrenewed", Bound: SwitchBound}
}

// Repair removes the taint of a run that did not finish.
func (OutOfServiceTaint) Repair(ctx context.Context, p *Repairs) error {
	untainted, err := removeLeftoverTaints(ctx, p.Env.Client)
	for _, line := range untainted {
		p.Say("%s", line)
	}
	return err
}

// isOutOfService: the one taint a run may add, as repair removes no other.
func isOutOfService(t corev1.Taint) bool {
	return t.Key == corev1.TaintNodeOutOfService && t.Effect == corev1.TaintEffectNoExecute
}

// TaintedByAnnotation marks a node termlab tainted: its value is the run id.
// A later run's repair removes the taints of a run that did not finish.
const TaintedByAnnotation = "termlab.dev/tainted-by-run"

// TaintNode adds taint to the node (as `kubectl taint` does) and marks the
// node with the run id. From this call on, cleanup removes it on every exit
// path, and a later run's repair removes it if this run is killed.
func (r *Run) TaintNode(ctx context.Context, node string, taint corev1.Taint) error {
	if _, err := declaredBy[OutOfServiceTaint](r); err != nil {
		return err
	}
	if !isOutOfService(taint) {
		return fmt.Errorf("tainting node %s with %s:%s: a run adds only %s:%s, the taint a later run's repair knows to remove", node, taint.Key, taint.Effect, corev1.TaintNodeOutOfService, corev1.TaintEffectNoExecute)
	}
	equivalent := fmt.Sprintf("kubectl taint node %s %s=%s:%s", node, taint.Key, taint.Value, taint.Effect)
	seen := taintExpect(taint.Key, string(taint.Effect), true)
	return r.perform(ctx, action{kind: evidence.ActionTaintNode, target: node, equivalent: equivalent, doing: fmt.Sprintf("tainting node %s with %s", node, taint.Key),
		request: apiRequest{Verb: "PATCH", Path: "/api/v1/nodes/" + node, Body: map[string]any{"add_taint": taint, "annotation": map[string]string{TaintedByAnnotation: r.ID}}},
		send:    func(ctx context.Context) error { return setTaint(ctx, r.Env.Client, node, taint, r.ID, true) },
		audit:   &seen,
		before: func(ctx context.Context) error {
			// Armed first: the taint is not made without its switch, which
			// removes it if this run is killed (clusterswitch).
			if err := r.ArmSwitch(ctx, clusterswitch.Undo{Node: node, TaintKey: taint.Key, TaintEffect: string(taint.Effect), TaintedBy: TaintedByAnnotation}); err != nil {
				return err
			}
			r.mu.Lock()
			if r.taintedNodes == nil {
				r.taintedNodes = map[string]corev1.Taint{}
			}
			r.taintedNodes[node] = taint
			r.mu.Unlock()
			return nil
		},
		// The run's mark, so that a later run's repair finds the taint if
		// this one is killed: termlab's send sets it with the taint (this
		// changes nothing then); a script's or a person's taint has none.
		after: func(ctx context.Context) error { return markTainted(ctx, r.Env.Client, node, r.ID) },
	})
}

// UntaintNode removes the taint TaintNode added, and the run's mark.
// Skipped (-by), the taint is still there, and cleanup removes it.
func (r *Run) UntaintNode(ctx context.Context, node string, taint corev1.Taint) error {
	seen := taintExpect(taint.Key, string(taint.Effect), false)
	return r.perform(ctx, action{kind: evidence.ActionUntaintNode, target: node, doing: fmt.Sprintf("removing taint %s from node %s", taint.Key, node),
		equivalent: fmt.Sprintf("kubectl taint node %s %s:%s-", node, taint.Key, taint.Effect),
		request:    apiRequest{Verb: "PATCH", Path: "/api/v1/nodes/" + node, Body: map[string]any{"remove_taint": taint}},
		send:       func(ctx context.Context) error { return setTaint(ctx, r.Env.Client, node, taint, r.ID, false) },
		audit:      &seen,
		after: func(ctx context.Context) error {
			// termlab's send removed the mark with the taint; a script's did
			// not, and a mark left behind reads as a killed run's taint.
			if err := markTainted(ctx, r.Env.Client, node, ""); err != nil {
				return err
			}
			r.mu.Lock()
			delete(r.taintedNodes, node)
			r.mu.Unlock()
			return nil
		},
	})
}

// setTaint adds or removes the taint (by key and effect) and the run's mark,
// retrying on conflicts with the node controller, which updates taints too.
func setTaint(ctx context.Context, client kubernetes.Interface, node string, taint corev1.Taint, runID string, add bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var kept []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != taint.Key || t.Effect != taint.Effect {
				kept = append(kept, t)
			}
		}
		if add {
			kept = append(kept, taint)
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[TaintedByAnnotation] = runID
		} else {
			delete(n.Annotations, TaintedByAnnotation)
		}
		n.Spec.Taints = kept
		_, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// markTainted sets the node's TaintedByAnnotation to the run id, or removes
// it ("" runID). Setting the value it has changes nothing.
func markTainted(ctx context.Context, client kubernetes.Interface, node, runID string) error {
	value := any(runID)
	if runID == "" {
		value = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{TaintedByAnnotation: value}}})
	if _, err := client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("marking node %s: %w", node, err)
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

// untaintNodes removes every taint the run added and has not removed
// (cleanup, once the API server answers).
func (r *Run) untaintNodes(ctx context.Context) error {
	r.mu.Lock()
	tainted := make(map[string]corev1.Taint, len(r.taintedNodes))
	for n, t := range r.taintedNodes {
		tainted[n] = t
	}
	r.mu.Unlock()
	var errs []error
	for node, taint := range tainted {
		r.Log.Infof("cleanup: removing taint %s from %s", taint.Key, node)
		if err := r.UntaintNode(ctx, node, taint); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// taintGone says whether the taint a switch guards is gone: the node has
// neither this run's mark nor, unmarked, the taint (a script's taint).
func (r *Run) taintGone(ctx context.Context, u clusterswitch.Undo) (bool, error) {
	n, err := r.Env.Client.CoreV1().Nodes().Get(ctx, u.Node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if n.Annotations[u.TaintedBy] == r.ID {
		return false, nil
	}
	for _, t := range n.Spec.Taints {
		if t.Key == u.TaintKey && string(t.Effect) == u.TaintEffect && n.Annotations[u.TaintedBy] == "" {
			return false, nil
		}
	}
	return true, nil
}
