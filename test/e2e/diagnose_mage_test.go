//go:build e2e

package e2e

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/project"
)

// TestDiagnoseThroughMageLeavesNoNodePods runs `go tool mage diagnose` with
// only a kubeconfig and -nodeaccess, as a user would on their cluster, and
// sends Ctrl-C (SIGINT to the process group) as soon as its node-access
// namespace appears. Whether the signal lands while the node pod is in use or
// just after the diagnosis, the namespace must be gone afterwards: mage ends
// the target five seconds after SIGINT, and the delete is sent at once.
func TestDiagnoseThroughMageLeavesNoNodePods(t *testing.T) {
	env := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// kube-proxy's pod on a worker: -nodeaccess alone opens no node pod on
	// the control plane (CoreDNS's node on kind), whose disk holds the CA.
	proxies, err := env.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy", FieldSelector: "spec.nodeName=" + env.Workers[0].String()})
	if err != nil || len(proxies.Items) == 0 {
		t.Fatalf("no kube-proxy pod on %s to diagnose: %v", env.Workers[0], err)
	}
	target := "kube-system/" + proxies.Items[0].Name

	mage := startMage(t, root, "diagnose", "-pod="+target, "-kubeconfig="+env.KubeconfigPath, "-nodeaccess=true")
	var seen string
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-mage.done:
			return false, errTargetEnded
		default:
		}
		list, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: nodepod.PurposeLabel})
		if err != nil || len(list.Items) == 0 {
			return false, nil
		}
		seen = list.Items[0].Name
		return true, nil
	})
	switch {
	case errors.Is(err, errTargetEnded):
		t.Fatalf("diagnose ended before its node-access namespace was seen")
	case err != nil:
		t.Fatalf("no node-access namespace appeared: %v", err)
	}
	if err := syscall.Kill(-mage.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatalf("sending SIGINT to the process group: %v", err)
	}
	t.Logf("SIGINT %s after start, with namespace %s present", time.Since(mage.started).Round(10*time.Millisecond), seen)
	mage.wait(t)
	begin := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.Client.CoreV1().Namespaces().Get(ctx, seen, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("namespace %s is still on the cluster after Ctrl-C", seen)
	}
	t.Logf("namespace %s gone %s after mage exited", seen, time.Since(begin).Round(100*time.Millisecond))
	assertNoNodePods(t, env.Client)
}

var errTargetEnded = errors.New("the target ended")
