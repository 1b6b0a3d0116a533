//go:build mage

// termlab's targets. Each one parses its inputs and makes one call into a
// package under internal/; run `go tool mage -l` to list them.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/doctor"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/measure"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/internal/targets"
)

// Default is what `go tool mage` alone runs: every lab on a cluster it
// brings up. (mage cannot make a target with flags the default, so it is
// lab:all's flagless twin.)
var Default = Labs

// Hints name commands as `go tool mage …` (internal/invocation's default, said here once).
func init() { invocation.Set(invocation.Invocation{Kind: invocation.Mage}) }

// Labs runs every lab on termlab's cluster, bringing it up if needed: what `go tool mage` alone runs; lab:all takes flags.
func Labs(ctx context.Context) error { return targets.LabAll(ctx, targets.LabFlags{}) }

// Cluster targets manage the kind + kwok cluster.
type Cluster mg.Namespace

// Up creates the cluster (1 control plane, 2 workers, kwok fake nodes) or reuses a healthy one.
func (Cluster) Up(ctx context.Context) error { return targets.ClusterUp(ctx) }

// Down deletes the cluster and its project-local kubeconfig.
func (Cluster) Down(ctx context.Context) error { return targets.ClusterDown(ctx) }

// Status shows the nodes, kwok and versions of the running cluster.
func (Cluster) Status(ctx context.Context) error { return targets.ClusterStatus(ctx, os.Stdout) }

// Images targets build or fetch the images the cluster needs.
type Images mg.Namespace

// All resolves every image (node, kwok, workload) from TERMLAB_IMAGES=auto|official|build.
func (Images) All(ctx context.Context) error {
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	set, _, err := stack.Images(ctx, progress.Default(), o.Root, o.Images)
	if err == nil {
		fmt.Printf("node:     %s (%s)\nkwok:     %s (%s)\nworkload: %s\n", set.Node, set.NodeFrom, set.Kwok, set.KwokFrom, set.Workload)
	}
	return err
}

// Node builds the node image locally from the Go module proxy and Debian packages (cached by inputs).
func (Images) Node(ctx context.Context) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	ref, err := stack.BuildNodeImage(ctx, progress.Default(), root)
	if err == nil {
		fmt.Println(ref)
	}
	return err
}

// Doctor checks this machine for everything the cluster needs and says how to fix what is missing.
func Doctor(ctx context.Context) error {
	return doctor.Run(ctx, os.Stdout)
}

// Measure prints cluster:up with cached images vs a bare kind create (rounds of both, the median ratio), the reuse time, and cold/warm build times, on throw-away clusters (termlab is not touched). Flag -rounds (default 3, about a minute each).
func Measure(ctx context.Context, rounds *int) error {
	n := 3
	if rounds != nil {
		n = *rounds
	}
	_, err := measure.Run(ctx, progress.Default(), os.Stdout, n)
	return err
}
