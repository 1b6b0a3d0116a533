package cluster

import (
	"fmt"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/progress"
)

// KindNodes returns the node containers of every kind cluster on this
// Docker engine by name (kind names a node's container after its Kubernetes
// node), for reading a node of a cluster termlab did not create.
func KindNodes(log *progress.Logger) (map[string]nodes.Node, error) {
	p := provider(log)
	clusters, err := p.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	out := map[string]nodes.Node{}
	for _, c := range clusters {
		ns, err := p.ListNodes(c)
		if err != nil {
			return nil, fmt.Errorf("listing nodes of kind cluster %q: %w", c, err)
		}
		for _, n := range ns {
			out[n.String()] = n
		}
	}
	return out, nil
}
