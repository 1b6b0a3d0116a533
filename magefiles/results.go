//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/compare"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/labs"
)

// Results targets read the run folders under results/.
type Results mg.Namespace

// Compare says whether runs match, normalised (claims, verdicts, transition sequences; timings within tolerance): by default each lab's latest run against results/reference/<lab>; -run=<run> [-against=<run>].
func (Results) Compare(ctx context.Context, run, against *string) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	pairs, missing, err := compare.Pairs(results, deref(run), deref(against))
	if err != nil {
		return err
	}
	for _, l := range missing {
		fmt.Printf("lab:%s has a reference run but no run yet (run it: lab:%s)\n\n", l, l)
	}
	rs, err := compare.Compare(os.Stdout, pairs)
	if err != nil {
		return err
	}
	if run == nil && against == nil {
		for _, l := range compare.Unreferenced(results) {
			fmt.Printf("lab:%s has runs but no reference run (make one: results:reference -run=%s)\n", l, l)
		}
	}
	fmt.Println(compare.Summary(rs))
	for _, r := range rs {
		if !r.Matches() {
			return fmt.Errorf("%s", compare.Summary(rs))
		}
	}
	return nil
}

// Index regenerates results/index.md and index.html: every run with lab, time, versions and verdict, linked to its report (index.html: with its timeline).
func (Results) Index() error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	p, err := resultsindex.Write(results)
	if err == nil {
		fmt.Println(p)
		fmt.Println(filepath.Join(results, resultsindex.HTMLFile))
	}
	return err
}

// Reference makes a passing run its lab's reference run, results/reference/<lab> (to be committed): -run=<run>, default each lab's latest.
func (Results) Reference(run *string) error {
	results, err := resultsDir()
	if err != nil {
		return err
	}
	return compare.Promote(os.Stdout, results, deref(run))
}

// Render writes a run's reports again with the current code from its record (claims decided anew): -run=<run>, default every reference run.
func (Results) Render(run *string) error {
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
		fmt.Println(d)
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// resultsDir is results/ of the repository (or bundle) the target runs in.
func resultsDir() (string, error) {
	root, err := project.Root()
	return project.ResultsDir(root), err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
