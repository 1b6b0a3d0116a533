package stuck

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:stuck's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	const stays, notReady, tainted, collected, running, stopped = "stuck.stays_terminating", "stuck.node_not_ready", "stuck.node_unreachable_taint", "stuck.pod_gc_deleted", "stuck.container_running_after_gone", "stuck.container_stopped_after_kubelet_restart"
	return report.Join(
		f.Say(stays, fmt.Sprintf("Only the kubelet finishes a graceful delete: termlab waited %s past the pod's %s s grace deadline and %s past its node turning NotReady, and all that time the pod stayed Terminating.", f.Arranged(stays, "until_past_deadline_seconds"), f.Int(stays, "deletionGracePeriodSeconds"), f.Arranged(stays, "until_past_not_ready_seconds"))),
		f.Say(notReady, fmt.Sprintf("The node turned NotReady %s after the kubelet stop.", f.Seconds(notReady, "not_ready_after_seconds"))),
		f.Say(tainted, fmt.Sprintf("It was tainted unreachable %s after the stop.", f.Seconds(tainted, "tainted_after_seconds"))),
		f.Say(collected, fmt.Sprintf("After the out-of-service taint a controller, not the stopped kubelet, marked the pod Failed and deleted it within %s,", f.Seconds(collected, "deleted_after_seconds"))),
		f.Say(running, "while crictl still showed its container running: the taint's promise (the node is shut down) was false."),
		deletedBy(f, decided),
		f.Say(stopped, fmt.Sprintf("The kubelet, started again, ended the container %s later — %s.", f.Seconds(stopped, "stopped_after_seconds"), f.Text(stopped, "how"))),
	)
}

// deletedBy says who sent the delete, as far as the run can tell: only the
// audit log names the sender, and a run without one leaves it open.
func deletedBy(f report.Findings, decided []claims.Claim) string {
	for _, c := range decided {
		if c.ID == idDeletedByPodGC && c.Verdict == claims.NotChecked {
			return "Who sent that delete was not checked: the run has no audit log."
		}
	}
	return f.Say(idDeletedByPodGC, fmt.Sprintf("The audit log names its sender: the pod garbage collector (%s, gracePeriodSeconds %s).", f.Text(idDeletedByPodGC, "deleted_by"), f.Text(idDeletedByPodGC, "deleted_with_grace_period_seconds")))
}
