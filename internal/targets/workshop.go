package targets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/internal/workshop"
	"github.com/termlab/termlab/labs"
)

// WorkshopRun is workshop:run (also `workshop`): every lab in order as a
// guided session; step and unattended choose whether it waits for Enter
// between labs (nil: TERMLAB_STEP, else whether stdin is a terminal).
func WorkshopRun(ctx context.Context, step, unattended *bool) error {
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

// WorkshopBundle is workshop:bundle: one archive with everything a session
// needs offline, written to out (nil: bin/termlab-workshop.tar.gz).
func WorkshopBundle(ctx context.Context, w io.Writer, out *string) error {
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
	fmt.Fprintf(w, "bundle %s: %s, %d files (%s before compression), made in %s\nsha256 %s (also in %s.sha256)\n",
		res.Archive, workshop.MiB(res.Size), len(res.Manifest.Files)+1, workshop.MiB(res.Manifest.TotalSize()), res.Took.Round(100e6), res.SHA256, filepath.Base(res.Archive))
	for _, p := range res.Phases {
		fmt.Fprintf(w, "  %-45s %s\n", p.Name, p.Took.Round(100e6))
	}
	return nil
}

// WorkshopLoad is workshop:load: verifies every digest of archive, then
// loads its images into Docker and unpacks it into ./termlab-workshop
// (TERMLAB_WORKSHOP_DIR to change). It needs no checkout.
func WorkshopLoad(ctx context.Context, w io.Writer, archive string) error {
	res, err := workshop.Load(ctx, archive, workshop.LoadOptions{Dest: os.Getenv("TERMLAB_WORKSHOP_DIR"), Log: progress.Default()})
	if err != nil {
		return err
	}
	// The next commands run the bundle's own binary, from its folder.
	next := invocation.Invocation{Kind: invocation.Workshop, Commands: map[string]bool{"cluster:up": true, "workshop": true}}
	fmt.Fprintf(w, "loaded in %s (verify %s, docker load and unpack %s); next:\n  cd %s && %s && %s\n",
		(res.Verify + res.Load).Round(100e6), res.Verify.Round(100e6), res.Load.Round(100e6), res.Dest, next.Command("cluster:up"), next.Command("workshop"))
	return nil
}

// WorkshopVerify is workshop:verify: checks every digest of archive without
// changing anything. It needs no checkout.
func WorkshopVerify(ctx context.Context, w io.Writer, archive string) error {
	m, err := workshop.Verify(ctx, progress.Default(), archive)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: intact, %d files, %s, made %s for %s\n", archive, len(m.Files)+1, workshop.MiB(m.TotalSize()), m.CreatedAt.Format("2006-01-02 15:04 UTC"), m.Platform)
	return nil
}

// WorkshopReset is workshop:reset: the cluster back to the start state.
func WorkshopReset(ctx context.Context) error {
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	_, err = workshop.Reset(ctx, progress.Default(), o)
	return err
}
