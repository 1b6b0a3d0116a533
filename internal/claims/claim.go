// Package claims decides stated claims from a run's record. Every function
// here is pure: it reads an evidence.Record and returns a Claim with its
// verdict, the values it was decided on and the evidence files it rests on.
// Nothing here talks to the cluster.
//
// A claim passes only on positive evidence: a missing observation, action or
// event fails it and the failure says what was missing.
package claims

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Verdict is a claim's "pass", "fail" or "not checked", and a run's "pass",
// "partial" or "fail" (Overall).
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// NotChecked: the claim needs evidence the run had no way to gather (the
	// node's container runtime, on a cluster reached without -node-access).
	// It is never a pass; Reason says what was missing.
	NotChecked Verdict = "not checked"
	// Partial is a run's verdict when no claim failed, at least one passed,
	// and some were not checked: what was checked holds, the rest is open.
	Partial Verdict = "partial"
)

// NeedsNodeAccess is the reason of a claim not checked for want of the node.
const NeedsNodeAccess = "not checked (needs -node-access): the run could not ask the node's container runtime (crictl), which this claim rests on"

// NeedsAuditLog is the reason of a claim not checked for want of the API
// server's audit log, which termlab reads on the control plane's node: what
// says who sent a request. what names what the claim would read in it.
func NeedsAuditLog(rec *evidence.Record, what string) string {
	if rec.NodeAccess == evidence.NodeAccessNone {
		return "not checked (needs -node-access): the run could not read the API server's audit log on the control plane's node (through a kubeconfig: -controlplaneaccess), which says " + what
	}
	return "not checked: the run has no audit log, which says " + what
}

// NeedsFakeNodes is the reason of a claim about a lab's part on kwok fake
// nodes, on a cluster that has none.
const NeedsFakeNodes = "not checked (needs kwok fake nodes): the cluster has none, so this part of the lab did not run"

// NotCheckedFor turns a decided claim into one not checked for the reason:
// the evidence it would rest on could not exist in this run. Its
// observations go; its statement and evidence stay.
func NotCheckedFor(c Claim, reason string) Claim {
	c.Verdict, c.Reason = NotChecked, reason
	c.Observed, c.Tolerances = map[string]any{}, nil
	return c
}

// Claim is a statement with explicit bounds and the verdict the record gives it.
type Claim struct {
	ID        string         `json:"id"`
	Statement string         `json:"statement"`
	Verdict   Verdict        `json:"verdict"`
	Observed  map[string]any `json:"observed"`
	// Tolerances are the observed timings the claim vouches for (keys of
	// Observed ending in _seconds), each with how far, in seconds, another
	// run's value may be from this one's while it shows the same behaviour.
	// The statement says why. results:compare fails a run on these timings
	// alone; every other timing is reported.
	Tolerances map[string]float64 `json:"tolerances,omitempty"`
	Evidence   []string           `json:"evidence"`
	// Preconditions are what termlab itself arranged for the claim (see
	// Precondition): stated with it, never among Observed.
	Preconditions []Precondition `json:"preconditions,omitempty"`
	// Reason says why the claim failed (empty when it passed).
	Reason string `json:"reason,omitempty"`
}

// Precondition is a duration termlab itself schedules and the claim rests
// on — a hold, a wait before its next request — stated with the claim, not
// checked as a finding: what the claim observes is what the cluster did
// inside it. Scheduled is what the statement says termlab waits; Actual is
// what the record shows it gave.
//
// The rule: a precondition the record shows was not met (Actual short of
// Scheduled: the run was interrupted, the hold cut short, or the record
// comes from another schedule) leaves the claim not checked, its reason
// naming the precondition. Never a pass: the record holds a shorter
// experiment than the statement describes, so it cannot vouch for the whole
// window. Never a fail for want of the window: a short hold is termlab's
// doing, not the cluster's, and a check that came up short for it (too few
// looks, too few retries seen) says nothing of the cluster; those findings
// stay in the reason, marked not judged, so nothing the record shows is
// hidden. One exception, and only one: a contradiction — an event the
// cluster produced inside the part of the window termlab did give (a
// DELETED the statement says cannot come, a container seen not running, a
// second writer) — still fails the claim. What the cluster did before a
// moment cannot depend on how long termlab went on waiting after it, so a
// longer hold would not undo it; and a lab that ends its hold early because
// the cluster already contradicted the claim (lab:finalizer stops watching
// at a DELETED, lab:stuck goes on when the pod is already gone) must not
// turn that contradiction into "not checked". A not-checked claim makes the
// run partial, never a pass (Overall).
//
// A precondition the record cannot measure (a time it counts from was
// never observed) decides nothing by itself: the check that needed that
// observation fails the claim, and without such a failure the claim is not
// checked.
type Precondition struct {
	// Key names it the way an observed timing is named (…_seconds).
	Key string `json:"key"`
	// Arranged says what termlab arranged, in words.
	Arranged string `json:"arranged"`
	// ScheduledSeconds is the least the statement rests on.
	ScheduledSeconds float64 `json:"scheduled_seconds"`
	// ActualSeconds is what the record shows termlab gave; nil when the
	// record cannot say.
	ActualSeconds *float64 `json:"actual_seconds,omitempty"`
}

// Measured reports whether the record gave the precondition's actual value.
func (p Precondition) Measured() bool { return p.ActualSeconds != nil }

// Met reports whether the record shows the precondition met.
func (p Precondition) Met() bool { return p.Measured() && *p.ActualSeconds >= p.ScheduledSeconds }

// String is the precondition as reports show it.
func (p Precondition) String() string {
	actual := "not measured: a time it counts from was not recorded"
	if p.Measured() {
		actual = fmt.Sprintf("%.3f s in this run", *p.ActualSeconds)
	}
	return fmt.Sprintf("%s (scheduled %.3f s; %s)", p.Arranged, p.ScheduledSeconds, actual)
}

// PreconditionNotMet is the reason of a claim not checked because the
// record shows termlab did not give it what it rests on.
func PreconditionNotMet(p Precondition) string {
	return fmt.Sprintf("not checked: precondition not met — %s: the record shows %.3f s, the statement rests on %.3f s (termlab's schedule, not the cluster's behaviour: the run was cut short or the record comes from another schedule)",
		p.Arranged, *p.ActualSeconds, p.ScheduledSeconds)
}

// Passed reports whether the claim passed.
func (c Claim) Passed() bool { return c.Verdict == Pass }

// WithTolerance vouches for the observed timing key (seconds): another run
// that behaves the same shows a value within tol of this one's. The claim's
// statement must say why tol has its value.
func (c Claim) WithTolerance(key string, tol time.Duration) Claim {
	t := maps.Clone(c.Tolerances)
	if t == nil {
		t = map[string]float64{}
	}
	t[key] = seconds(tol)
	c.Tolerances = t
	return c
}

// Overall is the run's verdict: Pass only when every claim was checked and
// passed; Partial when none failed and some were not checked; Fail when one
// failed, or when none passed (a run that checked nothing proved nothing).
func Overall(cs []Claim) Verdict {
	passed, notChecked := 0, 0
	for _, c := range cs {
		switch c.Verdict {
		case Pass:
			passed++
		case NotChecked:
			notChecked++
		default:
			return Fail
		}
	}
	switch {
	case passed == 0:
		return Fail
	case notChecked > 0:
		return Partial
	}
	return Pass
}

// CountNotChecked is how many of the claims were not checked.
func CountNotChecked(cs []Claim) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == NotChecked {
			n++
		}
	}
	return n
}

// check builds one claim: observations, citations and requirements.
type check struct {
	c          Claim
	checked    int
	failures   []string
	notChecked string
	// contradictions are the failures that are events the cluster produced
	// (see Precondition): they fail the claim even in a window termlab cut
	// short.
	contradictions []string
}

func newCheck(id, statement string) *check {
	return &check{c: Claim{ID: id, Statement: statement, Observed: map[string]any{}}}
}

func (k *check) observe(key string, v any) { k.c.Observed[key] = v }

// precondition states what termlab arranged for the claim: at least
// scheduled, of which the record shows actual (measured false: it cannot
// say). done decides by it (Precondition's rule).
func (k *check) precondition(key, arranged string, scheduled, actual time.Duration, measured bool) {
	p := Precondition{Key: key, Arranged: arranged, ScheduledSeconds: seconds(scheduled)}
	if measured {
		a := seconds(actual)
		p.ActualSeconds = &a
	}
	k.c.Preconditions = append(k.c.Preconditions, p)
}

func (k *check) cite(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		dup := false
		for _, q := range k.c.Evidence {
			dup = dup || q == p
		}
		if !dup {
			k.c.Evidence = append(k.c.Evidence, p)
		}
	}
}

// require records a requirement; a false one fails the claim with the message.
func (k *check) require(ok bool, format string, args ...any) bool {
	k.checked++
	if !ok {
		k.failures = append(k.failures, fmt.Sprintf(format, args...))
	}
	return ok
}

// contradicts records a requirement that an event of the cluster broke (a
// DELETED, a container state, a writer): false fails the claim even when a
// precondition is not met (Precondition's rule).
func (k *check) contradicts(ok bool, format string, args ...any) bool {
	if !k.require(ok, format, args...) {
		k.contradictions = append(k.contradictions, k.failures[len(k.failures)-1])
	}
	return ok
}

// missing fails the claim because something it needs was not recorded.
func (k *check) missing(format string, args ...any) Claim {
	k.require(false, format, args...)
	return k.done()
}

// containerID is the pod's container ID as the API reported it (evidence:
// events.jsonl); a pod without one fails the claim.
func (k *check) containerID(rec *evidence.Record, pod string) (string, bool) {
	id, ok := ContainerID(rec, pod)
	if !ok {
		k.require(false, "the API never reported a container ID for pod %s", pod)
		return "", false
	}
	k.cite(eventsFile)
	return id, true
}

// needsNode says whether the record can decide a claim resting on the
// node's container runtime; without node access the claim is not checked.
func (k *check) needsNode(rec *evidence.Record) bool {
	if rec.NodeAccess != evidence.NodeAccessNone {
		return true
	}
	k.notChecked = NeedsNodeAccess
	return false
}

func (k *check) done() Claim {
	c := k.c
	for _, p := range c.Preconditions {
		if !p.Measured() || p.Met() {
			continue
		}
		if len(k.contradictions) > 0 {
			c.Verdict = Fail
			c.Reason = strings.Join(k.contradictions, "; ") + fmt.Sprintf(" — inside the %.3f s termlab gave (%s, scheduled %.3f s): a longer hold would not undo it", *p.ActualSeconds, p.Arranged, p.ScheduledSeconds)
			return c
		}
		c.Verdict, c.Reason = NotChecked, PreconditionNotMet(p)
		if len(k.failures) > 0 {
			c.Reason += "; inside the shorter window the record shows (not judged): " + strings.Join(k.failures, "; ")
		}
		return c
	}
	unmeasured := ""
	for _, p := range c.Preconditions {
		if !p.Measured() && unmeasured == "" {
			unmeasured = "not checked: precondition not measured — " + p.Arranged + ": the record does not show when it began"
		}
	}
	switch {
	case len(k.failures) > 0:
		c.Verdict, c.Reason = Fail, strings.Join(k.failures, "; ")
	case k.notChecked != "":
		c.Verdict, c.Reason = NotChecked, k.notChecked
	case k.checked == 0:
		c.Verdict, c.Reason = Fail, "nothing was checked"
	case unmeasured != "":
		c.Verdict, c.Reason = NotChecked, unmeasured
	default:
		c.Verdict = Pass
	}
	return c
}

// seconds rounds a duration to milliseconds, as seconds.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Bounds of an interval that has only one: no lower, no upper.
const (
	noLowerBound = time.Duration(math.MinInt64)
	noUpperBound = time.Duration(math.MaxInt64)
)

// withinClocks decides lo ≤ iv ≤ hi for an interval whose ends two clocks
// read. It is false only when the interval is out of bounds whatever the
// clocks' uncertainty; when the uncertainty straddles a bound the claim is
// not checked, with the clocks named, and it is true (no failure to add).
// what names the interval in that reason.
//
// An end read on a clock the run did not measure, where the record cannot
// take it as the host's (a node reached through a node pod), decides
// nothing: the claim is not checked, naming the clock.
func (k *check) withinClocks(iv evidence.Interval, lo, hi time.Duration, what string) bool {
	if len(iv.Unmeasured) > 0 {
		if k.notChecked == "" {
			k.notChecked = fmt.Sprintf("not checked: %s is read on the clock of %s, which the run did not measure, on a cluster whose machines are not the host's (how far it reads from the host's clock is unknown)",
				what, strings.Join(iv.Unmeasured, " and "))
		}
		return true
	}
	u := iv.Uncertainty
	if (lo != noLowerBound && iv.D+u < lo) || (hi != noUpperBound && iv.D-u > hi) {
		return false
	}
	bound, straddled := time.Duration(0), false
	switch {
	case lo != noLowerBound && iv.D-u < lo:
		bound, straddled = lo, true
	case hi != noUpperBound && iv.D+u > hi:
		bound, straddled = hi, true
	}
	if straddled && k.notChecked == "" {
		var cs []string
		for _, o := range iv.Clocks {
			cs = append(cs, fmt.Sprintf("%s %+.3f s ± %.3f s", o.Clock, o.Offset, o.Uncertainty))
		}
		k.notChecked = fmt.Sprintf("not checked: %s is %.3f s ± %.3f s, and its bound %s lies within that; the clocks that read its ends differ from the host's by %s",
			what, iv.Seconds(), seconds(u), bound, strings.Join(cs, " and "))
	}
	return true
}

// notBeforeCause decides that an event the action causes (the API server's
// answer to it: a DELETED after a delete or a finalizer's removal) did not
// come before it. Only an interval below 0 by more than the clocks'
// uncertainty contradicts that; one within the uncertainty of 0 is what a
// caused event looks like across two clocks (a person's request timed by
// the API server, the event by the host, milliseconds apart) and is no
// reason to leave the claim unchecked. What the claim states about the
// event (its bound, its content) is decided apart.
//
// earliest is how early the event's time may read and still be after its
// cause (0, or less for a time of coarse resolution).
func (k *check) notBeforeCause(iv evidence.Interval, earliest time.Duration) bool {
	if len(iv.Unmeasured) > 0 {
		return true // withinClocks of the same interval says why it is not checked
	}
	return iv.D+iv.Uncertainty >= earliest
}

// observeInterval records an interval's corrected value under key, and what
// the clocks changed and left uncertain when two clocks read its ends.
func (k *check) observeInterval(key string, iv evidence.Interval) {
	k.observe(key, iv.Seconds())
	if len(iv.Clocks) > 0 {
		base := strings.TrimSuffix(key, "_seconds")
		k.observe(base+"_clock_correction_seconds", seconds(iv.Correction))
		k.observe(base+"_clock_uncertainty_seconds", seconds(iv.Uncertainty))
	}
}
