package nodepod

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/clusterswitch"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/switcharm"
)

// SwitchLabel marks the node pods' dead-man's switch (namespace,
// ClusterRole, binding) with the node access's run id. Not a lab's
// SwitchOfRunLabel: node access outlives lab runs, and their repair must
// leave a live one's switch alone.
const SwitchLabel = "termlab.dev/switch-of-node-access"

// SwitchBound is how long the node pods outlive a termlab killed outright
// when their switch is armed: the alive Lease's staleness and one look.
const SwitchBound = switcharm.Bound

// armSwitch arms the node pods' dead-man's switch: a pod on another node
// that deletes their namespace once this process stops renewing its alive
// Lease (a SIGKILL, a lost machine), instead of their activeDeadlineSeconds
// (Lifetime) much later. The switch runs termlab's workload image: on a
// cluster without it on a node it may use, there is none, and the deadline
// is the bound (said).
func (a *Access) armSwitch(ctx context.Context, holder string) error {
	if a.opts.SwitchImage == "" {
		a.opts.Log("node pods in %s: no dead-man's switch asked for; a killed termlab leaves them until their deadline (%s)", a.Namespace(), a.opts.Lifetime)
		return nil
	}
	node, err := a.switchNode(ctx)
	if err != nil {
		return err
	}
	if node == "" {
		a.opts.Log("node pods in %s: no schedulable worker has %s to run their dead-man's switch; a killed termlab leaves them until their deadline (%s)", a.Namespace(), a.opts.SwitchImage, a.opts.Lifetime)
		return nil
	}
	name := switcharm.Name("node access "+a.opts.RunID, 1)
	spec := clusterswitch.Spec{
		RunID: a.opts.RunID, Holder: holder,
		LeaseNamespace: a.Namespace(), LeaseName: runlock.AliveLease,
		StaleAfter: switcharm.StaleAfter, Poll: switcharm.Poll,
		Undo: clusterswitch.Undo{NodePods: a.Namespace()},
		Self: clusterswitch.Self{Namespace: name, ClusterRole: name, ClusterRoleBinding: name},
	}
	if err := switcharm.Arm(ctx, a.client, spec, a.opts.SwitchImage, node, map[string]string{SwitchLabel: a.opts.RunID}); err != nil {
		return fmt.Errorf("arming the node pods' dead-man's switch, so none starts: %w", err)
	}
	a.switchSelf = &spec.Self
	a.opts.Log("node pods in %s: their dead-man's switch runs in %s/switch on %s and deletes them %s after this termlab stops renewing Lease %s/%s", a.Namespace(), name, node, SwitchBound, a.Namespace(), runlock.AliveLease)
	return nil
}

// switchNode is a Ready, schedulable, untainted worker that has the
// switch's image and is not SwitchAvoids; "" for none.
func (a *Access) switchNode(ctx context.Context) (string, error) {
	list, err := a.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing nodes for the node pods' dead-man's switch: %w", err)
	}
	var names []string
	for _, n := range list.Items {
		if n.Name == a.opts.SwitchAvoids || n.Spec.Unschedulable || !ready(&n) || !hasImage(&n, a.opts.SwitchImage) {
			continue
		}
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Effect != corev1.TaintEffectPreferNoSchedule }) {
			continue // the control plane's, a cordon's, an unreachable node's
		}
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
