//go:build mage

package main

import (
	"context"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/targets"
)

// Results targets read the run folders under results/.
type Results mg.Namespace

// Compare says whether runs match, normalised (claims, verdicts, transition sequences; timings within tolerance): by default each lab's latest run against results/reference/<lab>; -run=<run> [-against=<run>].
func (Results) Compare(ctx context.Context, run, against *string) error {
	return targets.ResultsCompare(ctx, os.Stdout, run, against)
}

// Index regenerates results/index.md and index.html: every run with lab, time, versions and verdict, linked to its report (index.html: with its timeline).
func (Results) Index() error { return targets.ResultsIndex(os.Stdout) }

// Reference makes a passing run its lab's reference run, results/reference/<lab> (to be committed): -run=<run>, default each lab's latest.
func (Results) Reference(run *string) error { return targets.ResultsReference(os.Stdout, run) }

// Render writes a run's reports again with the current code from its record (claims decided anew): -run=<run>, default every reference run.
func (Results) Render(run *string) error { return targets.ResultsRender(os.Stdout, run) }
