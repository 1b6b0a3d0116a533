package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
)

// completeWithin bounds the LIST a completion sends: a shell waits on it.
const completeWithin = 5 * time.Second

// completeTarget is diagnose's argument completion: pod/<name> and
// ns/<name> from the cluster kubectl's flags name (pods of -n, else the
// context's namespace); a bare word completes as a pod, as diagnose reads it.
func completeTarget(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, _, _ := flags.ToRawKubeConfigLoader().Namespace()
		ctx, cancel := context.WithTimeout(cmd.Context(), completeWithin)
		defer cancel()
		return targetsFor(ctx, client, ns, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// targetsFor lists what toComplete may become: "ns/…" namespaces, "pod/…"
// (and a bare word) pods of namespace; the two kind prefixes themselves
// while toComplete names no kind.
func targetsFor(ctx context.Context, client kubernetes.Interface, namespace, toComplete string) []string {
	kind, name, hasKind := strings.Cut(toComplete, "/")
	var out []string
	switch {
	case hasKind && namespaceNames[kind]:
		list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for _, n := range list.Items {
			if strings.HasPrefix(n.Name, name) {
				out = append(out, kind+"/"+n.Name)
			}
		}
	case hasKind && podNames[kind], !hasKind:
		if !hasKind {
			kind, name = "", toComplete
			for _, k := range []string{"pod/", "ns/"} {
				if strings.HasPrefix(k, toComplete) {
					out = append(out, k)
				}
			}
		}
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return out
		}
		for _, p := range list.Items {
			if !strings.HasPrefix(p.Name, name) {
				continue
			}
			if kind != "" {
				out = append(out, kind+"/"+p.Name)
			} else {
				out = append(out, p.Name)
			}
		}
	}
	return out
}
