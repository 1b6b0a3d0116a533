package mount

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:mount's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	return report.Join(
		f.Say(idExited, fmt.Sprintf("The process was gone early: the container exited by itself (exit code %s) %s after the delete, while the object stayed.", f.Int(idExited, "exit_code"), f.Seconds(idExited, "stopped_after_seconds"))),
		f.Say(idStays, fmt.Sprintf("The volume held it: the kubelet cannot let a pod go before its volumes are unmounted, and its umount failed %s times (target is busy) while a process had its working directory in the tmpfs; the pod stayed Terminating through the %s termlab held the mount after its container's exit, until the release.", f.Int(idStays, "teardown_failures_while_held"), f.Arranged(idStays, "held_after_exit_seconds"))),
		f.Say(idGone, fmt.Sprintf("Released, it went %s later: at the kubelet's next retry, %s after the release (its back-off had grown to %s).", f.Seconds(idGone, "deleted_after_release_seconds"), f.Seconds(idGone, "retry_after_release_seconds"), f.Text(idGone, "backoff_at_release"))),
		f.Say(idUnmount, "The node's mount table showed the tmpfs mounted while held and nothing there once the pod was gone."),
	)
}
