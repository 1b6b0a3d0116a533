//go:build mage

package main

import (
	"context"
	"os"

	"github.com/termlab/termlab/internal/targets"
)

// Diagnose says, read-only, why a pod or namespace is still there: -pod=<ns>/<name> or -namespace=<ns> [-kubeconfig=<path>] [-nodeaccess] [-allnodes] [-watch]; writes results/diagnose/.
//
// Without -kubeconfig it reads termlab's cluster and checks the node
// through kind (docker exec) unless -nodeaccess=false. With -kubeconfig it
// needs nothing but that file: node checks then say "not checked" unless
// -nodeaccess, which starts a short-lived privileged pod on each node it
// asks (removed before it returns). (mage names a flag after the Go
// parameter, lowercased: hence -nodeaccess.) -allnodes searches every node
// for a gone pod whose node no event names; -watch looks again every 5 s
// after the diagnosis and says what changed, until it is gone (10 min at most). The same runs anywhere as
// `kubectl termlab diagnose` (cmd/termlab), with its exit codes: 0 nothing
// holds it, 1 held (cause found), 2 could not decide.
func Diagnose(ctx context.Context, pod, namespace, kubeconfig *string, nodeAccess, allNodes, watch *bool) error {
	return targets.DiagnoseMage(ctx, os.Stdout, pod, namespace, kubeconfig, nodeAccess, allNodes, watch)
}
