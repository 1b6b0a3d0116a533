package cluster

import (
	"context"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/exec"
)

// Node is the one exec seam to a node: commands (crictl, systemctl) run
// through its CommandContext. kind's nodes.Node satisfies it on termlab's
// own cluster (docker exec); internal/nodepod's node pods satisfy it on a
// cluster reached through a kubeconfig alone.
type Node interface {
	CommandContext(ctx context.Context, name string, args ...string) exec.Cmd
	String() string
}

// Env is what a running termlab cluster gives the labs: API clients, the kind
// node handles (the one exec seam for crictl/systemctl on a node) and versions.
type Env struct {
	Name           string
	KubeconfigPath string
	RESTConfig     *rest.Config
	Client         kubernetes.Interface

	// ControlPlane and Workers are the real (kind) nodes, by Kubernetes node name.
	ControlPlane Node
	Workers      []Node
	// FakeNodes are the names of the kwok-managed nodes.
	FakeNodes []string

	// NodeAccess is how commands reach the nodes: evidence.NodeAccessDocker
	// (kind's docker exec; "" means the same), NodeAccessPod or NodeAccessNone.
	NodeAccess string
	// InUse are namespaces of termlab's that the Env itself holds for as
	// long as it lives (the node pods' namespace): a lab run's repair of
	// earlier runs' namespaces leaves them alone.
	InUse []string
	// FaultNode, on a cluster reached through a kubeconfig, is the one
	// worker where a lab may stop the kubelet (-allownodefaults).
	FaultNode string
	// ShutNodeAccess, if set, removes the node pods the Env started and
	// starts no more (nodepod.Access.Shut): an interrupted run calls it
	// once it has restored what it changed through them.
	ShutNodeAccess func(context.Context) error
	// AllowClusterFaults, on a cluster reached through a kubeconfig, lets a
	// lab make a change every tenant feels (-allowclusterfaults).
	AllowClusterFaults bool

	// WorkloadImage is the labs' heartbeat image (cmd/heartbeat), loaded on every real node.
	WorkloadImage string

	Versions Versions
}

// Versions is recorded in every run's summary.
type Versions struct {
	Kind          string `json:"kind"`
	NodeImage     string `json:"node_image"`
	NodeImageFrom string `json:"node_image_source"` // "official" or "built"
	// NodeImageDigest and KwokImageDigest are the registry digests of the
	// official images the run used (none for an image built here): exactly
	// which image ran, whatever its tag names later.
	NodeImageDigest string `json:"node_image_digest,omitempty"`
	Kubernetes      string `json:"kubernetes_server"`
	Kwok            string `json:"kwok"`
	KwokImageDigest string `json:"kwok_image_digest,omitempty"`
	KwokStageSet    string `json:"kwok_stage_set"`
	Docker          string `json:"docker"`
}

// Worker returns the real worker node with the given Kubernetes node name, or nil.
func (e *Env) Worker(name string) Node {
	for _, n := range e.Workers {
		if n.String() == name {
			return n
		}
	}
	return nil
}
