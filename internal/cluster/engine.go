package cluster

import (
	"context"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/dockerhost"
)

// EngineDown says why the cluster cannot answer when its nodes are
// containers of this machine's Docker engine and the engine does not answer
// ("": it answers, or the nodes are reached another way: a kubeconfig, node
// pods). The nodes stop with the engine, so nothing of the cluster can come
// back before it does.
func EngineDown(ctx context.Context, env *Env) string {
	if env == nil {
		return ""
	}
	if _, kind := env.ControlPlane.(nodes.Node); !kind {
		return ""
	}
	if _, err := dockerhost.ServerVersion(ctx); err != nil {
		return err.Error()
	}
	return ""
}
