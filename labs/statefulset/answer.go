package statefulset

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:statefulset's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	const held, replaced, split, killed, alone = "statefulset.no_replacement_while_terminating", "statefulset.replaced_after_force_delete", "statefulset.split_brain", "statefulset.old_container_killed_after_kubelet_restart", "statefulset.one_writer_again"
	return report.Join(
		f.Say(held, fmt.Sprintf("While %s was only Terminating on the node whose kubelet was stopped, the controller made no replacement: in the %s termlab waited before the force delete, one UID and one writer in the ledger.", pod, f.Arranged(held, "window_seconds"))),
		f.Say(replaced, fmt.Sprintf("A force delete removed the object %s after the request, and the controller created a new %s %s after that, Ready %s after the delete, on %s.", f.Seconds(replaced, "deleted_after_seconds"), pod, f.Seconds(replaced, "created_after_deleted_seconds"), f.Seconds(replaced, "ready_after_deleted_seconds"), f.Text(replaced, "new_node"))),
		f.Say(split, fmt.Sprintf("The old process never stopped: for %s both incarnations wrote to the ledger under one identity (%s and %s writes, the writer switching %s times) — a split brain.", f.Seconds(split, "overlap_seconds"), f.Int(split, "original_writes_in_overlap"), f.Int(split, "new_writes_in_overlap"), f.Int(split, "alternations"))),
		f.Say(killed, fmt.Sprintf("Only when its kubelet was started again was the old container ended, %s later — %s.", f.Seconds(killed, "stopped_after_seconds"), f.Text(killed, "how"))),
		f.Say(alone, fmt.Sprintf("Its last write came %s after the kubelet start; after that the ledger had one writer again.", f.Seconds(alone, "original_last_write_after_seconds"))),
	)
}
