//go:build mage

package main

import (
	"context"

	"github.com/termlab/termlab/internal/matrix"
	"github.com/termlab/termlab/internal/progress"
	labregistry "github.com/termlab/termlab/labs"
)

// Matrix runs labs on one kind cluster per Kubernetes release and writes results/matrix/<time>/matrix.md: -k8s=v1.37.2,v1.36.3 [-labs=force,finalizer] [-keep].
//
// A release may be given as v1.36.x: the newest patch the Go module proxy serves.
// Each release gets its own cluster (termlab-v1-36-3, kubeconfig
// .termlab/kubeconfig-termlab-v1-36-3) from kindest/node:<release> where a
// registry answers, else a node image built offline from the Go module proxy
// and cached by release; the shared cluster "termlab" is never touched. The
// clusters are deleted afterwards unless -keep. A measurement, not part of
// `go tool mage test`.
func Matrix(ctx context.Context, k8s, labs *string, keep *bool) error {
	list := ""
	if k8s != nil {
		list = *k8s
	}
	versions, err := matrix.Versions(ctx, list)
	if err != nil {
		return err
	}
	sel := ""
	if labs != nil {
		sel = *labs
	}
	defs, err := matrix.SelectLabs(labregistry.All, sel)
	if err != nil {
		return err
	}
	_, _, err = matrix.Run(ctx, matrix.Options{
		Versions: versions, Labs: defs, Keep: keep != nil && *keep, Log: progress.Default(),
	})
	return err
}
