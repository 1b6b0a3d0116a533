package force

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:force's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	const gone, outlives, stops, killed = "force.api_object_gone", "force.container_outlives_object", "force.container_stops", "force.sigkill_after_minimum_grace"
	return report.Join(
		f.Say(gone, fmt.Sprintf("No: the API object was gone %s after the force delete,", f.Seconds(gone, "deleted_after_seconds"))),
		f.Say(outlives, fmt.Sprintf("while crictl still showed the container running %s after that.", f.Seconds(outlives, "last_seen_running_after_deleted_seconds"))),
		f.Say(killed, fmt.Sprintf("The kubelet sent SIGTERM %s after the delete and SIGKILL %s after the SIGTERM — its minimum grace, not the pod's 30 s: exit code %s, the workload's 8 s shutdown cut short.",
			f.Seconds(killed, "sigterm_after_seconds"), f.Seconds(killed, "stopped_after_sigterm_seconds"), f.Int(killed, "exit_code"))),
		f.Say(stops, fmt.Sprintf("The container outlived its API object by %s.", f.Seconds(stops, "stopped_after_deleted_seconds"))),
	)
}
