//go:build mage

package main

import (
	"context"
	"os"

	"github.com/termlab/termlab/internal/targets"
)

// Soak runs labs again and again on termlab's cluster and writes results/soak/<time>/soak.md: per claim its verdict counts and the spread (min, p50, p95, max) of each timing; -labs=finalizer,force (default every lab but scale) -runs=20 [-by=script]; -from=results/stuck,<glob> counts existing run folders instead.
//
// The runs are lab.Execute, as lab:<name> runs them, one at a time in
// rounds (every lab's run 1, then run 2…); a failed run is counted and the
// soak goes on. Each run takes the cluster's run lock for itself, so another
// termlab on the cluster gets its turn in between. Ctrl-C ends it: the run
// in progress cleans up, and soak.md (rewritten after every run) keeps the
// runs before. The body is in internal/targets.
func Soak(ctx context.Context, labs, from, by *string, runs *int) error {
	return targets.Soak(ctx, os.Stdout, targets.SoakFlags{Labs: labs, Runs: runs, From: from, By: by})
}
