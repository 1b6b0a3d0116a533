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

// Survivors counts the surviving mutants whose reason says they are
// equivalent, and those whose reason names a missing claim.
func (r Result) Survivors() (equivalent, missingClaim int) {
	for _, o := range r.Outcomes {
		if o.Killed() {
			continue
		}
		if i, ok := reasonFor(Survivors[r.Lab], o.Name); ok {
			switch {
			case strings.HasPrefix(Survivors[r.Lab][i].Why, "equivalent: "):
				equivalent++
			case strings.HasPrefix(Survivors[r.Lab][i].Why, "missing claim: "):
				missingClaim++
			}
		}
	}
	return equivalent, missingClaim
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
// mutant with no written reason, a reason that no longer names a survivor,
// a pattern that also covers a killed mutant, claims that panicked.
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
		used := make([]bool, len(reasons))
		for _, o := range r.Outcomes {
			if o.Panicked != "" {
				out = append(out, fmt.Sprintf("lab:%s: the claims panicked on mutant %q: %s", r.Lab, o.Name, o.Panicked))
			}
			i, ok := reasonFor(reasons, o.Name)
			switch {
			case o.Killed() && ok && strings.Contains(reasons[i].Mutants, "*"):
				out = append(out, fmt.Sprintf("lab:%s: the reason for %q also covers %q, which %s kills: narrow it", r.Lab, reasons[i].Mutants, o.Name, strings.Join(o.KilledBy, ", ")))
			case o.Killed():
			case !ok && Unreviewed[r.Lab] != "":
				// Listed by the target; not a problem until the lab is reviewed.
			case !ok:
				out = append(out, fmt.Sprintf("lab:%s: mutant %q survives and has no reason (\"equivalent: …\" or \"missing claim: …\") in internal/mutants/survivors.go", r.Lab, o.Name))
			default:
				used[i] = true
				if !validReason(reasons[i].Why) {
					out = append(out, fmt.Sprintf("lab:%s: the reason for %q begins with neither \"equivalent: \" nor \"missing claim: \"", r.Lab, reasons[i].Mutants))
				}
			}
		}
		for i, u := range used {
			if !u {
				out = append(out, fmt.Sprintf("lab:%s: survivors.go gives a reason for %q, which names no surviving mutant: remove it", r.Lab, reasons[i].Mutants))
			}
		}
	}
	return out
}

// reasonFor is the first reason whose Mutants names the mutant.
func reasonFor(reasons []Reason, name string) (int, bool) {
	for i, r := range reasons {
		if matches(r.Mutants, name) {
			return i, true
		}
	}
	return 0, false
}

// matches: the pattern is the name, or stands for it with each * standing
// for any run of characters.
func matches(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, last)
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
				why := "NO REASON WRITTEN"
				if i, ok := reasonFor(Survivors[r.Lab], o.Name); ok {
					why = Survivors[r.Lab][i].Why
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
	fmt.Fprintln(w, "| lab | mutants | killed | score | survivors: equivalent | survivors: missing claim |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		if r.Record == "" {
			fmt.Fprintf(w, "| `lab:%s` | no reference record | | | | |\n", r.Lab)
			continue
		}
		equivalent, missing := r.Survivors()
		fmt.Fprintf(w, "| `lab:%s` | %d | %d | %.0f %% | %d | %d |\n", r.Lab, len(r.Outcomes), r.Killed(), r.Score()*100, equivalent, missing)
	}
}
