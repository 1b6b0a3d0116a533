package orphan

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "gone 0.01 s after the force delete", "the last 49.0 s later", "advanced by 49 beats", "Ready for 49.1 s", "2.4 s later", "exit code 137")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	var kept []evidence.PodEvent // the API object survived: no DELETED event
	for _, e := range rec.PodEvents {
		if e.Type != "DELETED" {
			kept = append(kept, e)
		}
	}
	rec.PodEvents = kept
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "orphan.api_object_exists_false failed") || strings.Contains(got, "Yes:") {
		t.Errorf("the answer does not say that the object stayed:\n%s", got)
	}
}
