package compare

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/report"
)

// Promote copies a passing run folder to results/reference/<lab>/, replacing
// the lab's reference run. run is as Resolve takes it; "" promotes the latest
// run of every lab (labs whose latest run did not pass are skipped, and said
// so). A run that failed, or recorded errors, is never a reference, nor one
// whose folder holds a credential (scanned again here).
func Promote(w io.Writer, resultsDir, run string) error {
	var dirs []string
	if run != "" {
		d, err := Resolve(resultsDir, run)
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
	} else {
		labs, err := os.ReadDir(resultsDir)
		if err != nil {
			return err
		}
		for _, l := range labs {
			latest := filepath.Join(resultsDir, l.Name(), "latest")
			if l.IsDir() && l.Name() != ReferenceDirName {
				if _, err := os.Stat(filepath.Join(latest, report.SummaryFile)); err == nil {
					dirs = append(dirs, latest)
				}
			}
		}
		if len(dirs) == 0 {
			return fmt.Errorf("no runs under %s to make reference runs of", resultsDir)
		}
	}
	var errs []error
	for _, d := range dirs {
		if err := promote(w, resultsDir, d); err != nil {
			if run != "" {
				return err
			}
			fmt.Fprintf(w, "skipped %s: %v\n", d, err)
			errs = append(errs, err)
		}
	}
	if len(errs) == len(dirs) {
		return errors.Join(errs...)
	}
	return nil
}

func promote(w io.Writer, resultsDir, dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	s, err := report.ReadSummary(real)
	if err != nil {
		return err
	}
	if !s.Passed() || len(s.Errors) > 0 {
		return fmt.Errorf("run %s of lab:%s did not pass (verdict %s, %d errors): a reference run must pass", s.RunID, s.Lab, s.Verdict, len(s.Errors))
	}
	// Scanned again: a reference run is committed and shipped in bundles.
	if leaks, err := credscan.Dir(real); err != nil || len(leaks) > 0 {
		return fmt.Errorf("run %s of lab:%s cannot be a reference: credentials check: %v %v", s.RunID, s.Lab, leaks, err)
	}
	dst := ReferenceDir(resultsDir, s.Lab)
	tmp := dst + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := copyTree(real, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	fmt.Fprintf(w, "lab:%s: run %s (%s, %d claims) is the reference run now: %s\n", s.Lab, s.RunID, s.Verdict, len(s.Claims), dst)
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil // no symlinks in a reference
	})
}
