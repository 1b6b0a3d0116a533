package compare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/termlab/termlab/internal/report"
)

// ReferenceDirName is the folder of results/ that holds the committed
// reference runs: results/reference/<lab>/ is a run folder.
const ReferenceDirName = "reference"

// ReferenceDir is the reference run of lab.
func ReferenceDir(resultsDir, lab string) string {
	return filepath.Join(resultsDir, ReferenceDirName, lab)
}

// Resolve turns a run as a user names it into a run folder: a path to a
// folder with summary.json, or relative to resultsDir "<lab>" (its latest
// run), "<lab>/<run-id>", "<lab>/latest" or "reference/<lab>".
func Resolve(resultsDir, arg string) (string, error) {
	if arg == "" {
		return "", errors.New("no run given")
	}
	candidates := []string{arg, filepath.Join(resultsDir, arg), filepath.Join(resultsDir, arg, "latest")}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, report.SummaryFile)); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("no run folder %q: give a folder with %s, or <lab>, <lab>/<run-id> or reference/<lab> under %s", arg, report.SummaryFile, resultsDir)
}

// Pair is one run and what it is compared against.
type Pair struct{ Run, Reference string }

// DefaultPairs is the latest run of every lab that has a reference, against
// that reference. Labs with a reference but no run yet are returned in missing.
func DefaultPairs(resultsDir string) (pairs []Pair, missing []string, err error) {
	refs, err := os.ReadDir(filepath.Join(resultsDir, ReferenceDirName))
	if err != nil {
		return nil, nil, fmt.Errorf("no reference runs: %w", err)
	}
	for _, e := range refs {
		if !e.IsDir() {
			continue
		}
		ref := ReferenceDir(resultsDir, e.Name())
		if _, err := os.Stat(filepath.Join(ref, report.SummaryFile)); err != nil {
			continue
		}
		latest := filepath.Join(resultsDir, e.Name(), "latest")
		if _, err := os.Stat(filepath.Join(latest, report.SummaryFile)); err != nil {
			missing = append(missing, e.Name())
			continue
		}
		pairs = append(pairs, Pair{Run: latest, Reference: ref})
	}
	if len(pairs) == 0 && len(missing) == 0 {
		return nil, nil, fmt.Errorf("no reference runs under %s", filepath.Join(resultsDir, ReferenceDirName))
	}
	return pairs, missing, nil
}

// Unreferenced lists the labs that have runs but no reference run.
func Unreferenced(resultsDir string) []string {
	var out []string
	labs, _ := os.ReadDir(resultsDir)
	for _, l := range labs {
		if !l.IsDir() || l.Name() == ReferenceDirName {
			continue
		}
		if _, err := os.Stat(filepath.Join(resultsDir, l.Name(), "latest", report.SummaryFile)); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(ReferenceDir(resultsDir, l.Name()), report.SummaryFile)); err != nil {
			out = append(out, l.Name())
		}
	}
	return out
}

// Pairs picks what to compare from up to two user arguments: none (every
// lab's latest against its reference), a run (against its lab's reference),
// or two runs.
func Pairs(resultsDir, run, against string) ([]Pair, []string, error) {
	if run == "" && against == "" {
		return DefaultPairs(resultsDir)
	}
	if run == "" {
		return nil, nil, errors.New("give the run to compare before the one to compare it against")
	}
	a, err := Resolve(resultsDir, run)
	if err != nil {
		return nil, nil, err
	}
	if against == "" {
		s, err := report.ReadSummary(a)
		if err != nil {
			return nil, nil, err
		}
		against = ReferenceDir(resultsDir, s.Lab)
	}
	b, err := Resolve(resultsDir, against)
	if err != nil {
		return nil, nil, err
	}
	return []Pair{{Run: a, Reference: b}}, nil, nil
}

// Compare loads and compares each pair, writes the outcome to w and
// returns the results. err is for runs that could not be read.
func Compare(w io.Writer, pairs []Pair) ([]*Result, error) {
	var out []*Result
	var errs []error
	for _, p := range pairs {
		run, err := Load(p.Run)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ref, err := Load(p.Reference)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r := Runs(run, ref)
		r.Write(w)
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// Write prints the result for a person: "matches the reference" with what
// was compared and the notes, or every difference.
func (r *Result) Write(w io.Writer) {
	fmt.Fprintf(w, "lab:%s  %s\n      vs  %s\n", r.Lab, r.Run, r.Reference)
	what := fmt.Sprintf("%d claims and their verdicts, %d pods' transition sequences, %d timings within the tolerance their claims state (%d more reported only)", r.Claims, r.Pods, r.Timings, r.Reported)
	if r.Matches() {
		fmt.Fprintf(w, "  matches the reference: %s\n", what)
	} else {
		fmt.Fprintf(w, "  DIFFERS from the reference in %d ways (compared %s):\n", len(r.Differences), what)
		for _, d := range r.Differences {
			fmt.Fprintf(w, "    - %s\n", d)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "  notes (reported, not failing):\n")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "    · %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// Summary is one line for a set of results: how many match.
func Summary(rs []*Result) string {
	var differ []string
	for _, r := range rs {
		if !r.Matches() {
			differ = append(differ, "lab:"+r.Lab)
		}
	}
	if len(differ) == 0 {
		return fmt.Sprintf("all %d runs match the reference", len(rs))
	}
	return fmt.Sprintf("%d of %d runs differ from the reference: %s", len(differ), len(rs), strings.Join(differ, ", "))
}
