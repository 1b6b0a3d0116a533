package scale

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Answer opens the report with this run's numbers.
func Answer(rec *evidence.Record, decided []claims.Claim) string {
	fig := FiguresOf(rec)
	f := report.NewFindings(decided)
	s := []string{fmt.Sprintf("%d pods on %d kwok fake nodes under the %s stage set: created at %.1f pods/s, Running at %.1f pods/s; after the namespace delete the %d pods without a finalizer were DELETED at %.1f pods/s, the last pod (after the finalizers' release) %.1f s after the delete, and the namespace was gone %.1f s after the last release.",
		fig.Size.Pods, fig.Size.FakeNodes, fig.Size.StageSet, fig.CreatePerSecond, fig.RunningPerSecond, fig.Size.Pods-fig.Size.Finalized(), fig.DeletedPerSecond, fig.DeleteToLastDeleted, fig.GoneAfterRelease)}
	s = append(s, f.Say(ClaimHeld, fmt.Sprintf("All %d finalizer pods stayed until the lab released them.", fig.Size.Finalized())))
	// Said only when the claim passed: then every pods-watch gap was resumed.
	gaps, n := "no watch gap", 0
	for _, g := range rec.Gaps {
		if g.Source == evidence.WatchPods {
			n++
		}
	}
	if n > 0 {
		gaps = fmt.Sprintf("%d pods-watch gap(s), each resumed from the last resourceVersion recorded: late, none lost (%s)", n, gapsFile)
	}
	s = append(s, f.Say(ClaimComplete, fmt.Sprintf("The record is complete: one ADDED and one DELETED per pod, 0 lost, 0 duplicates, %d events, %s.", fig.PodEvents, gaps)))
	for _, id := range []string{ClaimRan, ClaimDeleted, ClaimNamespace} {
		s = append(s, f.Say(id, ""))
	}
	return report.Join(s...)
}
