package kwoklab

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "faithful stage set matched the kubelet transition for transition (scenarios: finalizer, plain)", "grace collapsed to 0 after 0.21 s", "stripped finalizer lab.example.com/cleanup 0.12 s after the delete")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	replaceEvents(rec, "finalizer-faithful", "finalizer-kwok-v08-fast") // faithful behaves like v0.8
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "kwok.faithful.finalizer.matches_kubelet failed") || strings.Contains(got, "scenarios: finalizer,") {
		t.Errorf("the answer does not say that the faithful set differed:\n%s", got)
	}
}
