package orphan

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:orphan's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	const gone, running, beating, notReady, stopped = "orphan.api_object_exists_false", "orphan.container_running", "orphan.heartbeat_advancing", "orphan.node_not_ready", "orphan.container_stopped_after_kubelet_restart"
	how := f.Text(stopped, "how")
	if how == "" {
		how = "exit code " + f.Int(stopped, "exit_code")
	}
	return report.Join(
		f.Say(gone, fmt.Sprintf("Yes: with the kubelet stopped, the API object was gone %s after the force delete,", f.Seconds(gone, "deleted_after_seconds"))),
		f.Say(running, fmt.Sprintf("yet crictl showed the container running at every look, the last %s later.", f.Seconds(running, "last_seen_running_after_deleted_seconds"))),
		f.Say(beating, fmt.Sprintf("Its heartbeat advanced by %s beats meanwhile.", f.Int(beating, "advanced_by"))),
		f.Say(notReady, fmt.Sprintf("The API reported the node Ready for %s after the kubelet stopped (then Ready=%s).", f.Seconds(notReady, "not_ready_after_seconds"), f.Text(notReady, "ready"))),
		f.Say(stopped, fmt.Sprintf("Started again, the kubelet ended the orphan %s later — %s.", f.Seconds(stopped, "stopped_after_seconds"), how)),
	)
}
