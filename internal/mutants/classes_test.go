package mutants

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// fakeRecord: a delete, a container that stopped 1 s after it, and a node
// that went NotReady, which the fake claims below never read.
func fakeRecord() *evidence.Record {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	stopped := t0.Add(time.Second)
	return &evidence.Record{
		Lab:   "fake",
		Steps: []evidence.Step{{Name: "delete", StartedAt: t0, FinishedAt: t0.Add(2 * time.Second)}},
		Actions: []evidence.Action{{Step: "delete", Kind: evidence.ActionDelete, Target: "p",
			StartedAt: t0, FinishedAt: t0.Add(10 * time.Millisecond)}},
		Containers: []evidence.ContainerObservation{{Pod: "p", ObservedAt: stopped, FinishedAt: &stopped}},
		NodeEvents: []evidence.NodeEvent{
			{Type: "LISTED", Name: "n", Ready: "True", ObservedAt: t0},
			{Type: "MODIFIED", Name: "n", Ready: "Unknown", ObservedAt: t0.Add(time.Second)},
		},
	}
}

// fakeDecide is a lab of one claim: the container stopped within 10 s of
// the delete, a timing it vouches for within tol.
func fakeDecide(tol time.Duration) Decide {
	return func(rec *evidence.Record) []claims.Claim {
		c := claims.Claim{ID: "fake.stopped", Statement: "stops within 10 s", Verdict: claims.Fail, Observed: map[string]any{}}
		if len(rec.Actions) > 0 && len(rec.Containers) > 0 && rec.Containers[0].FinishedAt != nil {
			s := rec.Containers[0].FinishedAt.Sub(rec.Actions[0].StartedAt).Seconds()
			c.Observed["stopped_after_seconds"] = s
			if s >= 0 && s <= 10 {
				c.Verdict = claims.Pass
			}
		}
		return []claims.Claim{c.WithTolerance("stopped_after_seconds", tol)}
	}
}

// What the fake claims read: Actions and Containers, never NodeEvents or Gaps.
var fakeReads = map[string]bool{"Actions": true, "Containers": true}

func byName(outcomes []Outcome) map[string]Outcome {
	out := map[string]Outcome{}
	for _, o := range outcomes {
		out[o.Name] = o
	}
	return out
}

func TestSurvivorOnAnUnreadStreamIsEquivalent(t *testing.T) {
	outcomes, _, _ := Mutate(fakeRecord(), fakeDecide(5*time.Second), fakeReads, nil)
	seen := 0
	for _, o := range outcomes {
		if o.Operator != OpDrop && o.Operator != OpSwap && o.Operator != OpGap {
			continue
		}
		seen++
		if o.Class != ClassEquivalent {
			t.Errorf("%s (touches %v): %s, want equivalent", o.Name, o.Touched, o.Class)
		}
	}
	if seen == 0 {
		t.Fatal("no drop, swap or gap mutants of the node watch")
	}
	// Without knowing what the claims read, nothing is equivalent.
	outcomes, _, _ = Mutate(fakeRecord(), fakeDecide(5*time.Second), nil, nil)
	for _, o := range outcomes {
		if o.Class == ClassEquivalent {
			t.Errorf("%s equivalent with the claims' reads unknown", o.Name)
		}
	}
}

func TestStretchWithinItsToleranceIsTolerated(t *testing.T) {
	outcomes := byName(mustMutate(t, 5*time.Second))
	o, ok := outcomes["stretch ×2 fake.stopped stopped_after_seconds (Containers[0].FinishedAt)"]
	if !ok {
		t.Fatalf("no stretch mutant among %v", keys(outcomes))
	}
	if o.Class != ClassTolerated {
		t.Fatalf("%s: %s, want tolerated", o.Name, o.Class)
	}
	var out strings.Builder
	Print(&out, []Result{{Lab: "fake", Record: "fake", Outcomes: []Outcome{o}}})
	for _, want := range []string{"tolerated", "1.000 s → 2.000 s", "within its tolerance ±5 s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed without %q:\n%s", want, out.String())
		}
	}
}

func TestSurvivorWithoutReviewedReasonFails(t *testing.T) {
	// A tolerance of 0.1 s: the claim says a second more is another
	// behaviour, yet it passes the stretch. That is a missing mutant.
	outcomes := mustMutate(t, 100*time.Millisecond)
	name := "stretch ×2 fake.stopped stopped_after_seconds (Containers[0].FinishedAt)"
	o := byName(outcomes)[name]
	if o.Class != ClassMissing || o.Reason != "" {
		t.Fatalf("%s: %s with reason %q, want missing without one", name, o.Class, o.Reason)
	}
	problems := strings.Join(Problems([]Result{{Lab: "fake", Record: "fake", Outcomes: outcomes}}), "\n")
	if !strings.Contains(problems, name) || !strings.Contains(problems, "has no reason") {
		t.Errorf("no problem for %q:\n%s", name, problems)
	}
	// A reviewed reason lets it pass; an "equivalent: " one is not a reason.
	for why, wantProblem := range map[string]bool{
		"reviewed: the fake claim's bound is wider than its tolerance on purpose": false,
		"equivalent: written by hand": true,
	} {
		reasons := []Reason{{name, why}}
		outcomes, _, _ := Mutate(fakeRecord(), fakeDecide(100*time.Millisecond), fakeReads, reasons)
		var got []string
		for _, p := range Problems([]Result{{Lab: "fake", Record: "fake", Outcomes: outcomes, Reasons: reasons}}) {
			if strings.Contains(p, "stretch ×2") {
				got = append(got, p)
			}
		}
		if (len(got) > 0) != wantProblem {
			t.Errorf("reason %q: problems %v", why, got)
		}
	}
}

// A tolerance that is an allowance of bounds.go is printed with the spread
// measured for it.
func TestToleranceWithItsMeasuredSpread(t *testing.T) {
	outcomes := byName(mustMutate(t, claims.WatchAllowance))
	o := outcomes["stretch ×2 fake.stopped stopped_after_seconds (Containers[0].FinishedAt)"]
	if o.Class != ClassTolerated || len(o.Moved) != 1 {
		t.Fatalf("%s: %s, moved %v", o.Name, o.Class, o.Moved)
	}
	if got := o.Moved[0].String(); !strings.Contains(got, "±1 s (the value of claims.WatchAllowance, whose latency was measured here at 0.008–0.072 s") {
		t.Errorf("printed %q", got)
	}
}

func mustMutate(t *testing.T, tol time.Duration) []Outcome {
	t.Helper()
	outcomes, passed, _ := Mutate(fakeRecord(), fakeDecide(tol), fakeReads, nil)
	if passed != 1 {
		t.Fatalf("%d claims passed on the fake record, want 1", passed)
	}
	return outcomes
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

// Were the reads analysis to miss a read, the equivalent mutants it gave
// would change what the claims observe: the check says so.
func TestAMissedReadIsCaught(t *testing.T) {
	decide := func(rec *evidence.Record) []claims.Claim {
		cs := fakeDecide(5 * time.Second)(rec)
		cs[0].Observed["node_events"] = len(rec.NodeEvents) // a read fakeReads does not list
		return cs
	}
	outcomes, _, _ := Mutate(fakeRecord(), decide, fakeReads, nil)
	o := byName(outcomes)["drop node event 1 (MODIFIED n Ready=Unknown)"]
	if o.Class != ClassEquivalent || o.Unsound == "" {
		t.Fatalf("%s: %s, unsound %q", o.Name, o.Class, o.Unsound)
	}
	problems := strings.Join(Problems([]Result{{Lab: "fake", Record: "fake", Outcomes: outcomes}}), "\n")
	if !strings.Contains(problems, "is computed equivalent, but the claims decide differently") {
		t.Errorf("problems:\n%s", problems)
	}
}

// A timing its claim states no tolerance for is stretched too, and its
// surviving stretch is missing, never tolerated: only a tolerance says
// another run may show that value.
func TestStretchOfAnUntoleratedTimingIsMissing(t *testing.T) {
	untolerated := func(rec *evidence.Record) []claims.Claim {
		c := fakeDecide(time.Second)(rec)[0]
		c.Tolerances = nil
		return []claims.Claim{c}
	}
	outcomes, _, _ := Mutate(fakeRecord(), untolerated, fakeReads, nil)
	o, ok := byName(outcomes)["stretch ×2 fake.stopped stopped_after_seconds (Containers[0].FinishedAt)"]
	if !ok {
		t.Fatalf("the untolerated timing was not stretched: %v", keys(byName(outcomes)))
	}
	if o.Killed() || o.Class != ClassMissing {
		t.Errorf("%s: %s (killed by %v), want missing: 2 s is inside the claim's 10 s and no tolerance vouches for it", o.Name, o.Class, o.KilledBy)
	}
}
