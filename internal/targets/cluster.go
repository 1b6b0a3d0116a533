package targets

import (
	"context"
	"errors"
	"io"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// ClusterUp is cluster:up: creates the cluster (1 control plane, 2 workers, kwok fake nodes) or reuses a healthy one.
func ClusterUp(ctx context.Context) error {
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	_, err = stack.Up(ctx, progress.Default(), o)
	return err
}

// ClusterDown is cluster:down: deletes the cluster and its project-local
// kubeconfig, and the one lab:scale -limits=raised made, if there is one.
func ClusterDown(ctx context.Context) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	log := progress.Default()
	err = cluster.Down(ctx, log, stack.ClusterOptions(root))
	if raised := stack.ClusterOptionsFor(root, cluster.LimitsRaised); cluster.Exists(log, raised.Name) {
		err = errors.Join(err, cluster.Down(ctx, log, raised))
	}
	return err
}

// ClusterStatus is cluster:status: the nodes, kwok and versions of the running cluster.
func ClusterStatus(ctx context.Context, w io.Writer) error {
	return stack.PrintStatus(ctx, progress.Default(), w)
}
