package force

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "gone 0.04 s after the force delete", "SIGTERM 0.03 s after the delete", "SIGKILL 2.0 s after the SIGTERM", "exit code 137")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	// The workload ran out its 8 s term delay and exited 0: no SIGKILL.
	for i, o := range rec.Containers {
		if o.Log != nil && o.Log.SignalAt != nil && o.FinishedAt != nil {
			at, code := o.Log.SignalAt.Add(8*time.Second), int32(0)
			rec.Containers[i].FinishedAt, rec.Containers[i].ExitCode = &at, &code
		}
	}
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "force.sigkill_after_minimum_grace failed") || strings.Contains(got, "SIGKILL 2.0 s") {
		t.Errorf("the answer does not say that the SIGKILL claim failed:\n%s", got)
	}
}
