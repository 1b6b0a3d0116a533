package lab

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// After a phase fails only the phases marked always run, and the first
// failure is what the run returns.
func TestRunPhasesRunsOnlyAlwaysAfterAFailure(t *testing.T) {
	var ran []string
	failed := errors.New("the steps failed")
	step := func(name string, err error) func(context.Context) error {
		return func(context.Context) error { ran = append(ran, name); return err }
	}
	err := runPhases(context.Background(), []phase{
		{name: "a", run: step("a", nil)},
		{name: "b", run: step("b", failed)},
		{name: "c", run: step("c", nil)},
		{name: "d", run: step("d", errors.New("later")), always: true},
		{name: "e", run: step("e", nil), always: true},
	})
	if !errors.Is(err, failed) || strings.Join(ran, " ") != "a b d e" {
		t.Errorf("ran %v, returned %v; want a b d e and the first failure", ran, err)
	}
}

// Every phase after the steps runs on every exit path (cleanup, the
// reports); one before them does not, as it needs the run begun.
func TestPhasesAfterTheStepsAlwaysRun(t *testing.T) {
	phases := (&execution{}).phases(nil)
	steps := slices.IndexFunc(phases, func(p phase) bool { return p.name == "steps" })
	if steps < 0 {
		t.Fatal("no steps phase")
	}
	for i, p := range phases {
		if p.always != (i > steps) {
			t.Errorf("phase %s: always %v, want %v", p.name, p.always, i > steps)
		}
	}
}

// A run that could not begin has nothing to finish or decide: the always
// phases leave it alone, and its error is returned as it is.
func TestARunThatDidNotBeginFinishesNothing(t *testing.T) {
	x := &execution{}
	phases := x.phases(nil)
	noLock := errors.New("waiting for the run lock: interrupted")
	phases[0].run = func(context.Context) error { return noLock }
	if err := runPhases(context.Background(), phases); err != noLock || x.summary != nil {
		t.Errorf("returned %v, summary %v; want the begin error and no summary", err, x.summary)
	}
}
