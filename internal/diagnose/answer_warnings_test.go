package diagnose

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every warning of every golden case is in its answer: said by an answer
// rule that speaks for its finding, or in its own words. A warning found
// but left out of the answer (the kubelet's unit inactive beside a
// finalizer, say) would let a reader act on half the cause.
func TestEveryWarningIsInTheAnswer(t *testing.T) {
	warned := map[string]int{}
	for _, in := range podCases(t) {
		r := Decide(readCase(t, in))
		warned["pod"] += requireWarningsSaid(t, filepath.Base(in), r.Answer, r.Findings, r.rules, podAnswerSpeaksFor)
	}
	for _, in := range namespaceCases(t) {
		r := DecideNamespace(readNSCase(t, in))
		warned["namespace"] += requireWarningsSaid(t, filepath.Base(in), r.Answer, r.Findings, r.rules, nsAnswerSpeaksFor)
	}
	for _, kind := range []string{"pod", "namespace"} {
		if warned[kind] == 0 {
			t.Errorf("no golden %s case has a warning: the test checks nothing there", kind)
		}
	}
}

// requireWarningsSaid fails for a warning neither spoken for by an answer
// rule that fired nor in the answer in its own words; it returns how many
// warnings it checked.
func requireWarningsSaid(t *testing.T, name, answer string, findings []Finding, fired []string, speaksFor map[string][]string) int {
	t.Helper()
	warned := 0
	for _, f := range findings {
		if f.Level != Warning {
			continue
		}
		warned++
		if !spokenFor(speaksFor, f.ID, fired) && !strings.Contains(answer, f.Text) {
			t.Errorf("%s: warning %s (%s) is not in the answer: %s", name, f.ID, f.Text, answer)
		}
	}
	return warned
}

// nsAnswerSpeaksFor says the rules for namespace.finalizers speak for every
// finalizer of the namespace's own: each golden case of a namespace being
// deleted names each of them in its answer.
func TestNamespaceOwnFinalizersAreNamedInTheAnswer(t *testing.T) {
	named := 0
	for _, in := range namespaceCases(t) {
		c := readNSCase(t, in)
		if c.Namespace == nil || c.Namespace.DeletionTimestamp == nil {
			continue
		}
		r := DecideNamespace(c)
		for _, fz := range append(specFinalizers(c.Namespace), c.Namespace.Finalizers...) {
			named++
			if !strings.Contains(r.Answer, fz) {
				t.Errorf("%s: the namespace's own finalizer %s is not named in the answer: %s", filepath.Base(in), fz, r.Answer)
			}
		}
	}
	if named == 0 {
		t.Fatal("no golden namespace case being deleted has a finalizer of its own: the test checks nothing")
	}
}

// A warning no answer rule speaks for is said in its own words.
func TestNamespaceWarningNoRuleSpeaksForIsWeighed(t *testing.T) {
	odd := Finding{ID: "namespace.odd", Level: Warning, Text: "Something odd."}
	s, fired := weighWarnings([]Finding{odd}, nsAnswerSpeaksFor, nil, []string{"answer.remaining"})
	if len(s) != 1 || s[0] != "Also weigh: Something odd." || !slices.Contains(fired, "answer.warning.namespace.odd") {
		t.Errorf("an unspoken warning: got %q, fired %v", s, fired)
	}
	// Spoken for: a leftover type's warning once the head said it.
	left := Finding{ID: FindRemaining("configmaps"), Level: Warning, Text: "1 configmaps remains."}
	if s, _ := weighWarnings([]Finding{left}, nsAnswerSpeaksFor, nil, []string{"answer.remaining"}); len(s) != 0 {
		t.Errorf("a warning the head spoke for was said again: %q", s)
	}
	if s, _ := weighWarnings([]Finding{left}, nsAnswerSpeaksFor, nil, []string{"answer.nothing-remains"}); len(s) != 1 {
		t.Errorf("a warning no fired rule spoke for was left out: %q", s)
	}
}

// The case the issue reported: a finalizer and a kubelet unit found
// inactive while the Lease is fresh; the answer names the kubelet's unit.
func TestKubeletUnitWarningReachesTheAnswer(t *testing.T) {
	r := Decide(readCase(t, filepath.Join("testdata", "decide", "pod", "kubelet-unit-read-against-the-lease.collected.json")))
	if !strings.Contains(r.Answer, "systemd's kubelet unit on") {
		t.Errorf("answer leaves out the kubelet unit's warning: %s", r.Answer)
	}
}
