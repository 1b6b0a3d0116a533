package mutants

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
)

// Class is what a mutant's outcome says of the lab's claims. Killed,
// tolerated and equivalent are computed; every other survivor is missing,
// and fails the check unless the survivors table gives it a reviewed reason.
type Class string

const (
	// ClassKilled: a claim that passed on the reference fails on the mutant.
	ClassKilled Class = "killed"
	// ClassTolerated: a stretched or shrunk timing its claim vouches for
	// (one with a tolerance) survived, and every
	// vouched timing it moved stayed within the tolerance its claim states
	// (claims.Claim.Tolerances): the claim says another run may show that
	// value and the same behaviour, so surviving is what it promises.
	ClassTolerated Class = "tolerated"
	// ClassEquivalent: the mutant changes only Record fields that none of
	// the lab's claims can read (reads.go), so no claim can tell it from the
	// reference: decided by code, never written by hand.
	ClassEquivalent Class = "equivalent"
	// ClassMissing: every other survivor. No claim caught it and none is
	// shown unable to; survivors_table.go must say why ("reviewed: …") or
	// name the claim that should ("missing claim: …").
	ClassMissing Class = "missing"
)

// movedSlack is how far a vouched timing may move, besides its tolerance,
// before it counts as moved: half the millisecond the claims round to.
const movedSlack = 0.0005

// Moved is one timing a passing claim vouches for, as a stretch or shrink
// moved it.
type Moved struct {
	Claim, Key string
	// From and To are the timing on the reference and on the mutant, in
	// seconds; To is NaN when the claim no longer reports it.
	From, To float64
	// Tolerance is how far, in seconds, the claim says another run's value
	// may be while it shows the same behaviour (its Tolerances[Key]).
	Tolerance float64
}

// Within reports whether the move stays inside the claim's tolerance.
func (m Moved) Within() bool {
	return !math.IsNaN(m.To) && math.Abs(m.To-m.From) <= m.Tolerance+movedSlack
}

func (m Moved) String() string {
	to := "not reported"
	if !math.IsNaN(m.To) {
		to = fmt.Sprintf("%.3f s", m.To)
	}
	rel := "within"
	if !m.Within() {
		rel = "beyond"
	}
	return fmt.Sprintf("%s %s %.3f s → %s (moved %+.3f s), %s its tolerance ±%s s%s",
		m.Claim, m.Key, m.From, to, m.To-m.From, rel, trimFloat(m.Tolerance), spreadOf(m.Tolerance))
}

// spreads are the allowances in internal/claims/bounds.go that carry a
// spread measured on this machine (its doc comments give the runs), as
// the report prints them beside a tolerance of the same value.
var spreads = []struct {
	name     string
	d        time.Duration
	measured string
}{
	{"claims.WatchAllowance", claims.WatchAllowance, "0.008–0.072 s (p50 0.016 s) over 90 values in 67 runs"},
	{"claims.ExitAllowance", claims.ExitAllowance, "0–0.070 s (p50 0.007 s) over 41 values in 31 runs"},
	{"claims.KubeletSyncAllowance", claims.KubeletSyncAllowance, "0.039–2.196 s (p50 0.081 s) over 55 values in 45 runs"},
	{"claims.KubeletStartAllowance", claims.KubeletStartAllowance, "0.8–2.4 s over 30 values in 30 runs"},
	{"claims.ControllerSyncAllowance", claims.ControllerSyncAllowance, "0.007–0.060 s in 10 runs"},
}

// spreadOf names the one allowance whose value the tolerance is, with its
// measured spread; "" when none is, or several are (then the value alone
// cannot say which).
func spreadOf(tol float64) string {
	var found []string
	for _, s := range spreads {
		if math.Abs(s.d.Seconds()-tol) < 1e-9 {
			found = append(found, fmt.Sprintf(" (the value of %s, whose latency was measured here at %s)", s.name, s.measured))
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// movedTimings are the vouched timings of the reference's passing claims
// that differ on the mutant's claims.
func movedTimings(ref map[string]claims.Claim, mutant []claims.Claim) []Moved {
	byID := map[string]claims.Claim{}
	for _, c := range mutant {
		byID[c.ID] = c
	}
	var out []Moved
	for _, id := range sortedKeys(ref) {
		c := ref[id]
		for _, key := range sortedKeys(c.Tolerances) {
			from, ok := c.Observed[key].(float64)
			if !ok {
				continue
			}
			to, ok := byID[id].Observed[key].(float64)
			if !ok {
				to = math.NaN()
			}
			if !math.IsNaN(to) && math.Abs(to-from) <= movedSlack {
				continue
			}
			out = append(out, Moved{Claim: id, Key: key, From: from, To: to, Tolerance: c.Tolerances[key]})
		}
	}
	return out
}

// isTiming: the operator stretches or shrinks a vouched timing.
func isTiming(op string) bool { return op == OpStretch || op == OpShrink }

// touchedFields are the Record's fields whose content the mutant changed,
// found by comparing its copy with the reference field by field (so no
// operator has to say what it touches, and none can say it wrongly).
func touchedFields(ref, mutant *evidence.Record) []string {
	a, b := reflect.ValueOf(ref).Elem(), reflect.ValueOf(mutant).Elem()
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			out = append(out, f.Name)
		}
	}
	return out
}

// classify decides a survivor's class: tolerated when it is a timing
// mutant whose every moved timing stayed within its claim's tolerance,
// equivalent when it touched only fields the lab's claims never read
// (reads nil: not known, so nothing is equivalent), else missing.
func classify(o Outcome, reads map[string]bool) Class {
	switch {
	case o.Killed():
		return ClassKilled
	case o.Panicked != "":
		return ClassMissing
	case isTiming(o.Operator) && !o.untolerated && len(o.Moved) > 0 && !slices.ContainsFunc(o.Moved, func(m Moved) bool { return !m.Within() }):
		return ClassTolerated
	case reads != nil && len(o.Touched) > 0 && !slices.ContainsFunc(o.Touched, func(f string) bool { return reads[f] }):
		return ClassEquivalent
	}
	return ClassMissing
}

// readsOf are the Record fields the lab's claims can read; nil when not
// known (no mutant is then equivalent).
var readsOf = func(root string, def lab.Definition) (map[string]bool, error) { return nil, nil }
