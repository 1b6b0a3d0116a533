package stack

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/runlock"
)

// Locks are the run locks of one kind cluster that Lock took.
type Locks struct {
	releaseLocal func()
	lease        *runlock.Lock // nil while the cluster has not answered
	what         string
	noWait       bool
}

// Lock takes both run locks of the kind cluster co names: this machine's
// flock (creating, recreating or deleting it is this machine's business)
// and, when the cluster exists and answers, the run lock in the cluster (a
// Lease), which termlabs elsewhere (-kubeconfig) take too. what names the
// holder for those who wait. Release gives back both.
func Lock(ctx context.Context, log *progress.Logger, co cluster.Options, what string, noWait bool) (*Locks, error) {
	releaseLocal, err := runlock.Acquire(ctx, log, co.Name)
	if err != nil {
		return nil, err
	}
	l := &Locks{releaseLocal: releaseLocal, what: what, noWait: noWait}
	// Quick on a healthy cluster or none; node containers docker just
	// started again can keep it waiting for its timeouts (11 s seen here).
	stop := log.Ticker(fmt.Sprintf("asking whether cluster %q answers, to take its run lock", co.Name), 3*time.Second)
	cfg := cluster.AnsweringConfig(ctx, co.Name, co.KubeconfigPath)
	stop()
	if cfg != nil {
		if err := l.InCluster(ctx, log, cfg); err != nil {
			releaseLocal()
			return nil, err
		}
	}
	return l, nil // else nothing to lock in yet: no cluster, or none that answers
}

// InCluster takes the cluster's run lock if Lock could not (the cluster did
// not answer then: its engine or nodes were starting): anything done to a
// run's objects in the cluster is done under it.
func (l *Locks) InCluster(ctx context.Context, log *progress.Logger, cfg *rest.Config) error {
	if l.lease != nil {
		return nil
	}
	lease, err := runlock.Take(ctx, log, cfg, runlock.Identity(l.what), l.noWait)
	if err != nil {
		return err
	}
	l.lease = lease
	return nil
}

// Release gives back the locks taken, the cluster's first.
func (l *Locks) Release() {
	if l.lease != nil {
		l.lease.Release()
	}
	l.releaseLocal()
}
