package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/soak"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
)

// SoakFlags are the soak target's flags; nil is "not given".
type SoakFlags struct {
	// Labs (-labs=finalizer,force) are the labs to run or count; default
	// every lab of the registry but lab:scale.
	Labs *string
	// Runs (-runs=N) is how often each lab runs; default DefaultSoakRuns.
	Runs *int
	// From (-from=<folder or glob>,...) counts run folders that exist
	// instead of running anything.
	From *string
	// By (-by=termlab|script) says who does the labs' actions.
	By *string
}

// DefaultSoakRuns is how often soak runs each lab without -runs.
const DefaultSoakRuns = 20

// soakPause is the pause after each run: another process waiting for the
// cluster's run lock (internal/flock tries every 500 ms) takes it first.
const soakPause = 2 * time.Second

// Soak is soak: each lab run -runs times on termlab's cluster, or the run
// folders -from names counted, into results/soak/<time>/soak.md and
// soak.json. It returns an error when a run did not pass (the table says
// which claims, in which runs).
func Soak(ctx context.Context, w io.Writer, f SoakFlags) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	started := time.Now().UTC()
	outDir := filepath.Join(project.ResultsDir(root), "soak", started.Format("20060102T150405Z"))
	if from := deref(f.From); from != "" {
		if f.Runs != nil || f.By != nil {
			return errors.New("soak: -from counts runs that exist; -runs and -by do not apply")
		}
		return soakFrom(w, from, deref(f.Labs), outDir)
	}
	defs, err := soakLabs(deref(f.Labs))
	if err != nil {
		return err
	}
	n := DefaultSoakRuns
	if f.Runs != nil {
		n = *f.Runs
	}
	if n < 1 {
		return fmt.Errorf("soak: -runs=%d: at least 1", n)
	}
	by, err := lab.ParseBy(deref(f.By))
	if err != nil {
		return err
	}
	if by == lab.ByYou {
		return errors.New("soak: -by=you would ask you for every action of every run; use -by=script or -by=termlab")
	}
	// Ctrl-C (or SIGTERM) ends the soak: the run in progress cleans up as
	// lab:<name> does, and soak.md keeps every run finished before.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	log := progress.Default()
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	// cluster:up's repair and health check under the run lock; then each run
	// takes the lock for itself (lab.Execute), so that another termlab on
	// this cluster runs between two soak runs instead of waiting for all.
	release, err := runlock.Acquire(ctx, log, cluster.DefaultName)
	if err != nil {
		return err
	}
	env, err := stack.Up(ctx, log, o)
	release()
	if err != nil {
		return err
	}
	byName := map[string]lab.Definition{}
	var names []string
	for _, d := range defs {
		byName[d.Name] = d
		names = append(names, d.Name)
	}
	cmdline := fmt.Sprintf("go tool mage soak -labs=%s -runs=%d", strings.Join(names, ","), n)
	if by != lab.ByTermlab {
		cmdline += " -by=" + by
	}
	source := fmt.Sprintf("Run by `%s` on cluster %s, one run at a time in rounds", cmdline, env.Name)
	log.Infof("soak: %d runs each of %s, in rounds; results in %s", n, "lab:"+strings.Join(names, ", lab:"), outDir)
	write := func(runs []soak.Run, interrupted string) soak.Report {
		r := soak.Build(runs)
		r.Source, r.Started, r.Finished, r.Interrupted = source, started, time.Now().UTC(), interrupted
		if err := r.Write(outDir); err != nil {
			log.Warnf("writing %s: %v", outDir, err)
		}
		return r
	}
	runs, interrupted := soak.Loop(ctx, soak.LoopOptions{
		Labs: names, Runs: n, Log: log, Between: soakPause,
		Exec: func(ctx context.Context, name string) (*report.Summary, error) {
			s, err := lab.Execute(ctx, env, byName[name], lab.Options{By: by, Log: log})
			// Counted from the summary.json the run wrote, as -from counts it.
			if s != nil {
				if written, rerr := report.ReadSummary(s.Dir); rerr == nil {
					s = written
				}
			}
			return s, err
		},
		Done: func(runs []soak.Run) { write(runs, "") },
	})
	r := write(runs, interrupted)
	if index, ierr := resultsindex.Write(project.ResultsDir(o.Root)); ierr == nil {
		log.Infof("index of runs: %s", index)
	} else {
		log.Warnf("could not write the index of runs: %v", ierr)
	}
	return soakResult(w, r, outDir)
}

// soakFrom counts the run folders the patterns name.
func soakFrom(w io.Writer, from, labList, outDir string) error {
	dirs, err := soak.Find(strings.Split(from, ","))
	if err != nil {
		return err
	}
	var only []string
	if labList != "" {
		for _, n := range strings.Split(labList, ",") {
			only = append(only, strings.TrimPrefix(strings.TrimSpace(n), "lab:"))
		}
	}
	runs, skipped := soak.Read(dirs, only...)
	r := soak.Build(runs)
	r.Source = fmt.Sprintf("Counted from %d run folder(s) under `-from=%s`", len(runs), from)
	if labList != "" {
		r.Source += " `-labs=" + labList + "`"
	}
	r.Skipped = skipped
	for _, run := range runs { // the span of the runs counted
		if s := run.Summary; s != nil {
			if r.Started.IsZero() || s.StartedAt.Before(r.Started) {
				r.Started = s.StartedAt
			}
			if s.FinishedAt.After(r.Finished) {
				r.Finished = s.FinishedAt
			}
		}
	}
	if err := r.Write(outDir); err != nil {
		return err
	}
	return soakResult(w, r, outDir)
}

// soakResult prints each lab's answer and where the table is.
func soakResult(w io.Writer, r soak.Report, outDir string) error {
	for _, l := range r.Labs {
		fmt.Fprintln(w, l.Answer())
	}
	path := filepath.Join(outDir, soak.MarkdownFile)
	fmt.Fprintf(w, "soak: %s\n", path)
	switch {
	case len(r.Labs) == 0:
		return fmt.Errorf("soak: no runs counted (%s)", path)
	case r.Interrupted != "":
		return fmt.Errorf("soak: interrupted %s (%s)", r.Interrupted, path)
	case !r.AllPass():
		return fmt.Errorf("soak: not every run passed, see %s", path)
	}
	return nil
}

// soakLabs picks labs from the registry by name, in the list's order; ""
// is every lab but lab:scale (its registry size is a load test, not a
// behaviour to repeat).
func soakLabs(list string) ([]lab.Definition, error) {
	if strings.TrimSpace(list) == "" {
		var out []lab.Definition
		for _, d := range labs.All {
			if d.Name != "scale" {
				out = append(out, d)
			}
		}
		return out, nil
	}
	ds, err := lab.Select(labs.All, list)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	return ds, nil
}
