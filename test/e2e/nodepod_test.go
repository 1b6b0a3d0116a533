//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodepod"
)

// TestNodePodAnswersLikeDockerExec reaches a worker through a node pod (the
// API server's pods/exec only, as on a cluster without docker access) and
// checks that the node's own tools answer there as through kind's docker
// exec; then that Close leaves nothing on the cluster.
func TestNodePodAnswersLikeDockerExec(t *testing.T) {
	env := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	worker := env.Workers[0]
	access := nodepod.New(env.Client, env.RESTConfig, nodepod.Options{RunID: lab.NewRunID(time.Now()), Log: t.Logf})
	defer func() {
		if err := access.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	begin := time.Now()
	node, why := access.Node(ctx, worker.String())
	if node == nil {
		t.Fatalf("no node pod on %s: %s", worker, why)
	}
	t.Logf("node pod on %s ran in %s", worker, time.Since(begin).Round(time.Millisecond))

	viaPod, err := kubelet.State(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	viaDocker, err := kubelet.State(ctx, worker)
	if err != nil {
		t.Fatal(err)
	}
	if viaPod != viaDocker || viaPod != "active" {
		t.Errorf("systemctl is-active kubelet: %q through the node pod, %q through docker exec; want both active", viaPod, viaDocker)
	}

	run := func(n kubelet.Node, args ...string) string {
		var out bytes.Buffer
		cmd := n.CommandContext(ctx, args[0], args[1:]...)
		cmd.SetStdout(&out)
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v on %s: %v", args, n, err)
		}
		return out.String()
	}
	// The node pod's own container is one crictl lists: proof that crictl
	// ran against the node's runtime, not inside the pod.
	ps := run(node, "crictl", "ps", "--name", "node", "-q")
	if strings.TrimSpace(ps) == "" {
		t.Errorf("crictl ps on %s through the node pod does not list the node pod's container", worker)
	}
	if hostname := strings.TrimSpace(run(node, "cat", "/etc/hostname")); hostname != worker.String() {
		t.Errorf("/etc/hostname through the node pod is %q, want %s", hostname, worker)
	}

	// A failing command reports its exit status, as kind's exec does.
	cmd := node.CommandContext(ctx, "crictl", "inspect", "no-such-container")
	var stderr bytes.Buffer
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "NotFound") && !strings.Contains(stderr.String(), "not found") {
		t.Errorf("crictl inspect of a missing container: err %v, stderr %q; want a failure that says not found", err, stderr.String())
	}

	if err := access.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Namespaces().Get(ctx, access.Namespace(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s is still there after Close: %v", access.Namespace(), err)
	}
}
