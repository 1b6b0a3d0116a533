//go:build e2e

// Package e2e runs on the real termlab cluster that `go tool mage test` brings
// up first. Nothing here creates or deletes the cluster.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/stack"
)

func connect(t *testing.T) *cluster.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := stack.Connect(ctx, progress.Default())
	if err != nil {
		t.Fatalf("connecting to the termlab cluster (run `go tool mage cluster:up` first): %v", err)
	}
	return env
}

func TestAllNodesReady(t *testing.T) {
	env := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cluster.WaitNodesReady(ctx, env.Client, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var real, fake int
	for i := range list.Items {
		if list.Items[i].Annotations["kwok.x-k8s.io/node"] == "fake" {
			fake++
		} else {
			real++
		}
	}
	if real != 3 {
		t.Errorf("real nodes: %d, want 3 (1 control plane + 2 workers)", real)
	}
	wantFake := 2
	if v := os.Getenv("TERMLAB_FAKE_NODES"); v != "" {
		fmt.Sscanf(v, "%d", &wantFake)
	}
	if fake != wantFake {
		t.Errorf("kwok fake nodes: %d, want %d", fake, wantFake)
	}
	if len(env.FakeNodes) != wantFake {
		t.Errorf("Env.FakeNodes = %v, want %d names", env.FakeNodes, wantFake)
	}
}

func testNamespace(t *testing.T, env *cluster.Env) string {
	t.Helper()
	ctx := context.Background()
	name := "termlab-e2e-" + rand.String(5)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"termlab.dev/run-id": name}}}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	if err := cluster.WaitNamespaceReady(ctx, env.Client, name, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = env.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	return name
}

func waitRunning(ctx context.Context, t *testing.T, env *cluster.Env, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		pod = p
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		phase := "unknown"
		if pod != nil {
			b, _ := json.Marshal(pod.Status)
			phase = string(b)
		}
		t.Fatalf("pod %s/%s not Running within 2m: %v; last status %s", ns, name, err, phase)
	}
	return pod
}

func TestWorkloadRunsOnRealWorkerAndCrictlSeesIt(t *testing.T) {
	env := connect(t)
	if len(env.Workers) == 0 {
		t.Fatal("no real workers")
	}
	worker := env.Workers[0]
	ns := testNamespace(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "heartbeat", Labels: map[string]string{"termlab.dev/run-id": ns}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": worker.String()},
			Containers: []corev1.Container{{
				Name: "heartbeat", Image: env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--interval=200ms"},
			}},
		},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	running := waitRunning(ctx, t, env, ns, "heartbeat")
	if running.Spec.NodeName != worker.String() {
		t.Fatalf("pod ran on %s, want %s", running.Spec.NodeName, worker)
	}
	if len(running.Status.ContainerStatuses) != 1 {
		t.Fatalf("container statuses: %+v", running.Status.ContainerStatuses)
	}
	id := strings.TrimPrefix(running.Status.ContainerStatuses[0].ContainerID, "containerd://")
	out, err := kindexec.Output(worker.CommandContext(ctx, "crictl", "inspect", id))
	if err != nil {
		t.Fatalf("crictl inspect %s on %s: %v", id, worker, err)
	}
	var inspect struct {
		Status struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &inspect); err != nil {
		t.Fatalf("parsing crictl inspect: %v\n%s", err, out)
	}
	if inspect.Status.ID != id || inspect.Status.State != "CONTAINER_RUNNING" {
		t.Fatalf("crictl on %s says %+v for %s", worker, inspect.Status, id)
	}
	logs, err := kindexec.Output(worker.CommandContext(ctx, "crictl", "logs", id))
	if err != nil || !strings.Contains(string(logs), "heartbeat seq=") {
		t.Fatalf("crictl logs %s: %v\n%s", id, err, logs)
	}
}

func TestPodRunsOnKwokNode(t *testing.T) {
	env := connect(t)
	ns := testNamespace(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fake", Labels: map[string]string{"termlab.dev/run-id": ns}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"type": "kwok"},
			Tolerations:  []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpEqual, Value: "fake", Effect: corev1.TaintEffectNoSchedule}},
			Containers:   []corev1.Container{{Name: "fake", Image: env.WorkloadImage}},
		},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	running := waitRunning(ctx, t, env, ns, "fake")
	found := false
	for _, n := range env.FakeNodes {
		found = found || n == running.Spec.NodeName
	}
	if !found {
		t.Fatalf("pod ran on %s, not on a kwok node %v", running.Spec.NodeName, env.FakeNodes)
	}
}

// deleteNamespaceAndWait deletes a test's namespace and waits (within ctx)
// until it is gone; a namespace still there is a test failure.
func deleteNamespaceAndWait(ctx context.Context, t *testing.T, core corev1client.CoreV1Interface, ns string) {
	t.Helper()
	_ = core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := core.Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("namespace %s is still there after the test", ns)
	}
}
