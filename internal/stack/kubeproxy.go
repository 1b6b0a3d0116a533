package stack

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
