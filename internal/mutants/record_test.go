package mutants

import (
	"reflect"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/labs/force"
)

const forceRecord = "../../labs/force/testdata/20261202-111925-7f5b"

// Each mutant breaks its own copy: the reference record, and so every
// other mutant, is left as it was.
func TestMutantsLeaveTheReferenceAlone(t *testing.T) {
	ref, err := evidence.Load(forceRecord)
	if err != nil {
		t.Fatal(err)
	}
	want := clone(ref)
	gen := Generate(ref, force.Claims)
	if len(gen.Mutants) == 0 {
		t.Fatal("no mutants")
	}
	for _, m := range gen.Mutants {
		rec := clone(ref)
		m.apply(rec)
		if reflect.DeepEqual(rec, ref) {
			t.Errorf("%s changed nothing", m.Name)
		}
	}
	if !reflect.DeepEqual(ref, want) {
		t.Error("applying the mutants changed the reference record")
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"drop kube event *", "drop kube event 3 (Killing Pod/x)", true},
		{"drop kube event *", "drop pod event 3 (DELETED x rv 1)", false},
		{"watch gap in the pods watch over step *(cleanup)", "watch gap in the pods watch over step 7 (cleanup)", true},
		{"watch gap in the pods watch over step *(cleanup)", "watch gap in the pods watch over step 2 (force delete)", false},
		{"swap pod events 5 and 6 (x)", "swap pod events 5 and 6 (x)", true},
		{"swap pod events 5 and 6 (x)", "swap pod events 5 and 6 (y)", false},
	} {
		if got := matches(tc.pattern, tc.name); got != tc.want {
			t.Errorf("matches(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}
