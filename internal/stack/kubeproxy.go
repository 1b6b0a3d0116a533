package stack

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/cluster"
)

// keepKubeProxyOffFakeNodes: kubeadm's kube-proxy DaemonSet tolerates every
// taint, so without this kwok would "run" a kube-proxy pod on each fake node,
// noise in every listing and in the labs' evidence.
func keepKubeProxyOffFakeNodes(ctx context.Context, env *cluster.Env) error {
	patch := []byte(`{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"type","operator":"NotIn","values":["kwok"]}]}]}}}}}}}`)
	_, err := env.Client.AppsV1().DaemonSets("kube-system").Patch(ctx, "kube-proxy", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "termlab"})
	if err != nil {
		return fmt.Errorf("keeping kube-proxy off kwok nodes (patching DaemonSet kube-system/kube-proxy): %w", err)
	}
	return nil
}

// waitKubeProxy waits until kubeadm init has made the kube-proxy DaemonSet:
// on a cluster still being created the API server answers before that.
func waitKubeProxy(ctx context.Context, env *cluster.Env) error {
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.Client.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kubeadm to create DaemonSet kube-system/kube-proxy: %w", err)
	}
	return nil
}
