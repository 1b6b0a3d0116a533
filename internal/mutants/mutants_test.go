package mutants_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/mutants"
	"github.com/termlab/termlab/labs"
)

const root = "../.."

// Every registered lab with a reference record: its score holds its floor,
// every mutant no claim kills has a written reason, and no reason is stale.
func TestScoresAndSurvivors(t *testing.T) {
	start := time.Now()
	results, err := mutants.RunAll(root, labs.All)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d labs mutated in %s", len(results), time.Since(start).Round(time.Millisecond))
	for _, p := range mutants.Problems(results) {
		t.Error(p)
	}
	var table strings.Builder
	mutants.PrintTable(&table, results)
	t.Log("\n" + table.String())
}

// The same record gives the same mutants, in the same order.
func TestGenerationIsDeterministic(t *testing.T) {
	for _, def := range labs.All {
		dir, ok := mutants.ReferenceRecord(root, def.Name)
		if !ok {
			continue
		}
		rec, err := evidence.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		first, second := mutants.Generate(rec, def.Claims), mutants.Generate(rec, def.Claims)
		if !slices.Equal(names(first), names(second)) {
			t.Errorf("lab:%s: two generations differ", def.Name)
		}
		if dup := duplicate(names(first)); dup != "" {
			t.Errorf("lab:%s: two mutants are named %q: the survivors table could not tell them apart", def.Name, dup)
		}
	}
}

func names(g mutants.Generated) []string {
	var out []string
	for _, m := range g.Mutants {
		out = append(out, m.Name)
	}
	return out
}

func duplicate(names []string) string {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}
