package targets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/termlab/termlab/internal/compare"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/labs"
)

// ResultsCompare is results:compare: whether runs match, normalised; by
// default each lab's latest run against results/reference/<lab>; run and
// against pick two runs. An error when any pair does not match.
func ResultsCompare(_ context.Context, w io.Writer, run, against *string) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	pairs, missing, err := compare.Pairs(results, deref(run), deref(against))
	if err != nil {
		return err
	}
	for _, l := range missing {
		fmt.Fprintf(w, "lab:%s has a reference run but no run yet (run it: lab:%s)\n\n", l, l)
	}
	rs, err := compare.Compare(w, pairs)
	if err != nil {
		return err
	}
	if run == nil && against == nil {
		for _, l := range compare.Unreferenced(results) {
			fmt.Fprintf(w, "lab:%s has runs but no reference run (make one: results:reference -run=%s)\n", l, l)
		}
	}
	fmt.Fprintln(w, compare.Summary(rs))
	for _, r := range rs {
		if !r.Matches() {
			return fmt.Errorf("%s", compare.Summary(rs))
		}
	}
	return nil
}

// ResultsIndex is results:index: regenerates results/index.md and index.html.
func ResultsIndex(w io.Writer) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	p, err := resultsindex.Write(results)
	if err == nil {
		fmt.Fprintln(w, p)
		fmt.Fprintln(w, filepath.Join(results, resultsindex.HTMLFile))
	}
	return err
}

// ResultsReference is results:reference: makes a passing run its lab's reference run (default each lab's latest).
func ResultsReference(w io.Writer, run *string) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	return compare.Promote(w, results, deref(run))
}

// ResultsRender is results:render: writes a run's reports again with the
// current code from its record (default every reference run).
func ResultsRender(w io.Writer, run *string) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	var dirs []string
	if r := deref(run); r != "" {
		d, err := compare.Resolve(results, r)
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
	} else {
		for _, def := range labs.All {
			if d := compare.ReferenceDir(results, def.Name); fileExists(d) {
				dirs = append(dirs, d)
			}
		}
	}
	for _, d := range dirs {
		if err := labs.Rerender(d); err != nil {
			return err
		}
		fmt.Fprintln(w, d)
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// resultsDir is results/ of the repository (or bundle) the command runs in.
func resultsDir() (string, error) {
	root, err := project.Root()
	return project.ResultsDir(root), err
}
