package diagnose

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every warning of every golden case is in its answer: said by an answer
// rule that speaks for its finding, or in its own words. A warning found
// but left out of the answer (the kubelet's unit inactive beside a
// finalizer, say) would let a reader act on half the cause.
func TestEveryWarningIsInTheAnswer(t *testing.T) {
	warned := 0
	for _, in := range podCases(t) {
		r := Decide(readCase(t, in))
		for _, f := range r.Findings {
			if f.Level != Warning {
				continue
			}
			warned++
			if !spokenFor(podAnswerSpeaksFor, f.ID, r.rules) && !strings.Contains(r.Answer, f.Text) {
				t.Errorf("%s: warning %s (%s) is not in the answer: %s", filepath.Base(in), f.ID, f.Text, r.Answer)
			}
		}
	}
	if warned == 0 {
		t.Fatal("no golden case has a warning: the test checks nothing")
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
