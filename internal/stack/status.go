package stack

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
)

// PrintStatus shows the cluster's health, nodes, kwok and versions.
func PrintStatus(ctx context.Context, log *progress.Logger, w io.Writer) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	co := ClusterOptions(root)
	h := cluster.Check(ctx, log, co)
	if !h.Exists {
		fmt.Fprintf(w, "cluster %q does not exist: run `%s`\n", co.Name, invocation.Command("cluster:up"))
		return nil
	}
	if !h.Healthy {
		fmt.Fprintf(w, "cluster %q is NOT healthy: %s\nrun `%s` to repair it\n", co.Name, h.Problem, invocation.Command("cluster:up"))
		return fmt.Errorf("cluster %q is not healthy", co.Name)
	}
	env, err := Connect(ctx, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cluster:    %s (kubeconfig %s)\n", env.Name, env.KubeconfigPath)
	v := env.Versions
	fmt.Fprintf(w, "kubernetes: %s\nnode image: %s (%s)\nkind:       v%s\ndocker:     %s\nkwok:       %s, fake nodes use stage set %q\n",
		v.Kubernetes, v.NodeImage, v.NodeImageFrom, v.Kind, v.Docker, v.Kwok, v.KwokStageSet)
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tREADY\tKUBELET\tINTERNAL-IP")
	for i := range list.Items {
		n := &list.Items[i]
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", n.Name, nodeKind(n), cluster.NodeReady(n), n.Status.NodeInfo.KubeletVersion, internalIP(n))
	}
	return tw.Flush()
}

func nodeKind(n *corev1.Node) string {
	if kwok.IsFake(n) {
		return "kwok (fake)"
	}
	if hasControlPlaneRole(n) {
		return "control-plane"
	}
	return "worker"
}

func internalIP(n *corev1.Node) string {
	var ips []string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ips = append(ips, a.Address)
		}
	}
	return strings.Join(ips, ",")
}
