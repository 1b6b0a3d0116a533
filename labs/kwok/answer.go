package kwoklab

import (
	"fmt"
	"strings"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/report"
)

// Answer is the opening paragraph of lab:kwok's report: which stage sets
// delete like a kubelet, and where the others part from it, in this run.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	var sentences []string
	var faithful []string
	for _, sc := range Scenarios {
		id := fmt.Sprintf("kwok.%s.%s.matches_kubelet", kwok.SetFaithful, sc.Name)
		if f.Passed(id) {
			faithful = append(faithful, sc.Name)
		} else {
			sentences = append(sentences, f.Say(id, ""))
		}
	}
	if len(faithful) > 0 {
		sentences = append(sentences, fmt.Sprintf("The %s stage set matched the kubelet transition for transition (scenarios: %s).", kwok.SetFaithful, strings.Join(faithful, ", ")))
	}
	for _, sc := range Scenarios {
		id := fmt.Sprintf("kwok.%s.%s.grace_collapsed_never_terminated", kwok.SetKwokV08Fast, sc.Name)
		sentences = append(sentences, f.Say(id, fmt.Sprintf("kwok v0.8's fast stages (%s): grace collapsed to 0 after %s, container never shown terminated, DELETED %s after the delete.",
			sc.Name, f.Seconds(id, "grace_zero_after_seconds"), f.Seconds(id, "deleted_after_seconds"))))
	}
	for _, sc := range Scenarios {
		if !sc.Finalizer {
			continue
		}
		id := fmt.Sprintf("kwok.%s.%s.reported_bug", kwok.SetKwokV07Fast, sc.Name)
		sentences = append(sentences, f.Say(id, fmt.Sprintf("kwok ≤ v0.7's fast stages stripped finalizer %s %s after the delete, nobody else removing it, and the object was DELETED %s after the delete.",
			Finalizer, f.Seconds(id, "stripped_after_seconds"), f.Seconds(id, "deleted_after_seconds"))))
	}
	for _, sc := range Scenarios {
		sentences = append(sentences, f.Say(fmt.Sprintf("kwok.%s.%s.reference_stopped", Kubelet, sc.Name), ""))
	}
	sentences = append(sentences, f.Say("kwok.stage_sets", ""))
	return report.Join(sentences...)
}
