package sidecar

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "Yes, as documented", "SIGTERM 2.1 s after the delete", "sidecar-b 0.39 s after app's exit",
		"0.26 s after sidecar-b had exited", "within 0.03 s of each other", "killed (exit code 137) 6.1 s after the delete",
		"sidecar-b got SIGTERM 0.04 s before and sidecar-a 0.03 s before that kill")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	// sidecar-a, started first, got SIGTERM before the main container exited.
	sigtermAt(rec, podOrdered, sidecarA, of(rec, podOrdered, mainName).Finished.Add(-100*time.Millisecond))
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "sidecar.reverse_start_order failed") || strings.HasPrefix(got, "Yes") {
		t.Errorf("the answer does not say that the order claim failed:\n%s", got)
	}
}

func TestReportTableNamesWhereEachExitWasRead(t *testing.T) {
	rec := load(t)
	body := Report(rec, nil)[0].Body
	labtest.Contains(t, "report", body, "| sidecars | app (main) |", "| sidecars-overrun | app (main) |", "| 137 |")
}
