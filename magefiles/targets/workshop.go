//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/internal/workshop"
	"github.com/termlab/termlab/labs"
)

// A standalone binary made by workshop:bundle finds its unpacked bundle
// (manifests/, results/, kwok sources, images.json) beside itself.
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
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	env, err := stack.Up(ctx, progress.Default(), o)
	if err != nil {
		return err
	}
	_, err = workshop.Session(ctx, env, labs.All, workshop.SessionOptions{
		Root: o.Root,
		Step: workshop.StepMode(step, unattended),
		Lab:  lab.Options{Keep: os.Getenv("TERMLAB_KEEP") != ""},
	})
	return err
}

// Bundle writes one archive with everything a session needs offline: images, inputs, kwok sources, reference runs, a standalone binary, digests (-out=<file>, default bin/termlab-workshop.tar.gz).
func (Workshop) Bundle(ctx context.Context, out *string) error {
	so, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	o := workshop.BundleOptions{Root: so.Root, Images: so.Images, Log: progress.Default(), Labs: labs.All}
	if out != nil {
		o.Out = *out
	}
	res, err := workshop.Bundle(ctx, o)
	if err != nil {
		return err
	}
	fmt.Printf("bundle %s: %s, %d files (%s before compression), made in %s\nsha256 %s (also in %s.sha256)\n",
		res.Archive, workshop.MiB(res.Size), len(res.Manifest.Files)+1, workshop.MiB(res.Manifest.TotalSize()), res.Took.Round(100e6), res.SHA256, filepath.Base(res.Archive))
	for _, p := range res.Phases {
		fmt.Printf("  %-45s %s\n", p.Name, p.Took.Round(100e6))
	}
	return nil
}

// Load verifies every digest of a bundle, then loads its images into Docker and unpacks it into ./termlab-workshop (TERMLAB_WORKSHOP_DIR to change); a damaged bundle changes nothing.
func (Workshop) Load(ctx context.Context, archive string) error {
	res, err := workshop.Load(ctx, archive, workshop.LoadOptions{Dest: os.Getenv("TERMLAB_WORKSHOP_DIR"), Log: progress.Default()})
	if err != nil {
		return err
	}
	fmt.Printf("loaded in %s (verify %s, docker load and unpack %s); next:\n  cd %s && ./termlab cluster:up && ./termlab workshop\n",
		(res.Verify + res.Load).Round(100e6), res.Verify.Round(100e6), res.Load.Round(100e6), res.Dest)
	return nil
}

// Verify checks every digest of a bundle without changing anything.
func (Workshop) Verify(ctx context.Context, archive string) error {
	m, err := workshop.Verify(ctx, progress.Default(), archive)
	if err != nil {
		return err
	}
	fmt.Printf("%s: intact, %d files, %s, made %s for %s\n", archive, len(m.Files)+1, workshop.MiB(m.TotalSize()), m.CreatedAt.Format("2006-01-02 15:04 UTC"), m.Platform)
	return nil
}

// Reset returns the cluster to the start state in seconds: kubelets running, leftovers of runs removed, run namespaces deleted; recreates only a broken cluster.
func (Workshop) Reset(ctx context.Context) error {
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	_, err = workshop.Reset(ctx, progress.Default(), o)
	return err
}
