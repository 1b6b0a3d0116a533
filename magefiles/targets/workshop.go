//go:build mage

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/targets"
	"github.com/termlab/termlab/internal/workshop"
)

// With TERMLAB_ROOT naming an unpacked bundle the targets run from it
// (manifests/, results/, kwok sources, images.json there), as the bundle's
// own binary (cmd/termlab, internal/cli) does.
func init() {
	if _, err := workshop.Activate(); err != nil {
		fmt.Fprintln(os.Stderr, "termlab:", err)
	}
}

// Aliases: `workshop` alone runs the guided session.
var Aliases = map[string]interface{}{"workshop": Workshop.Run}

// Workshop targets prepare and run workshop sessions (see WORKSHOP.md in a bundle).
type Workshop mg.Namespace

// Run runs every lab in order as a guided session (also `workshop`): explained, with commands to follow along, compared with the reference runs; it waits for Enter between labs on a terminal (-unattended or TERMLAB_STEP=0: never).
func (Workshop) Run(ctx context.Context, step, unattended *bool) error {
	return targets.WorkshopRun(ctx, step, unattended)
}

// Bundle writes one archive with everything a session needs offline: images, inputs, kwok sources, reference runs, a standalone binary, digests (-out=<file>, default bin/termlab-workshop.tar.gz).
func (Workshop) Bundle(ctx context.Context, out *string) error {
	return targets.WorkshopBundle(ctx, os.Stdout, out)
}

// Load verifies every digest of a bundle, then loads its images into Docker and unpacks it into ./termlab-workshop (TERMLAB_WORKSHOP_DIR to change); a damaged bundle changes nothing.
func (Workshop) Load(ctx context.Context, archive string) error {
	return targets.WorkshopLoad(ctx, os.Stdout, archive)
}

// Verify checks every digest of a bundle without changing anything.
func (Workshop) Verify(ctx context.Context, archive string) error {
	return targets.WorkshopVerify(ctx, os.Stdout, archive)
}

// Reset returns the cluster to the start state in seconds: kubelets running, leftovers of runs removed, run namespaces deleted; recreates only a broken cluster.
func (Workshop) Reset(ctx context.Context) error {
	return targets.WorkshopReset(ctx)
}
