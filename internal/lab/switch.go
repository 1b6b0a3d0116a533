package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/clusterswitch"
	"github.com/termlab/termlab/internal/runlock"
)

// SwitchOfRunLabel marks a cluster switch's namespace and ClusterRole with
// the run it guards. Not RunIDLabel: the run's recorder and claims look at
// what carries that, and the switch is not the experiment.
const SwitchOfRunLabel = "termlab.dev/switch-of-run"

// The switch's timing: it fires once the run lock's Lease has not been
// renewed for switchStaleAfter (a run renews it every 2 s, and gives the
// lock up itself after 15 s of failed renewals), looking every switchPoll.
const (
	switchStaleAfter = 30 * time.Second
	switchPoll       = 2 * time.Second
	// switchReadyWithin bounds the wait for the switch's pod to run: the
	// change is not made before its switch is armed.
	switchReadyWithin = 90 * time.Second
)

// SwitchBound is the longest a change a lab makes in the cluster (a taint,
// an APIService) outlives a run killed outright: the Lease's staleness and
// one look, then the switch's own requests.
const SwitchBound = switchStaleAfter + switchPoll

// armedSwitch is one switch this run armed.
type armedSwitch struct {
	spec clusterswitch.Spec
}

// switchName is the name of the run's n-th switch (namespace, ClusterRole,
// binding): a hash of the run id, so the run's audit tail (which keeps what
// is named with the id) and the recorder leave it out.
func switchName(runID string, n int) string {
	sum := sha256.Sum256([]byte(runID))
	return fmt.Sprintf("termlab-switch-%s-%d", hex.EncodeToString(sum[:])[:10], n)
}

// ArmSwitch arms a dead-man's switch in the cluster for a change the lab
// is about to make: a pod, on a real worker the change does not touch,
// that undoes it if this run's lock goes stale (internal/clusterswitch).
// The change must not be made when this fails. Cleanup disarms it once the
// change is undone, and leaves it armed (to fire when the lock is gone)
// when it is not.
func (r *Run) ArmSwitch(ctx context.Context, undo clusterswitch.Undo) error {
	r.mu.Lock()
	n := len(r.switches) + 1
	r.mu.Unlock()
	name := switchName(r.ID, n)
	spec := clusterswitch.Spec{
		RunID: r.ID, Holder: r.lockHolder,
		LeaseNamespace: runlock.LeaseNamespace, LeaseName: runlock.LeaseName,
		StaleAfter: switchStaleAfter, Poll: switchPoll, Undo: undo,
		Self: clusterswitch.Self{Namespace: name, ClusterRole: name, ClusterRoleBinding: name},
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("arming the switch for %s: %w", undo.What(), err)
	}
	node := r.switchNode(undo.Node)
	if node == "" {
		return fmt.Errorf("arming the switch for %s: no Ready worker other than %q to run it on", undo.What(), undo.Node)
	}
	done := r.Log.Step(fmt.Sprintf("arming the cluster's dead-man's switch for %s (pod %s/switch on %s: undoes it %s after this run stops renewing its lock)", undo.What(), name, node, SwitchBound))
	err := r.createSwitch(ctx, spec, node)
	done(err)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = deleteSwitch(cctx, r, spec.Self)
		return fmt.Errorf("arming the switch for %s, so it is not made: %w", undo.What(), err)
	}
	r.mu.Lock()
	r.switches = append(r.switches, armedSwitch{spec: spec})
	r.mu.Unlock()
	if r.Rec != nil {
		r.Rec.Notef("armed the cluster's dead-man's switch for %s: pod %s/switch on %s undoes it if the run lock's Lease stops naming this run or goes %s unrenewed", undo.What(), name, node, switchStaleAfter)
	}
	return nil
}

// switchNode is a real worker for the switch's pod: not the node the
// change is on, nor the one named for faults (its kubelet may be stopped).
func (r *Run) switchNode(changed string) string {
	for _, w := range r.Env.Workers {
		if n := w.String(); n != changed && n != r.Env.FaultNode {
			return n
		}
	}
	return ""
}

func (r *Run) createSwitch(ctx context.Context, spec clusterswitch.Spec, node string) error {
	c := r.Env.Client
	name := spec.Self.Namespace
	labels := map[string]string{SwitchOfRunLabel: r.ID, LabLabel: r.Lab}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	if _, err := c.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "switch", Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating its ServiceAccount: %w", err)
	}
	role, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: switchRules(spec)}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating its ClusterRole (termlab needs the right to grant what the switch undoes): %w", err)
	}
	// Owned by the role: the switch deletes the role last, and the garbage
	// collector the binding after it (switch deletes of its own would fail).
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name, UID: role.UID,
		}}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "switch", Namespace: name}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating its ClusterRoleBinding: %w", err)
	}
	pod, err := switchPod(spec, r.Env.WorkloadImage, node, labels)
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Pods(name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating its pod: %w", err)
	}
	// Polling to reach a state (the switch is not evidence of the lab).
	var last string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, switchReadyWithin, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(name).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = string(p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil {
				last += " (" + cs.State.Waiting.Reason + ")"
			}
			if cs.State.Terminated != nil {
				return false, fmt.Errorf("the switch's pod exited (%s, code %d): kubectl logs -n %s switch", cs.State.Terminated.Reason, cs.State.Terminated.ExitCode, name)
			}
			if cs.Ready {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the switch's pod %s/switch on %s to run (last: %s): %w", name, node, last, err)
	}
	return nil
}

// switchRules grant the switch what it undoes and its own removal, each
// by name, and nothing else.
func switchRules(spec clusterswitch.Spec) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{spec.LeaseName}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{spec.Self.Namespace}, Verbs: []string{"delete"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{spec.Self.ClusterRole}, Verbs: []string{"delete"}},
	}
	if spec.Undo.Node != "" {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, ResourceNames: []string{spec.Undo.Node}, Verbs: []string{"get", "patch"}})
	}
	if spec.Undo.APIService != "" {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"apiregistration.k8s.io"}, Resources: []string{"apiservices"}, ResourceNames: []string{spec.Undo.APIService}, Verbs: []string{"get", "delete"}})
	}
	return rules
}

// switchPod runs `heartbeat switch` as nobody, with nothing but its
// ServiceAccount's token.
func switchPod(spec clusterswitch.Spec, image, node string, labels map[string]string) (*corev1.Pod, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	nobody := int64(65534)
	grace := int64(2)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "switch", Namespace: spec.Self.Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			ServiceAccountName:            "switch",
			NodeSelector:                  map[string]string{corev1.LabelHostname: node},
			TerminationGracePeriodSeconds: &grace,
			EnableServiceLinks:            new(false),
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: &nobody, RunAsNonRoot: new(true)},
			Containers: []corev1.Container{{
				Name: "switch", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"switch"},
				Env:  []corev1.EnvVar{{Name: clusterswitch.SpecEnv, Value: string(raw)}},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}, nil
}

// disarmSwitches removes each switch whose change is undone, and leaves
// armed (said) each whose change is still there: it fires once the run
// releases its lock, within SwitchBound.
func (r *Run) disarmSwitches(ctx context.Context) error {
	r.mu.Lock()
	switches := append([]armedSwitch(nil), r.switches...)
	r.switches = nil
	r.mu.Unlock()
	var errs []error
	for _, s := range switches {
		undone, err := r.undone(ctx, s.spec.Undo)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("checking that %s is undone before disarming its switch: %w", s.spec.Undo.What(), err))
			continue
		case !undone:
			r.Log.Warnf("cleanup: %s is still there; its switch %s stays armed and removes it within %s of this run's end", s.spec.Undo.What(), s.spec.Self.Namespace, SwitchBound)
			continue
		}
		if err := deleteSwitch(ctx, r, s.spec.Self); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// undone says whether the change a switch guards is gone (its kind's
// check: change_taint.go, change_apiservice.go).
func (r *Run) undone(ctx context.Context, u clusterswitch.Undo) (bool, error) {
	if u.Node != "" {
		return r.taintGone(ctx, u)
	}
	return r.apiServiceGone(ctx, u.APIService)
}

// deleteSwitch deletes a switch's ClusterRole (its binding goes with it)
// and namespace (its pod with it, ending the watch: SIGTERM disarms).
func deleteSwitch(ctx context.Context, r *Run, self clusterswitch.Self) error {
	c := r.Env.Client
	var errs []error
	if err := c.CoreV1().Namespaces().Delete(ctx, self.Namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("deleting the switch's namespace %s: %w", self.Namespace, err))
	}
	if err := c.RbacV1().ClusterRoles().Delete(ctx, self.ClusterRole, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("deleting the switch's ClusterRole %s: %w", self.ClusterRole, err))
	}
	if err := c.RbacV1().ClusterRoleBindings().Delete(ctx, self.ClusterRoleBinding, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("deleting the switch's ClusterRoleBinding %s: %w", self.ClusterRoleBinding, err))
	}
	return errors.Join(errs...)
}
