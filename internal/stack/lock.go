package stack

import (
	"context"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/runlock"
)

// Lock takes both run locks of the kind cluster co names: this machine's
// flock (creating, recreating or deleting it is this machine's business)
// and, when the cluster exists and answers, the run lock in the cluster (a
// Lease), which termlabs elsewhere (-kubeconfig) take too. what names the
// holder for those who wait. release gives back both.
func Lock(ctx context.Context, log *progress.Logger, co cluster.Options, what string, noWait bool) (release func(), err error) {
	releaseLocal, err := runlock.Acquire(ctx, log, co.Name)
	if err != nil {
		return nil, err
	}
	cfg := cluster.AnsweringConfig(ctx, co.Name, co.KubeconfigPath)
	if cfg == nil {
		return releaseLocal, nil // nothing to lock in: no cluster, or none that answers yet
	}
	lease, err := runlock.Take(ctx, log, cfg, runlock.Identity(what), noWait)
	if err != nil {
		releaseLocal()
		return nil, err
	}
	return func() { lease.Release(); releaseLocal() }, nil
}
