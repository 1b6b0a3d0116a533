// Package labtest holds what every lab's claim tests share: loading a real
// recorded run from testdata and checking that all its claims pass, each
// citing evidence.
package labtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Load reads a recorded run folder, failing the test if it cannot.
func Load(t *testing.T, dir string) *evidence.Record {
	t.Helper()
	rec, err := evidence.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// ByID indexes claims by their id.
func ByID(cs []claims.Claim) map[string]claims.Claim {
	out := map[string]claims.Claim{}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out
}

// AllPass fails the test unless there are want claims (any number when want
// is 0), every one passed, every one cites evidence, and every timing a claim
// vouches for is one it observed (results:compare could not hold a run to it
// otherwise).
func AllPass(t *testing.T, cs []claims.Claim, want int) {
	t.Helper()
	if len(cs) == 0 || (want > 0 && len(cs) != want) {
		t.Fatalf("%d claims, want %d", len(cs), want)
	}
	for _, c := range cs {
		if !c.Passed() {
			t.Errorf("%s: %s", c.ID, c.Reason)
		}
		if len(c.Evidence) == 0 {
			t.Errorf("%s cites no evidence", c.ID)
		}
		for k, tol := range c.Tolerances {
			if _, ok := c.Observed[k].(float64); !ok || !strings.HasSuffix(k, "_seconds") || tol <= 0 {
				t.Errorf("%s vouches for %s (±%g s), which is not a timing it observed (a number under a key ending in _seconds)", c.ID, k, tol)
			}
		}
	}
}

// MustFail fails the test unless every named claim exists and failed: a
// misspelt id must not let a contradicting record pass unnoticed.
func MustFail(t *testing.T, cs []claims.Claim, ids ...string) {
	t.Helper()
	got := ByID(cs)
	for _, id := range ids {
		c, ok := got[id]
		if !ok {
			t.Fatalf("no claim %s", id)
		}
		if c.Passed() {
			t.Errorf("%s passed on a record that contradicts it", id)
		}
	}
}

// OnlyFail is MustFail, and every other claim passed.
func OnlyFail(t *testing.T, cs []claims.Claim, ids ...string) {
	t.Helper()
	MustFail(t, cs, ids...)
	failing := map[string]bool{}
	for _, id := range ids {
		failing[id] = true
	}
	for _, c := range cs {
		if !failing[c.ID] && !c.Passed() {
			t.Errorf("%s failed unexpectedly: %s", c.ID, c.Reason)
		}
	}
}

// Contains fails the test for each of wants that text (what it is, e.g.
// "answer") does not contain.
func Contains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// ActorActions are the actions a run's steps had its actor do — termlab,
// or a script or a person with -by — one per kind, first first: not the
// creations (always termlab's) and not cleanup's (Step "").
func ActorActions(rec *evidence.Record) []evidence.Action {
	var out []evidence.Action
	seen := map[evidence.ActionKind]bool{}
	for _, a := range rec.Actions {
		k := string(a.Kind)
		if a.Step == "" || strings.HasPrefix(k, "create") || strings.HasPrefix(k, "cleanup") || seen[a.Kind] {
			continue
		}
		seen[a.Kind] = true
		out = append(out, a)
	}
	return out
}

// OnDisk moves the record's pod events to an events.jsonl of its own, each
// line with a whole object as the recorder writes it, and makes the record
// read them from there (evidence.Record.PodEventsOnDisk): the way a record
// of thousands of pods holds them.
func OnDisk(t *testing.T, rec *evidence.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), evidence.EventsFile)
	var b bytes.Buffer
	for _, e := range rec.PodEvents {
		// An object whose own members are named like the line's: the reader
		// must cut the line before it, not inside it.
		e.Object = json.RawMessage(fmt.Sprintf(`{"kind":"Pod","metadata":{"name":%q,"labels":{"object":"x"}},"status":{"phase":"Nope","object":{"type":"DELETED"}}}`, e.Name))
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rec.PodEventsOnDisk(path, len(rec.PodEvents))
}

// BreaksWatchOrder feeds the lab's claims three copies of its recorded run,
// each with one pod's watch events in an order a watch never sends — a
// resourceVersion that goes down, an ADDED after a MODIFIED, an event after
// DELETED (the last two swapped as internal/mutants swaps them: the events
// trade places, their times stay) — and fails the test unless the lab's
// WatchOrder claim fails on each, naming the rule broken. The pod is the one
// with the most events among those that begin ADDED, MODIFIED and end
// DELETED.
func BreaksWatchOrder(t *testing.T, load func(*testing.T) *evidence.Record, decide func(*evidence.Record) []claims.Claim, lab string) {
	t.Helper()
	for _, tc := range []struct {
		name   string
		rule   evidence.OrderRule
		break_ func(rec *evidence.Record, at []int)
	}{
		{"a resourceVersion goes down", evidence.OrderVersionsRise, func(rec *evidence.Record, at []int) {
			before, err := strconv.ParseUint(rec.PodEvents[at[0]].ResourceVersion, 10, 64)
			if err != nil || before == 0 {
				t.Fatalf("resourceVersion %q is not a positive integer", rec.PodEvents[at[0]].ResourceVersion)
			}
			rec.PodEvents[at[1]].ResourceVersion = strconv.FormatUint(before-1, 10)
		}},
		{"an ADDED after a MODIFIED", evidence.OrderAddedFirst, func(rec *evidence.Record, at []int) {
			swapPodEvents(rec, at[0], at[1])
		}},
		{"an event after DELETED", evidence.OrderDeletedLast, func(rec *evidence.Record, at []int) {
			swapPodEvents(rec, at[len(at)-2], at[len(at)-1])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			if rec.PodEvents == nil {
				t.Fatal("the record's pod events are on disk: load it whole")
			}
			tc.break_(rec, orderedPod(t, rec))
			id := claims.WatchOrderID(lab)
			MustFail(t, decide(rec), id)
			if c := ByID(decide(rec))[id]; !strings.Contains(c.Reason, string(tc.rule)) {
				t.Errorf("%s does not name the rule broken, %q: %s", id, tc.rule, c.Reason)
			}
		})
	}
}

// orderedPod are the indexes in rec.PodEvents of the events of the pod (by
// UID) with the most events among those that begin ADDED, MODIFIED and end
// DELETED, at least three.
func orderedPod(t *testing.T, rec *evidence.Record) []int {
	t.Helper()
	byUID := map[string][]int{}
	for i, e := range rec.PodEvents {
		byUID[e.UID] = append(byUID[e.UID], i)
	}
	var best []int
	bestUID := ""
	for uid, at := range byUID {
		n := len(at)
		if uid == "" || n < 3 || rec.PodEvents[at[0]].Type != "ADDED" || rec.PodEvents[at[1]].Type != "MODIFIED" || rec.PodEvents[at[n-1]].Type != "DELETED" {
			continue
		}
		if n > len(best) || (n == len(best) && uid < bestUID) {
			best, bestUID = at, uid
		}
	}
	if best == nil {
		t.Fatal("no pod of the record begins ADDED, MODIFIED and ends DELETED")
	}
	return best
}

// swapPodEvents exchanges what pod events i and j said, keeping their times.
func swapPodEvents(rec *evidence.Record, i, j int) {
	x, y := &rec.PodEvents[i], &rec.PodEvents[j]
	*x, *y = *y, *x
	x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
}

// Decided fails the test unless claim id has verdict v and its reason
// mentions reasonHas: "not checked" and "fail" are told apart (MustFail
// takes either).
func Decided(t *testing.T, cs []claims.Claim, id string, v claims.Verdict, reasonHas string) {
	t.Helper()
	c, ok := ByID(cs)[id]
	switch {
	case !ok:
		t.Fatalf("no claim %s", id)
	case c.Verdict != v:
		t.Errorf("%s: %s (%s), want %s", id, c.Verdict, c.Reason, v)
	case !strings.Contains(c.Reason, reasonHas):
		t.Errorf("%s: reason %q does not mention %q", id, c.Reason, reasonHas)
	}
}

// DropForceUpdate removes from the pods watch the update a force delete
// writes (deletionGracePeriodSeconds 0) before its DELETED.
func DropForceUpdate(rec *evidence.Record) {
	rec.PodEvents = slices.DeleteFunc(rec.PodEvents, func(e evidence.PodEvent) bool {
		return e.Type == "MODIFIED" && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0
	})
}

// TerminatedWhileRunning makes the first Running pod event whose first
// container has an ID report that container terminated.
func TerminatedWhileRunning(rec *evidence.Record) {
	for i, e := range rec.PodEvents {
		if e.Phase == "Running" && len(e.Containers) > 0 && e.Containers[0].ContainerID != "" {
			cs := append([]evidence.ContainerState(nil), e.Containers...)
			cs[0].State = "terminated"
			rec.PodEvents[i].Containers = cs
			return
		}
	}
}
