package finalizer

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:finalizer's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	const k, w = "finalizer.kubelet", "finalizer.kwok"
	return report.Join(
		"Neither delete removes the object while its finalizer stays.",
		f.Say(k+".delete.object_stays", fmt.Sprintf("On the real worker the object stayed through the %s termlab waited after an ordinary delete (grace %s s)",
			f.Arranged(k+".delete.object_stays", "hold_before_release_seconds"), f.Int(k+".delete.object_stays", "deletionGracePeriodSeconds"))),
		f.Say(k+".force.object_stays", fmt.Sprintf("and through the %s after a force delete (grace %s s), finalizer set.",
			f.Arranged(k+".force.object_stays", "hold_before_release_seconds"), f.Int(k+".force.object_stays", "deletionGracePeriodSeconds"))),
		f.Say(k+".delete.graceful_stop", fmt.Sprintf("The container had long stopped: SIGTERM %s after the ordinary delete, exit code %s %s after that",
			f.Seconds(k+".delete.graceful_stop", "sigterm_after_seconds"), f.Int(k+".delete.graceful_stop", "exit_code"), f.Seconds(k+".delete.graceful_stop", "stopped_after_sigterm_seconds"))),
		f.Say(k+".delete.container_stopped", fmt.Sprintf("(pod phase %s).", f.Text(k+".delete.container_stopped", "pod_phase"))),
		f.Say(k+".finalizer_removed.deleted", fmt.Sprintf("Removing the finalizer deleted the object %s later.", f.Seconds(k+".finalizer_removed.deleted", "deleted_after_seconds"))),
		f.Say(w+".delete.object_stays", fmt.Sprintf("On the kwok fake node the object stayed too: through %s after the ordinary delete,", f.Arranged(w+".delete.object_stays", "hold_before_release_seconds"))),
		f.Say(w+".force.object_stays", fmt.Sprintf("%s after the force delete,", f.Arranged(w+".force.object_stays", "hold_before_release_seconds"))),
		f.Say(w+".finalizer_removed.deleted", fmt.Sprintf("and went %s after the finalizer's removal.", f.Seconds(w+".finalizer_removed.deleted", "deleted_after_seconds"))),
	)
}
