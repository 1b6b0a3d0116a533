package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/report"
)

// LoopOptions are Loop's inputs; Labs, Runs and Exec are required.
type LoopOptions struct {
	Labs []string
	Runs int
	// Exec runs the lab once, as lab:<name> does, and returns its summary
	// (nil when it left none) and error.
	Exec func(ctx context.Context, lab string) (*report.Summary, error)
	Log  *progress.Logger
	// Between is the pause after each run: another process waiting for the
	// cluster's run lock (it tries every 500 ms) gets its turn before the
	// next run takes the lock again.
	Between time.Duration
	// Done, if set, is called after each run with every run so far (the
	// target rewrites soak.md, so an interrupted soak keeps what it counted).
	Done func(runs []Run)
}

// Loop runs each lab Runs times, one run at a time, in rounds (every lab's
// run 1, then every lab's run 2…), so that a soak cut short has counted all
// its labs about equally. A failed run is counted and the loop goes on; it
// stops when ctx ends, the run in progress finishing (cleaning up) first.
// interrupted says why it stopped early ("" when it did not).
func Loop(ctx context.Context, o LoopOptions) (runs []Run, interrupted string) {
	if o.Log == nil {
		o.Log = progress.Default()
	}
	total := len(o.Labs) * o.Runs
	for i := 1; i <= o.Runs; i++ {
		for _, name := range o.Labs {
			if ctx.Err() != nil { // ended between two runs
				return runs, fmt.Sprintf("after %d of %d runs: %v", len(runs), total, context.Cause(ctx))
			}
			began := time.Now()
			s, err := o.Exec(ctx, name)
			run := Run{Lab: name, Summary: s}
			if err != nil {
				run.Err = err.Error()
			}
			runs = append(runs, run)
			o.Log.Infof("%s", progressLine(name, i, o.Runs, run, time.Since(began)))
			if o.Done != nil {
				o.Done(runs)
			}
			if ctx.Err() != nil {
				return runs, fmt.Sprintf("after %d of %d runs (the last one cut short): %v", len(runs), total, context.Cause(ctx))
			}
			if len(runs) < total && o.Between > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(o.Between):
				}
			}
		}
	}
	return runs, ""
}

// progressLine: "soak: lab:stuck run 3/20 (20261204-053926-3938): pass in 74 s (waited 40 s for the cluster)".
func progressLine(name string, i, n int, run Run, took time.Duration) string {
	s := run.Summary
	if s == nil {
		return fmt.Sprintf("soak: lab:%s run %d/%d: no summary after %.0f s — %s", name, i, n, took.Seconds(), shorten(run.Err, 300))
	}
	line := fmt.Sprintf("soak: lab:%s run %d/%d (%s): %s", name, i, n, s.RunID, s.Verdict)
	own := took
	if !s.StartedAt.IsZero() && s.FinishedAt.After(s.StartedAt) {
		own = s.FinishedAt.Sub(s.StartedAt)
	}
	line += fmt.Sprintf(" in %.0f s", own.Seconds())
	if wait := took - own; wait > 5*time.Second {
		line += fmt.Sprintf(" (waited %.0f s for the cluster)", wait.Seconds())
	}
	var failed []string
	for _, c := range s.Claims {
		if c.Verdict != claims.Pass && c.Verdict != claims.NotChecked {
			failed = append(failed, c.ID)
		}
	}
	if len(failed) > 0 {
		line += " — failed: " + strings.Join(failed, ", ")
	}
	if len(s.Errors) > 0 {
		line += " — " + shorten(strings.Join(s.Errors, "; "), 300)
	} else if run.Err != "" {
		line += " — " + shorten(run.Err, 300)
	}
	return line
}
