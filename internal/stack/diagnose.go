package stack

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
)

// NeedsNodeAccess is why node checks are skipped on a cluster that is not termlab's.
const NeedsNodeAccess = "needs -nodeaccess"

// DiagnoseSource is where `diagnose` reads from: termlab's cluster when
// kubeconfig is "" (node checks through kind's docker exec unless
// nodeAccess is false), any cluster otherwise (node checks only with
// nodeAccess, and only on nodes that are kind node containers on this Docker
// engine). It never checks the cluster's health: a diagnosis is wanted most
// when a node is NotReady.
func DiagnoseSource(log *progress.Logger, kubeconfig string, nodeAccess *bool) (diagnose.Source, error) {
	own := kubeconfig == ""
	if own {
		root, err := project.Root()
		if err != nil {
			return diagnose.Source{}, err
		}
		kubeconfig = project.KubeconfigPath(root)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return diagnose.Source{}, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.Timeout = 20 * time.Second
	cfg.UserAgent = "termlab-diagnose"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return diagnose.Source{}, fmt.Errorf("building a client from %s: %w", kubeconfig, err)
	}
	src := diagnose.Source{Client: client, Node: diagnose.NoNodeAccess(NeedsNodeAccess)}
	access := own
	if nodeAccess != nil {
		access = *nodeAccess
	}
	if !access {
		if own {
			src.Node = diagnose.NoNodeAccess("node access was turned off (-nodeaccess=false)")
		}
		return src, nil
	}
	var byName map[string]nodes.Node
	if own {
		ns, err := cluster.ExistingNodes(log, cluster.DefaultName)
		if err != nil {
			return diagnose.Source{}, err
		}
		byName = map[string]nodes.Node{}
		for _, n := range ns {
			byName[n.String()] = n
		}
	} else if byName, err = cluster.KindNodes(log); err != nil {
		return diagnose.Source{}, err
	}
	src.Node = KindNodeAccess(byName)
	return src, nil
}

// KindNodeAccess gives diagnose the kind node containers by node name; any
// other node (a kwok fake node, a machine) is "not checked".
func KindNodeAccess(byName map[string]nodes.Node) diagnose.NodeAccess {
	return func(_ context.Context, name string) (kubelet.Node, string) {
		if n, ok := byName[name]; ok {
			return n, ""
		}
		return nil, fmt.Sprintf("node %s is not a kind node container on this Docker engine (a kwok fake node has no kubelet or runtime to ask)", name)
	}
}
