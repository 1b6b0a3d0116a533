package targets

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/mutants"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/labs"
)

// Mutants runs every registered lab's claims on mutants of its reference
// record, prints each mutant with the claims that killed it and the
// per-lab scores, and fails on what the committed floors and survivors
// table reject.
func Mutants(w io.Writer) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	start := time.Now()
	results, err := mutants.RunAll(root, labs.All)
	if err != nil {
		return err
	}
	mutants.Print(w, results)
	fmt.Fprintf(w, "\nmutated and decided in %s\n", time.Since(start).Round(time.Millisecond))
	if problems := mutants.Problems(results); len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	for lab, why := range mutants.Unreviewed {
		fmt.Fprintf(w, "lab:%s: survivors not reviewed yet (%s)\n", lab, why)
	}
	fmt.Fprintln(w, "every missing mutant of a reviewed lab has its reviewed reason, every score holds its floor")
	return nil
}
