package soak

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/termlab/termlab/internal/report"
)

// Find returns the run folders (folders holding summary.json) the patterns
// name. A pattern is a folder or a glob (results/stuck, results/*/2026120*);
// a folder that is not itself a run folder is searched below for run
// folders. Symbolic links below a folder are not followed (results/<lab>/latest
// is one of the runs beside it). The folders come back absolute, sorted and
// once each; a pattern that names nothing is an error.
func Find(patterns []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(dir string) {
		if !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	for _, pat := range patterns {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			continue
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("-from %q: %w", pat, err)
		}
		found := 0
		for _, m := range matches {
			root, err := filepath.EvalSymlinks(m)
			if err != nil {
				return nil, err
			}
			if root, err = filepath.Abs(root); err != nil {
				return nil, err
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				continue
			}
			err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					return nil
				}
				if _, err := os.Stat(filepath.Join(path, report.SummaryFile)); err == nil {
					add(path)
					found++
					return filepath.SkipDir // a run folder holds no runs
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("-from %q: %w", pat, err)
			}
		}
		if found == 0 {
			return nil, fmt.Errorf("-from %q: no run folder (a folder with %s) there", pat, report.SummaryFile)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Read reads the run folders' summaries, of the labs named in only (all when
// only is empty). A folder that cannot be read, holds no lab run (a diagnose
// report has a summary.json too), or holds a run already read from another
// folder (a reference is a copy of a run) is skipped and said in skipped;
// folders of labs not asked for are left out silently.
func Read(dirs []string, only ...string) (runs []Run, skipped []string) {
	want := map[string]bool{}
	for _, l := range only {
		want[l] = true
	}
	first := map[string]string{}
	for _, dir := range dirs {
		s, err := report.ReadSummary(dir)
		switch {
		case err != nil:
			skipped = append(skipped, err.Error())
			continue
		case s.Lab == "" || s.RunID == "":
			if len(want) == 0 {
				skipped = append(skipped, fmt.Sprintf("%s: not a lab run (its %s names no lab or run id)", dir, report.SummaryFile))
			}
			continue
		case len(want) > 0 && !want[s.Lab]:
			continue
		}
		key := s.Lab + "/" + s.RunID
		if prev, ok := first[key]; ok {
			skipped = append(skipped, fmt.Sprintf("%s: lab:%s run %s, already counted from %s", dir, s.Lab, s.RunID, prev))
			continue
		}
		first[key] = dir
		runs = append(runs, Run{Lab: s.Lab, Summary: s})
	}
	return runs, skipped
}
