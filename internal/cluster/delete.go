package cluster

import (
	"context"
	"fmt"
	"strings"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/frozen"
	"github.com/termlab/termlab/internal/progress"
)

// Delete deletes a kind cluster. When Docker cannot remove a node because a
// runc killed mid-start left a cgroup frozen inside it (internal/frozen:
// the node then never dies and stays behind), it thaws those cgroups and
// deletes once more; the error says what was left if that fails too.
func Delete(ctx context.Context, log *progress.Logger, p *kindcluster.Provider, name, kubeconfig string) error {
	err := p.Delete(name, kubeconfig)
	if err == nil {
		return nil
	}
	thawed, thawErr := thawNodes(ctx, p, name)
	if len(thawed) == 0 {
		if thawErr != nil {
			return fmt.Errorf("deleting cluster %q: %w (and looking for frozen cgroups in its nodes: %v)", name, err, thawErr)
		}
		return fmt.Errorf("deleting cluster %q: %w", name, err)
	}
	log.Infof("deleting cluster %q failed (%v): a node held %d cgroup(s) left frozen by a runc killed mid-start (%s); thawed them, deleting again", name, err, len(thawed), strings.Join(thawed, ", "))
	if err := p.Delete(name, kubeconfig); err != nil {
		left, _ := p.ListNodes(name)
		return fmt.Errorf("deleting cluster %q after thawing %d frozen cgroup(s) in its nodes: %w; still there: %v (docker rm -f them)", name, len(thawed), err, left)
	}
	return nil
}

// thawNodes thaws the frozen cgroups under the cluster's remaining node
// containers on this host (none on an engine in a VM, as Docker Desktop's:
// its cgroups are not here).
func thawNodes(ctx context.Context, p *kindcluster.Provider, name string) ([]string, error) {
	left, err := p.ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of cluster %q: %w", name, err)
	}
	var thawed []string
	for _, n := range left {
		out, err := kindexec.Output(kindexec.CommandContext(ctx, "docker", "inspect", "-f", "{{.Id}}", n.String()))
		if err != nil {
			return thawed, fmt.Errorf("reading the container ID of node %s: %w", n, err)
		}
		t, err := frozen.Thaw(frozen.Roots(frozen.CgroupRoot, strings.TrimSpace(string(out)))...)
		thawed = append(thawed, t...)
		if err != nil {
			return thawed, fmt.Errorf("node %s: %w", n, err)
		}
	}
	return thawed, nil
}
