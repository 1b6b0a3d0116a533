package mutants

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
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
	// Moved are the vouched timings the mutant moved (stretch and shrink
	// mutants only), with their claims' tolerances.
	Moved []Moved
	// Touched are the Record fields the mutant changed.
	Touched []string
	// Class is what the outcome says (classes.go); Reason the reviewed
	// reason of a missing one, "" when survivors_table.go gives none.
	Class  Class
	Reason string
	// Unsound says an equivalent mutant changed what the claims decided
	// (not only their verdicts): the reads analysis missed a read.
	Unsound string
	decided []claims.Claim
	// untolerated: a stretch or shrink of a timing its claim states no
	// tolerance for (Generated.untolerated).
	untolerated bool
}

// Killed reports whether a claim killed the mutant.
func (o Outcome) Killed() bool { return len(o.KilledBy) > 0 }

// Result is one lab's mutation run.
type Result struct {
	Lab string
	// Record is the reference run folder, "" when the lab has none.
	Record string
	Passed int // claims that passed on the reference record
	// Reads are the Record fields the lab's claims can read (reads.go);
	// nil when not known, and then no mutant is equivalent.
	Reads    map[string]bool
	Outcomes []Outcome
	Notes    []string
	// Reasons are the lab's reviewed reasons (Survivors[Lab]).
	Reasons []Reason
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

// Counts are a lab's mutants by class.
type Counts struct {
	Mutants, Killed, Tolerated, Equivalent int
	// Reviewed are the missing mutants with a reviewed reason, Unreasoned
	// those without (each fails the check, unless the lab is Unreviewed).
	Reviewed, Unreasoned int
}

// Counts counts the lab's mutants by class.
func (r Result) Counts() Counts {
	c := Counts{Mutants: len(r.Outcomes)}
	for _, o := range r.Outcomes {
		switch o.Class {
		case ClassKilled:
			c.Killed++
		case ClassTolerated:
			c.Tolerated++
		case ClassEquivalent:
			c.Equivalent++
		default:
			if o.Reason != "" {
				c.Reviewed++
			} else {
				c.Unreasoned++
			}
		}
	}
	return c
}

// Score is killed / (mutants − equivalent): an equivalent mutant is one no
// claim could kill, so it counts neither way; a tolerated one counts
// against the score (0 without such mutants).
func (r Result) Score() float64 {
	c := r.Counts()
	if c.Mutants-c.Equivalent == 0 {
		return 0
	}
	return float64(c.Killed) / float64(c.Mutants-c.Equivalent)
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
	reads, err := readsOf(root, def)
	var notes []string
	if err != nil {
		// Without the claims' reads nothing is shown equivalent: every
		// survivor is then missing, and the floors say so.
		reads, notes = nil, []string{fmt.Sprintf("what the claims read is not known, so no mutant is equivalent: %v", err)}
	}
	res.Reads, res.Reasons = reads, Survivors[def.Name]
	res.Outcomes, res.Passed, res.Notes = Mutate(ref, def.Claims, reads, res.Reasons)
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// Mutate generates the record's mutants, decides the claims on each and
// classes the outcomes: reads are the Record fields the claims can read
// (nil: not known, so no mutant is equivalent), reasons the lab's reviewed
// reasons. passed is how many claims passed on the reference.
func Mutate(ref *evidence.Record, decide Decide, reads map[string]bool, reasons []Reason) (outcomes []Outcome, passed int, notes []string) {
	refPassed := map[string]claims.Claim{}
	refClaims := decide(clone(ref))
	for _, c := range refClaims {
		if c.Passed() {
			refPassed[c.ID] = c
		}
	}
	gen := Generate(ref, decide)
	for _, m := range gen.Mutants {
		rec := clone(ref)
		m.apply(rec)
		o := decideMutant(m, rec, decide, refPassed)
		o.untolerated = gen.untolerated[m.Name]
		o.Touched = touchedFields(ref, rec)
		o.Class = classify(o, reads)
		if o.Class == ClassEquivalent && !sameClaims(o.decided, refClaims) {
			// The claims read what reads.go says they cannot: its
			// analysis is wrong, and so is every equivalent it gave.
			o.Unsound = "the claims decide differently on it (their observations or reasons), yet it changes only fields reads.go says they cannot read"
		}
		o.decided = nil
		if o.Class == ClassMissing {
			if i, ok := reasonFor(reasons, o.Name); ok {
				o.Reason = reasons[i].Why
			}
		}
		outcomes = append(outcomes, o)
	}
	return outcomes, len(refPassed), gen.Notes
}

// sameClaims: the two decisions are the same, observations and reasons
// included (compared as JSON, which follows pointers; as Go values when a
// value will not marshal).
func sameClaims(a, b []claims.Claim) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

func decideMutant(m Mutant, rec *evidence.Record, decide Decide, passed map[string]claims.Claim) (o Outcome) {
	o.Mutant = m
	defer func() {
		if p := recover(); p != nil {
			o.Panicked = fmt.Sprint(p)
		}
	}()
	decided := decide(rec)
	o.decided = decided
	for _, c := range decided {
		if _, ok := passed[c.ID]; ok && c.Verdict == claims.Fail {
			o.KilledBy = append(o.KilledBy, c.ID)
		}
	}
	if isTiming(m.Operator) {
		o.Moved = movedTimings(passed, decided)
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
// results: a score below its lab's floor, a lab with no floor, a missing
// mutant with no reviewed reason, a reason that names no missing mutant
// (none, or only ones now computed tolerated or equivalent), a pattern
// that also covers a killed mutant, claims that panicked.
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
		reasons := r.Reasons
		used := make([]bool, len(reasons))
		for _, o := range r.Outcomes {
			if o.Panicked != "" {
				out = append(out, fmt.Sprintf("lab:%s: the claims panicked on mutant %q: %s", r.Lab, o.Name, o.Panicked))
			}
			if o.Unsound != "" {
				out = append(out, fmt.Sprintf("lab:%s: mutant %q is computed equivalent, but %s", r.Lab, o.Name, o.Unsound))
			}
			i, ok := reasonFor(reasons, o.Name)
			switch {
			case o.Class == ClassKilled && ok && strings.Contains(reasons[i].Mutants, "*"):
				out = append(out, fmt.Sprintf("lab:%s: the reason for %q also covers %q, which %s kills: narrow it", r.Lab, reasons[i].Mutants, o.Name, strings.Join(o.KilledBy, ", ")))
			case o.Class != ClassMissing:
			case !ok && Unreviewed[r.Lab] != "":
				// Listed by the target; not a problem until the lab is reviewed.
			case !ok:
				out = append(out, fmt.Sprintf("lab:%s: mutant %q survives, is neither tolerated nor equivalent, and has no reason (\"reviewed: …\" or \"missing claim: …\") in internal/mutants/survivors_table.go", r.Lab, o.Name))
			default:
				used[i] = true
				if !validReason(reasons[i].Why) {
					out = append(out, fmt.Sprintf("lab:%s: the reason for %q begins with neither \"reviewed: \" nor \"missing claim: \" (equivalent and tolerated are computed, not written)", r.Lab, reasons[i].Mutants))
				}
			}
		}
		for i, u := range used {
			if !u {
				out = append(out, fmt.Sprintf("lab:%s: survivors_table.go gives a reason for %q, which names no missing mutant (none survives, or each is computed tolerated or equivalent): remove it", r.Lab, reasons[i].Mutants))
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

// validReason: a reviewed reason says why no claim should catch the
// mutant ("reviewed: …"), or which claim should and does not yet
// ("missing claim: …"). "equivalent" is no longer written: it is computed.
func validReason(why string) bool {
	return strings.HasPrefix(why, "reviewed: ") || strings.HasPrefix(why, "missing claim: ")
}

func percent(r Result) string {
	c := r.Counts()
	return fmt.Sprintf("%d/%d = %.0f %%", c.Killed, c.Mutants-c.Equivalent, r.Score()*100)
}

// Print writes, per lab, each mutant and its class: the claims that killed
// it, the timings it moved and their tolerances, the fields no claim reads,
// or the reviewed reason; then the table of scores.
func Print(w io.Writer, results []Result) {
	for _, r := range results {
		if r.Record == "" {
			fmt.Fprintf(w, "lab:%s: skipped, no reference record (labs/%s/testdata/<run id>/record.json)\n\n", r.Lab, r.Lab)
			continue
		}
		fmt.Fprintf(w, "lab:%s — %s, %d claims passed on it\n", r.Lab, r.Record, r.Passed)
		if r.Reads != nil {
			fmt.Fprintf(w, "  its claims can read: %s\n", strings.Join(sortedKeys(r.Reads), ", "))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		for _, o := range r.Outcomes {
			switch {
			case o.Panicked != "":
				fmt.Fprintf(w, "  PANIC       %s: %s\n", o.Name, o.Panicked)
			case o.Class == ClassKilled:
				fmt.Fprintf(w, "  killed      %s\n              by %s\n", o.Name, strings.Join(o.KilledBy, ", "))
			case o.Class == ClassTolerated:
				fmt.Fprintf(w, "  tolerated   %s\n", o.Name)
				for _, m := range o.Moved {
					fmt.Fprintf(w, "              %s\n", m)
				}
			case o.Class == ClassEquivalent:
				fmt.Fprintf(w, "  equivalent  %s\n              changes only %s, which no claim of lab:%s reads\n", o.Name, strings.Join(o.Touched, ", "), r.Lab)
			default:
				why := "NO REVIEWED REASON"
				if o.Reason != "" {
					why = o.Reason
				}
				fmt.Fprintf(w, "  missing     %s\n", o.Name)
				for _, m := range o.Moved {
					fmt.Fprintf(w, "              %s\n", m)
				}
				fmt.Fprintf(w, "              %s\n", why)
			}
		}
		fmt.Fprintf(w, "  score %s\n\n", percent(r))
	}
	PrintTable(w, results)
}

// PrintTable writes the per-lab table of classes and scores (the README's).
func PrintTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| lab | mutants | killed | tolerated | equivalent | missing: reviewed | missing: no reason | score |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		if r.Record == "" {
			fmt.Fprintf(w, "| `lab:%s` | no reference record | | | | | | |\n", r.Lab)
			continue
		}
		c := r.Counts()
		fmt.Fprintf(w, "| `lab:%s` | %d | %d | %d | %d | %d | %d | %.0f %% |\n", r.Lab, c.Mutants, c.Killed, c.Tolerated, c.Equivalent, c.Reviewed, c.Unreasoned, r.Score()*100)
	}
}
