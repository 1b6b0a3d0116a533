package nodepod

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
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
		if n.Name == a.opts.SwitchAvoids || n.Spec.Unschedulable || !cluster.NodeReady(&n) || !hasImage(&n, a.opts.SwitchImage) {
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

// RemoveLeftoverSwitches deletes the node pods' switches whose node access
// is no longer alive (its namespace's Lease lapsed or gone): a switch whose
// pod ran has fired and removed itself; these are those a termlab killed
// while arming left. A live node access's switch (another termlab's
// diagnose) is left alone.
func RemoveLeftoverSwitches(ctx context.Context, c kubernetes.Interface) ([]string, error) {
	list, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: SwitchLabel})
	if err != nil {
		return nil, fmt.Errorf("listing the node pods' switches: %w", err)
	}
	var repairs []string
	var errs []error
	for _, ns := range list.Items {
		run := ns.Labels[SwitchLabel]
		holder, err := runlock.AliveHolder(ctx, c, NamespacePrefix+run)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if holder != "" {
			continue
		}
		self := clusterswitch.Self{Namespace: ns.Name, ClusterRole: ns.Name, ClusterRoleBinding: ns.Name}
		if err := switcharm.Remove(ctx, c, self); err != nil {
			errs = append(errs, err)
			continue
		}
		repairs = append(repairs, fmt.Sprintf("the node pods' switch %s of node access %s (no longer alive) was still there: deleted it", ns.Name, run))
	}
	return repairs, errors.Join(errs...)
}
