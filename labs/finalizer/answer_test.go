package finalizer

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "stayed through the 5.7 s termlab waited after an ordinary delete (grace 30 s)", "through the 5.0 s after a force delete (grace 0 s)", "SIGTERM 0.11 s after the ordinary delete, exit code 0", "kwok fake node the object stayed too: through 5.9 s")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	// kwok ≤ v0.7: finalizers emptied and the object deleted right after the ordinary delete.
	del, _ := rec.Action("delete", "held-kwok")
	for i, e := range rec.PodEvents {
		if e.Name == "held-kwok" && e.Type == "DELETED" {
			rec.PodEvents[i].ObservedAt = del.FinishedAt.Add(100 * time.Millisecond)
			rec.PodEvents[i].Finalizers = nil
		}
	}
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "finalizer.kwok.delete.object_stays failed") || strings.Contains(got, "the object stayed too") {
		t.Errorf("the answer does not say that the kwok object went:\n%s", got)
	}
}
