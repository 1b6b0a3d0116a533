//go:build mage

package main

import (
	"context"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs/finalizer"
	"github.com/termlab/termlab/labs/force"
	kwoklab "github.com/termlab/termlab/labs/kwok"
	"github.com/termlab/termlab/labs/orphan"
)

// Lab targets run the experiments (bringing the cluster up if needed) and write results/<lab>/<run-id>/; TERMLAB_KEEP=1 keeps the objects.
type Lab mg.Namespace

// Finalizer runs lab:finalizer: a finalizer nobody removes, on a real worker and on a kwok fake node.
func (Lab) Finalizer(ctx context.Context) error { return runLabs(ctx, finalizer.Definition) }

// Force runs lab:force: a force delete on a healthy worker, the container outliving its API object.
func (Lab) Force(ctx context.Context) error { return runLabs(ctx, force.Definition) }

// Orphan runs lab:orphan: the kubelet stopped on a real worker, then a force delete.
func (Lab) Orphan(ctx context.Context) error { return runLabs(ctx, orphan.Definition) }

// Kwok runs lab:kwok: the same deletions on a real worker and on kwok fake nodes under three stage sets, with a fidelity verdict.
func (Lab) Kwok(ctx context.Context) error { return runLabs(ctx, kwoklab.Definition) }

// All runs lab:finalizer, lab:force, lab:orphan and lab:kwok in order.
func (Lab) All(ctx context.Context) error {
	return runLabs(ctx, finalizer.Definition, force.Definition, orphan.Definition, kwoklab.Definition)
}

func runLabs(ctx context.Context, defs ...lab.Definition) error {
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	env, err := stack.Up(ctx, progress.Default(), o)
	if err != nil {
		return err
	}
	_, err = lab.ExecuteAll(ctx, env, lab.Options{Keep: os.Getenv("TERMLAB_KEEP") != ""}, defs...)
	if index, ierr := resultsindex.Write(project.ResultsDir()); ierr == nil {
		progress.Default().Infof("index of runs: %s", index)
	} else {
		progress.Default().Warnf("could not write the index of runs: %v", ierr)
	}
	return err
}
