//go:build e2e

package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
)

// switchSlackInCluster: past the switch's bound, its pod's requests (the
// undo, then its own removal) and the test's 500 ms looks.
const switchSlackInCluster = 15 * time.Second

// TestClusterChangesUndoneAfterSIGKILL kills `go tool mage lab:namespace`
// and `go tool mage lab:stuck` outright (SIGKILL to the process group, as
// a closed laptop does) while their change to the cluster is in place:
// lab:namespace's APIService with no backend (discovery fails for every
// tenant) and lab:stuck's out-of-service taint. With no second termlab
// run, the cluster's dead-man's switch must undo each within its bound
// (lab.SwitchBound after the run lock's last renewal) and remove itself.
// cluster:up then repairs what the runs left that no tenant feels (their
// namespaces, lab:stuck's stopped kubelet).
func TestClusterChangesUndoneAfterSIGKILL(t *testing.T) {
	env := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	tainted := env.Workers[1].String()
	for _, tc := range []struct {
		lab string
		// present says whether the lab's change is in the cluster.
		present func(ctx context.Context) (bool, string)
	}{
		{"namespace", func(ctx context.Context) (bool, string) {
			l, err := env.Client.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices").Param("labelSelector", lab.RunIDLabel).Do(ctx).Raw()
			if err != nil {
				return false, ""
			}
			return strings.Contains(string(l), "unavailable.termlab.dev"), "an APIService of the run"
		}},
		{"stuck", func(ctx context.Context) (bool, string) {
			n, err := env.Client.CoreV1().Nodes().Get(ctx, tainted, metav1.GetOptions{})
			if err != nil {
				return false, ""
			}
			for _, tt := range n.Spec.Taints {
				if tt.Key == corev1.TaintNodeOutOfService {
					return true, "the out-of-service taint on " + tainted
				}
			}
			return false, ""
		}},
	} {
		t.Run(tc.lab, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			mage := startMage(t, root, "lab:"+tc.lab)
			var what string
			err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, stoppedWithin, true, func(ctx context.Context) (bool, error) {
				ok, w := tc.present(ctx)
				what = w
				return ok, nil
			})
			if err != nil {
				t.Fatalf("lab:%s never made its change: %v", tc.lab, err)
			}
			killedAt := time.Now()
			if err := syscall.Kill(-mage.cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatalf("SIGKILL to the process group: %v", err)
			}
			mage.wait(t)
			bound := lab.SwitchBound + switchSlackInCluster
			err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, bound+time.Minute, true, func(ctx context.Context) (bool, error) {
				ok, _ := tc.present(ctx)
				return !ok, nil
			})
			gone := time.Since(killedAt)
			if err != nil {
				t.Fatalf("%s still there %s after the SIGKILL (switch bound %s)", what, gone.Round(100*time.Millisecond), lab.SwitchBound)
			}
			t.Logf("lab:%s SIGKILLed: %s gone %s later, with no termlab running (bound %s + %s)", tc.lab, what, gone.Round(100*time.Millisecond), lab.SwitchBound, switchSlackInCluster)
			if gone > bound {
				t.Errorf("%s went %s after the SIGKILL, later than %s", what, gone.Round(100*time.Millisecond), bound)
			}
			// The switch removed itself too.
			err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				ns, err1 := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: lab.SwitchOfRunLabel})
				roles, err2 := env.Client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: lab.SwitchOfRunLabel})
				return err1 == nil && err2 == nil && len(ns.Items) == 0 && len(roles.Items) == 0, nil
			})
			if err != nil {
				t.Errorf("the switch's namespace or ClusterRole is still there a minute after it fired")
			}
			// What no tenant feels (the run's namespaces, a stopped kubelet)
			// is the next run's or cluster:up's to repair.
			out := runMage(t, ctx, root, "cluster:up")
			if strings.Contains(out, "deleting cluster") {
				t.Errorf("cluster:up after the SIGKILL deleted the cluster")
			}
			if err := cluster.WaitNodesReady(ctx, env.Client, 2*time.Minute, nil); err != nil {
				t.Errorf("nodes after cluster:up's repair: %v", err)
			}
		})
	}
}
