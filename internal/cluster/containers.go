package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// kindRoleLabel is the label kind's docker provider keeps a node's role in.
const kindRoleLabel = "io.x-k8s.kind.role"

// nodeContainer is one kind node container as docker sees it.
type nodeContainer struct {
	node               nodes.Node
	role, state, image string
	// started is when docker last started the container: a dockerd
	// restart or a reboot starts kind's nodes again on its own.
	started time.Time
	// binds are the host paths bind-mounted into the node at
	// ownMountsDir (the kind config's extraMounts: the audit policy).
	binds []string
}

// inspectNodes asks docker once about every node container. kind's own
// helpers (nodeutils.ControlPlaneNodes, SelectNodesByRole) run one docker
// inspect per node per question, about 0.1 s each on a loaded 2-core
// machine, several times in every cluster:up.
func inspectNodes(ctx context.Context, ns []nodes.Node) ([]nodeContainer, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	args := []string{"inspect", "--format", `{{.Name}}|{{index .Config.Labels "` + kindRoleLabel + `"}}|{{.State.Status}}|{{.Config.Image}}|{{.State.StartedAt}}|{{json .Mounts}}`}
	for _, n := range ns {
		args = append(args, n.String())
	}
	lines, err := kindexec.OutputLines(kindexec.CommandContext(ctx, "docker", args...))
	if err != nil {
		return nil, fmt.Errorf("inspecting the node containers: %w", err)
	}
	return parseNodeContainers(ns, lines)
}

// parseNodeContainers pairs inspectNodes' lines (name|role|state|image|started|mounts as JSON) with the nodes.
func parseNodeContainers(ns []nodes.Node, lines []string) ([]nodeContainer, error) {
	byName := map[string]nodes.Node{}
	for _, n := range ns {
		byName[n.String()] = n
	}
	var out []nodeContainer
	for _, l := range lines {
		f := strings.SplitN(strings.TrimSpace(l), "|", 6)
		if len(f) != 6 {
			return nil, fmt.Errorf("unexpected docker inspect line %q (want name|role|state|image|started|mounts)", l)
		}
		var mounts []struct{ Type, Source, Destination string }
		if err := json.Unmarshal([]byte(f[5]), &mounts); err != nil {
			return nil, fmt.Errorf("docker inspect line %q: mounts: %w", l, err)
		}
		var binds []string
		for _, m := range mounts {
			if m.Type == "bind" && strings.HasPrefix(m.Destination, ownMountsDir) {
				binds = append(binds, m.Source)
			}
		}
		started, err := time.Parse(time.RFC3339Nano, f[4])
		if err != nil {
			return nil, fmt.Errorf("docker inspect line %q: start time: %w", l, err)
		}
		n, ok := byName[strings.TrimPrefix(f[0], "/")]
		if !ok {
			return nil, fmt.Errorf("docker inspect named %q, which is not a node of the cluster", f[0])
		}
		out = append(out, nodeContainer{node: n, role: f[1], state: f[2], image: f[3], started: started, binds: binds})
	}
	if len(out) != len(ns) {
		return nil, fmt.Errorf("docker inspect described %d of %d node containers", len(out), len(ns))
	}
	return out, nil
}

// splitRoles returns the (first) control-plane node and the workers, sorted by name.
func splitRoles(cs []nodeContainer) (nodes.Node, []nodes.Node, error) {
	var cp nodes.Node
	var workers []nodes.Node
	for _, c := range cs {
		switch c.role {
		case "control-plane":
			if cp == nil || c.node.String() < cp.String() {
				cp = c.node
			}
		case "worker":
			workers = append(workers, c.node)
		}
	}
	if cp == nil {
		return nil, nil, fmt.Errorf("no control-plane node among %d node containers", len(cs))
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].String() < workers[j].String() })
	return cp, workers, nil
}

// listNodes lists the cluster's node containers: its control plane and its workers.
func listNodes(ctx context.Context, p *kindcluster.Provider, name string) (nodes.Node, []nodes.Node, error) {
	ns, err := p.ListNodes(name)
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes of cluster %q: %w", name, err)
	}
	cs, err := inspectNodes(ctx, ns)
	if err != nil {
		return nil, nil, err
	}
	return splitRoles(cs)
}

// asNodes turns kind nodes into the Env's seam.
func asNodes(ns []nodes.Node) []Node {
	out := make([]Node, 0, len(ns))
	for _, n := range ns {
		out = append(out, n)
	}
	return out
}

// ownMountsDir is where termlab's kind config (manifests/kind/cluster.yaml)
// mounts files of the checkout into its nodes. Only those are looked at:
// kind's own (/lib/modules) may be a path of Docker Desktop's VM, not of
// the machine termlab runs on.
const ownMountsDir = "/etc/termlab/"

// goneBind is the first host path bind-mounted into a node that cannot
// serve it, and why: a cluster made from a checkout since removed (a CI
// clone) runs until its containers restart, then its API server cannot read
// the audit policy and never comes up. Docker makes a missing source anew as
// an empty directory when it starts the container, so an empty one is gone
// too.
func goneBind(cs []nodeContainer, why func(string) string) (nodes.Node, string, string) {
	for _, c := range cs {
		for _, b := range c.binds {
			if w := why(b); w != "" {
				return c.node, b, w
			}
		}
	}
	return nil, "", ""
}

// sourceGone says why a bind mount's host path cannot serve a node, or ""
// when it can.
func sourceGone(p string) string {
	entries, err := os.ReadDir(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "which no longer exists"
	case err == nil && len(entries) == 0:
		return "which is an empty directory (docker makes a missing source anew when it starts a node)"
	}
	return ""
}
