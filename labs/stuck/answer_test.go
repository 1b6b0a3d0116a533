package stuck

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "termlab waited 41.1 s past the pod's 30 s grace deadline and 22.6 s past its node turning NotReady, and all that time the pod stayed Terminating", "NotReady 49.9 s", "deleted it within 16.2 s", "still showed its container running", "exit code 137",
		"The audit log names its sender: the pod garbage collector (system:serviceaccount:kube-system:pod-garbage-collector, gracePeriodSeconds 0)")
}

// Without an audit log the answer does not name who deleted the pod.
func TestAnswerWithoutAuditLogLeavesTheSenderOpen(t *testing.T) {
	rec := load(t)
	rec.Audit = nil
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "deleted it within 16.2 s", "Who sent that delete was not checked: the run has no audit log.")
	if strings.Contains(got, "pod garbage collector") {
		t.Errorf("the answer names the pod garbage collector with no audit log to say so:\n%s", got)
	}
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := load(t)
	// Something finished the deletion at its grace deadline, before the taint.
	del, _ := rec.Action("delete", pod)
	for i, e := range rec.PodEvents {
		if e.Name == pod && e.Type == "DELETED" {
			rec.PodEvents[i].ObservedAt = del.StartedAt.Add(grace)
		}
	}
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "stuck.stays_terminating failed") || strings.Contains(got, "stayed Terminating") {
		t.Errorf("the answer does not say that the pod did not stay Terminating:\n%s", got)
	}
}
