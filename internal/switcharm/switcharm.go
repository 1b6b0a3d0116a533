// Package switcharm arms and removes the cluster's dead-man's switches
// (internal/clusterswitch runs them, in a pod): a namespace, a
// ServiceAccount, a ClusterRole naming each object the switch may touch, its
// binding, and the pod, on a node the change does not touch. The lab's
// changes (internal/lab) and the node pods (internal/nodepod) arm them.
package switcharm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/clusterswitch"
)

// The switch's timing: it fires once its Lease has not been renewed for
// StaleAfter (a run renews it every 2 s, and gives the lock up itself
// after 15 s of failed renewals), looking every Poll.
const (
	StaleAfter = 30 * time.Second
	Poll       = 2 * time.Second
	// readyWithin bounds the wait for the switch's pod to run: the change is
	// not made before its switch is armed.
	readyWithin = 90 * time.Second
	// settleFor is how long the switch runs unrestarted before it counts as
	// armed: a refused Spec or a missing token ends it within milliseconds,
	// and its first look at the Lease is done by then.
	settleFor = 3 * time.Second
)

// Bound is the longest a guarded change outlives a run killed outright:
// the Lease's staleness and one look, then the switch's own requests.
const Bound = StaleAfter + Poll

// Name is the name of the n-th switch of seed (a run id): namespace,
// ClusterRole and binding. A hash, so that what keeps the objects named
// with the run id (the run's audit tail, the recorder) leaves it out.
func Name(seed string, n int) string {
	sum := sha256.Sum256([]byte(seed))
	return fmt.Sprintf("termlab-switch-%s-%d", hex.EncodeToString(sum[:])[:10], n)
}

// Arm creates the switch of spec on node with image and waits for its pod
// to run. labels go on every object, for a later repair to find them. On an
// error whatever was made is removed again.
func Arm(ctx context.Context, c kubernetes.Interface, spec clusterswitch.Spec, image, node string, labels map[string]string) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	err := create(ctx, c, spec, image, node, labels)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = Remove(cctx, c, spec.Self)
	}
	return err
}

func create(ctx context.Context, c kubernetes.Interface, spec clusterswitch.Spec, image, node string, labels map[string]string) error {
	name := spec.Self.Namespace
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	if _, err := c.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "switch", Labels: labels}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating its ServiceAccount: %w", err)
	}
	role, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: Rules(spec)}, metav1.CreateOptions{})
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
	pod, err := Pod(spec, image, node, labels)
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Pods(name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating its pod: %w", err)
	}
	// Polling to reach a state (the switch is not evidence of a lab). A
	// switch that refuses its Spec exits at once, yet its container is
	// Ready for that moment: armed is running, never restarted, for
	// settleFor by this process's clock.
	var last string
	var runningSince time.Time
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, readyWithin, true, func(ctx context.Context) (bool, error) {
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
			if exited := exitedOnce(cs); exited != "" {
				return false, fmt.Errorf("the switch's pod exited (%s): kubectl logs -n %s switch --previous", exited, name)
			}
			if failed := startFailed(cs); failed != "" {
				last += "; the runtime failed to start it (" + failed + "), the kubelet tries again"
			}
			if cs.State.Running == nil || !cs.Ready {
				runningSince = time.Time{}
				continue
			}
			if runningSince.IsZero() {
				runningSince = time.Now()
			}
			if time.Since(runningSince) >= settleFor {
				return true, nil
			}
			last = "running, settling"
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the switch's pod %s/switch on %s to run (last: %s): %w", name, node, last, err)
	}
	return nil
}

// exitedOnce says how the switch's process ended, now or before a
// restart; "" while it never has. A container the runtime failed to start
// (StartError: its process never ran, so it refused nothing) is not an
// end: the kubelet starts it again after its back-off (runc on cgroup v1
// fails a start now and then, kubernetes/kubernetes#109182), and
// startFailed says why while the wait goes on.
func exitedOnce(cs corev1.ContainerStatus) string {
	kept := false
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t == nil {
			continue
		}
		kept = true
		if t.Reason == startError {
			continue
		}
		return fmt.Sprintf("%s, code %d", t.Reason, t.ExitCode)
	}
	if cs.RestartCount > 0 && !kept {
		return fmt.Sprintf("restarted %d times", cs.RestartCount)
	}
	return ""
}

// startError is the reason the kubelet gives a container whose process the
// runtime could not start.
const startError = "StartError"

// startFailed is the runtime's own reason (runc's message) for the last
// start that failed, "" if none did.
func startFailed(cs corev1.ContainerStatus) string {
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t != nil && t.Reason == startError {
			return fmt.Sprintf("%s, code %d: %s", t.Reason, t.ExitCode, strings.TrimSpace(t.Message))
		}
	}
	return ""
}

// Rules grant the switch what it undoes and its own removal, each by
// name, and nothing else.
func Rules(spec clusterswitch.Spec) []rbacv1.PolicyRule {
	namespaces := []string{spec.Self.Namespace}
	if spec.Undo.NodePods != "" {
		namespaces = append(namespaces, spec.Undo.NodePods)
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{spec.LeaseName}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: namespaces, Verbs: []string{"delete"}},
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

// Pod runs `heartbeat switch` as nobody, with nothing but its
// ServiceAccount's token.
func Pod(spec clusterswitch.Spec, image, node string, labels map[string]string) (*corev1.Pod, error) {
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

// Remove deletes a switch's namespace (its pod with it, ending the watch:
// SIGTERM disarms), ClusterRole and binding.
func Remove(ctx context.Context, c kubernetes.Interface, self clusterswitch.Self) error {
	var errs []error
	// Conflict: the namespace is being deleted already (the switch fired).
	if err := c.CoreV1().Namespaces().Delete(ctx, self.Namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
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
