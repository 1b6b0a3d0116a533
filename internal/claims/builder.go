package claims

import (
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Builder builds a lab's own claim the way this package builds its shared
// ones: Observe and Cite what it rests on, Require each check (a failed one
// fails the claim with its words), NotChecked when the run could not gather
// the evidence; Done decides: a failure first, then not checked, and a
// claim that checked nothing fails.
type Builder struct{ k *check }

// NewBuilder starts the claim, citing evidence.
func NewBuilder(id, statement string, evidence ...string) *Builder {
	b := &Builder{k: newCheck(id, statement)}
	b.k.cite(evidence...)
	return b
}

// Observe records a value the claim was decided on.
func (b *Builder) Observe(key string, v any) { b.k.observe(key, v) }

// Precondition states a duration termlab arranged for the claim (see
// Precondition): at least scheduled, of which the record shows actual;
// measured is false when the record cannot say. It is never observed.
func (b *Builder) Precondition(key, arranged string, scheduled, actual time.Duration, measured bool) {
	b.k.precondition(key, arranged, scheduled, actual, measured)
}

// Cite names evidence files the claim rests on (each once).
func (b *Builder) Cite(paths ...string) { b.k.cite(paths...) }

// Require counts a check; a false one fails the claim with the words.
func (b *Builder) Require(ok bool, format string, args ...any) bool {
	return b.k.require(ok, format, args...)
}

// Contradicts counts a check that an event of the cluster can break (a
// DELETED, a container state): a false one fails the claim even when a
// precondition was not met (see Precondition).
func (b *Builder) Contradicts(ok bool, format string, args ...any) bool {
	return b.k.contradicts(ok, format, args...)
}

// NotChecked leaves the claim open for the reason, unless a check failed.
func (b *Builder) NotChecked(reason string) { b.k.notChecked = reason }

// Done decides the claim.
func (b *Builder) Done() Claim { return b.k.done() }

// WithinClocks decides lo ≤ iv ≤ hi for an interval two clocks read (see
// evidence.Record.Between): false only when it is out of bounds whatever the
// clocks' uncertainty; when the uncertainty straddles a bound the claim is
// not checked, naming the clocks, and it is true. what names the interval.
func (b *Builder) WithinClocks(iv evidence.Interval, lo, hi time.Duration, what string) bool {
	return b.k.withinClocks(iv, lo, hi, what)
}

// CausedWithin decides 0 ≤ iv ≤ hi for an interval from a cause to its
// effect (a delete to the kubelet's reaction to it): below 0 only by more
// than the clocks' uncertainty contradicts it (notBeforeCause: within it is
// what a caused event looks like across two clocks, no reason to leave the
// claim unchecked); the upper bound is WithinClocks'.
func (b *Builder) CausedWithin(iv evidence.Interval, hi time.Duration, what string) bool {
	return b.k.notBeforeCause(iv, 0) && b.k.withinClocks(iv, noLowerBound, hi, what)
}

// ObserveInterval records an interval's corrected value under key (ending in
// _seconds), and the clocks' correction and uncertainty beside it.
func (b *Builder) ObserveInterval(key string, iv evidence.Interval) { b.k.observeInterval(key, iv) }

// Unbounded stands for a side of WithinClocks' bounds that has none.
const (
	NoLowerBound = noLowerBound
	NoUpperBound = noUpperBound
)
