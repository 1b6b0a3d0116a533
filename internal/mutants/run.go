package mutants

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
)

// Outcome is what the claims made of one mutant.
type Outcome struct {
	Mutant
	// KilledBy are the claims that passed on the reference record and fail
	// on the mutant ("not checked" kills nothing).
	KilledBy []string
	// Panicked says the claims panicked on the mutant: claims must read any
	// record, so the check reports it.
	Panicked string
}

// Killed reports whether a claim killed the mutant.
func (o Outcome) Killed() bool { return len(o.KilledBy) > 0 }

// Result is one lab's mutation run.
type Result struct {
	Lab string
	// Record is the reference run folder, "" when the lab has none.
	Record   string
	Passed   int // claims that passed on the reference record
	Outcomes []Outcome
	Notes    []string
}

// Killed is how many mutants a claim killed.
func (r Result) Killed() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Killed() {
			n++
		}
	}
	return n
}

// Score is killed / total (0 without mutants).
func (r Result) Score() float64 {
	if len(r.Outcomes) == 0 {
		return 0
	}
	return float64(r.Killed()) / float64(len(r.Outcomes))
}

// ReferenceRecord is the lab's committed reference record:
// labs/<lab>/testdata/<run id>/record.json, the newest run id when there
// are several; ok is false when there is none.
func ReferenceRecord(root, labName string) (dir string, ok bool) {
	found, _ := filepath.Glob(filepath.Join(root, "labs", labName, "testdata", "*", evidence.RecordFile))
	if len(found) == 0 {
		return "", false
	}
	slices.Sort(found)
	return filepath.Dir(found[len(found)-1]), true
}

// RunLab mutates the lab's reference record and decides its claims on
// every mutant. A lab without a reference record gives a Result with no
// Record, and no error.
func RunLab(root string, def lab.Definition) (Result, error) {
	res := Result{Lab: def.Name}
	dir, ok := ReferenceRecord(root, def.Name)
	if !ok {
		return res, nil
	}
	res.Record, _ = filepath.Rel(root, dir)
	ref, err := evidence.Load(dir)
	if err != nil {
		return res, err
	}
	passed := map[string]bool{}
	for _, c := range def.Claims(clone(ref)) {
		if c.Passed() {
			passed[c.ID] = true
			res.Passed++
		}
	}
	gen := Generate(ref, def.Claims)
	res.Notes = gen.Notes
	for _, m := range gen.Mutants {
		rec := clone(ref)
		m.apply(rec)
		res.Outcomes = append(res.Outcomes, decideMutant(m, rec, def.Claims, passed))
	}
	return res, nil
}

func decideMutant(m Mutant, rec *evidence.Record, decide Decide, passed map[string]bool) (o Outcome) {
	o.Mutant = m
	defer func() {
		if p := recover(); p != nil {
			o.Panicked = fmt.Sprint(p)
		}
	}()
	for _, c := range decide(rec) {
		if passed[c.ID] && c.Verdict == claims.Fail {
			o.KilledBy = append(o.KilledBy, c.ID)
		}
	}
	return o
}

// RunAll runs every lab of defs that has a reference record, in order.
func RunAll(root string, defs []lab.Definition) ([]Result, error) {
	var out []Result
	for _, def := range defs {
		r, err := RunLab(root, def)
		if err != nil {
			return out, fmt.Errorf("%s: %w", def.Title(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Problems are what the committed floors and survivors table say of the
// results: a score below its lab's floor, a lab with no floor, a surviving
// mutant with no written reason, a reason for a mutant that no longer
// survives, claims that panicked.
func Problems(results []Result) []string {
	var out []string
	for _, r := range results {
		if r.Record == "" {
			continue
		}
		floor, ok := Floors[r.Lab]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("lab:%s has no mutation-score floor in internal/mutants/survivors.go (its score: %s)", r.Lab, percent(r)))
		case r.Score() < floor:
			out = append(out, fmt.Sprintf("lab:%s: mutation score %s, below its floor %.0f %%", r.Lab, percent(r), floor*100))
		}
		reasons := Survivors[r.Lab]
		surviving := map[string]bool{}
		for _, o := range r.Outcomes {
			if o.Panicked != "" {
				out = append(out, fmt.Sprintf("lab:%s: the claims panicked on mutant %q: %s", r.Lab, o.Name, o.Panicked))
			}
			if o.Killed() {
				continue
			}
			surviving[o.Name] = true
			if why := reasons[o.Name]; !validReason(why) {
				out = append(out, fmt.Sprintf("lab:%s: mutant %q survives and has no reason (\"equivalent: …\" or \"missing claim: …\") in internal/mutants/survivors.go", r.Lab, o.Name))
			}
		}
		for _, name := range sortedKeys(reasons) {
			if !surviving[name] {
				out = append(out, fmt.Sprintf("lab:%s: survivors.go gives a reason for %q, which is no longer a surviving mutant: remove it", r.Lab, name))
			}
		}
	}
	return out
}

func validReason(why string) bool {
	return strings.HasPrefix(why, "equivalent: ") || strings.HasPrefix(why, "missing claim: ")
}

func percent(r Result) string {
	return fmt.Sprintf("%d/%d = %.0f %%", r.Killed(), len(r.Outcomes), r.Score()*100)
}

// Print writes, per lab, each mutant and the claims that killed it (or the
// survivor's reason), then the table of scores.
func Print(w io.Writer, results []Result) {
	for _, r := range results {
		if r.Record == "" {
			fmt.Fprintf(w, "lab:%s: skipped, no reference record (labs/%s/testdata/<run id>/record.json)\n\n", r.Lab, r.Lab)
			continue
		}
		fmt.Fprintf(w, "lab:%s — %s, %d claims passed on it\n", r.Lab, r.Record, r.Passed)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		for _, o := range r.Outcomes {
			switch {
			case o.Panicked != "":
				fmt.Fprintf(w, "  PANIC     %s: %s\n", o.Name, o.Panicked)
			case o.Killed():
				fmt.Fprintf(w, "  killed    %s\n            by %s\n", o.Name, strings.Join(o.KilledBy, ", "))
			default:
				why := Survivors[r.Lab][o.Name]
				if why == "" {
					why = "NO REASON WRITTEN"
				}
				fmt.Fprintf(w, "  survived  %s\n            %s\n", o.Name, why)
			}
		}
		fmt.Fprintf(w, "  score %s\n\n", percent(r))
	}
	PrintTable(w, results)
}

// PrintTable writes the per-lab table of scores (the README's).
func PrintTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| lab | mutants | killed | score |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, r := range results {
		if r.Record == "" {
			fmt.Fprintf(w, "| `lab:%s` | no reference record | | |\n", r.Lab)
			continue
		}
		fmt.Fprintf(w, "| `lab:%s` | %d | %d | %.0f %% |\n", r.Lab, len(r.Outcomes), r.Killed(), r.Score()*100)
	}
}
