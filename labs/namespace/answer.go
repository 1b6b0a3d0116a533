package namespace

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:namespace's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	return report.Join(
		f.Say(idAPIHolds, fmt.Sprintf("An APIService with no endpoints held its namespace: %s after the delete the namespace said NamespaceDeletionDiscoveryFailure (%s), and it stayed %s until the APIService was deleted;",
			f.Seconds(idAPIHolds, "conditions_after_delete_seconds"), f.Text(idAPIHolds, "condition"), f.Seconds(idAPIHolds, "held_until_release_seconds"))),
		f.Say(idAPIFrees, fmt.Sprintf("then it was gone %s later, finalized by the namespace controller (the backoff allowed %s).",
			f.Seconds(idAPIFrees, "gone_after_release_seconds"), f.Seconds(idAPIFrees, "bound_seconds"))),
		f.Say(idOrphanHolds, fmt.Sprintf("A custom resource whose finalizer no controller removes held the next one: %s after its delete the conditions said %q; the namespace controller deleted it (%s) and no one else touched it.",
			f.Seconds(idOrphanHolds, "conditions_after_delete_seconds"), f.Text(idOrphanHolds, "condition"), f.Text(idOrphanHolds, "deleted_by"))),
		f.Say(idOrphanFrees, fmt.Sprintf("Removing the finalizer as its controller would let the namespace go %s later, at the controller's next look (at most 8 s after a pass that found a finalizer; 5 s after a pass that changed the conditions).",
			f.Seconds(idOrphanFrees, "gone_after_release_seconds"))),
		f.Say(idClaimHeld, fmt.Sprintf("A claim deleted while a pod used it stayed %s, held by %s, until the pod was gone; the PVC protection controller let it go %s after the pod's DELETED.",
			f.Seconds(idClaimHeld, "kept_after_its_delete_seconds"), PVCProtection, f.Seconds(idClaimHeld, "finalizer_removed_after_pod_gone_seconds"))),
		f.Say(idPodsFirst, fmt.Sprintf("Its namespace waited on the pod first (%s after the delete), its conditions naming no remaining content meanwhile, deleted the claims only then, and was gone %s after the pod. No namespace's finalizers were stripped.",
			f.Seconds(idPodsFirst, "pod_gone_after_delete_seconds"), f.Seconds(idPodsFirst, "namespace_gone_after_pod_seconds"))),
	)
}
