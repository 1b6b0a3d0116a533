//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// TestRemoteOnlyFlagsRefusedWithoutKubeconfig: a flag that means something
// only with -kubeconfig, given without it (or left in the environment), is
// refused through mage with a one-line reason before anything runs: no
// run, nothing on the host or the cluster.
func TestRemoteOnlyFlagsRefusedWithoutKubeconfig(t *testing.T) {
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"lab:force", "-nodeaccess"}, "", "-nodeaccess: only with -kubeconfig"},
		{[]string{"lab:orphan", "-allownodefaults=termlab-worker"}, "", "-allownodefaults: only with -kubeconfig"},
		{[]string{"lab:namespace"}, "TERMLAB_ALLOW_CLUSTER_FAULTS=1", "-allowclusterfaults (TERMLAB_ALLOW_CLUSTER_FAULTS): only with -kubeconfig"},
	} {
		out, code := runMageCode(t, ctx, root, tc.env, tc.args[0], tc.args[1:]...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("go tool mage %v (%s): exit %d, want a refusal with %q:\n%s", tc.args, tc.env, code, tc.want, out)
		}
		if strings.Contains(out, " run ") && strings.Contains(out, "results in") {
			t.Errorf("go tool mage %v: a run began", tc.args)
		}
	}
}

// runMageCode runs a mage target in its own process group and returns its
// output and exit code, whatever the code; env is one extra NAME=VALUE ("" none).
func runMageCode(t *testing.T, ctx context.Context, root, env, target string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", append([]string{"tool", "mage", target}, args...)...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if env != "" {
		cmd.Env = append(os.Environ(), env)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, os.Stderr), io.MultiWriter(&out, os.Stderr)
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("go tool mage %s did not run: %v", target, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// tenantPodOn starts a pod that is not termlab's (no run label, a
// namespace of its own) on the node, as another tenant's, and returns its
// namespace/name once it is bound there. It is deleted with its namespace
// at the end of the test.
func tenantPodOn(t *testing.T, ctx context.Context, client kubernetes.Interface, node string) string {
	t.Helper()
	ns := "tenant-e2e-" + rand.String(5)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the tenant's namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns, Labels: map[string]string{"app": "tenant"}},
		Spec:       tenantPodSpec(node),
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the tenant's pod: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == node, nil
	})
	if err != nil {
		t.Fatalf("the tenant's pod was not bound to %s: %v", node, err)
	}
	return ns + "/" + pod.Name
}

// tenantPodSpec is another tenant's workload on the node: termlab's
// heartbeat image, which the nodes have, and nothing of termlab's.
func tenantPodSpec(node string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: node},
		TerminationGracePeriodSeconds: new(int64(1)),
		Containers: []corev1.Container{{
			Name: "c", Image: images.WorkloadRef, ImagePullPolicy: corev1.PullNever,
			Args: []string{"--interval=1s"},
		}},
	}
}

// cordonAndDrain makes the node termlab's alone, as the refusal tells a
// person to (kubectl cordon, then drain): cordoned, and every pod on it
// that is not a DaemonSet's, a static pod or termlab's deleted, waited for
// until gone. The node is uncordoned at the end of the test.
func cordonAndDrain(t *testing.T, ctx context.Context, client kubernetes.Interface, node string) {
	t.Helper()
	setUnschedulable := func(ctx context.Context, v bool) error {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": v}})
		_, err := client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	if err := setUnschedulable(ctx, true); err != nil {
		t.Fatalf("cordoning %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := setUnschedulable(context.Background(), false); err != nil {
			t.Errorf("uncordoning %s: %v", node, err)
		}
	})
	// What the guard counts as in the way, asked of the guard itself.
	inTheWay := func(ctx context.Context) ([]corev1.Pod, error) {
		list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
		if err != nil {
			return nil, err
		}
		return stack.PodsInTheWay(list.Items), nil
	}
	pods, err := inTheWay(ctx)
	if err != nil {
		t.Fatalf("listing the pods on %s: %v", node, err)
	}
	for _, p := range pods {
		t.Logf("draining %s/%s from %s", p.Namespace, p.Name, node)
		if err := client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("draining %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left, err := inTheWay(ctx)
		return err == nil && len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods still on %s two minutes after the drain: %v", node, err)
	}
}
