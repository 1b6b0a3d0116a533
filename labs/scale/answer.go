package scale

import (
	"fmt"
	"strings"

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
	if fig.Size.Pods >= paceMinPods {
		s = append(s, f.Say(ClaimPace, pacedBy(fig)), f.Say(ClaimDeletePace, ""))
	}
	// Not a claim (the claims are about deletion), but a reader of the
	// figures should know kwok did what no kubelet does.
	if r := fig.Replays; r.Pods > 0 || r.Refused > 0 {
		s = append(s, "kwok did what no kubelet does: "+r.String()+".")
	}
	return report.Join(s...)
}

// followsMarking: DELETED at this share of the marking rate or more is
// deletion that waited on nothing after the marking. DELETED counts to the
// last pod's DELETED, which comes a stage delay after the last mark (up to
// 11 s at 5,000 pods, run 20261205-170219-c5bb: DELETED 31.9 against 33.3
// pods/s marked, 96 %); a deletion queued behind kwok's 4 requests at once
// ran at 64 % (run 20261205-110622-be79).
const followsMarking = 0.9

// followedMarking: the pods without a finalizer were DELETED at
// followsMarking of the rate they were marked, or faster.
func followedMarking(fig Figures) bool {
	return fig.MarkedPerSecond > 0 && fig.DeletedPerSecond >= followsMarking*fig.MarkedPerSecond
}

// pacedBy says which senders of writes ran at their client's limit, and the
// marking rate beside the deletion rate.
func pacedBy(fig Figures) string {
	var at []string
	for _, p := range fig.Pacers {
		if p.AtLimit {
			at = append(at, fmt.Sprintf("%s (%.1f/s in its busiest %s, its limit %g/s)", p.Sender, p.Busiest, paceWindow, p.Limit.QPS))
		}
	}
	limits := orDefault(fig.Size.Limits)
	said := fmt.Sprintf("Under the %s limits no sender of writes on the run's pods ran at its client's limit", limits)
	if len(at) > 0 {
		said = fmt.Sprintf("Under the %s limits these ran at their client's limit: %s", limits, strings.Join(at, "; "))
	}
	workers := ""
	if n := fig.Limits.DeleteCollectionWorkers; fig.LimitsOK && n > 0 {
		workers = fmt.Sprintf(" (the API server works a collection with %d workers)", n)
		if n == 1 {
			workers = " (the API server works a collection with 1 worker)"
		}
	}
	said += fmt.Sprintf(". The namespace controller's collection deletes marked the pods without a finalizer at %.1f pods/s%s; they were DELETED at %.1f pods/s", fig.MarkedPerSecond, workers, fig.DeletedPerSecond)
	if followedMarking(fig) {
		said += ": as fast as they were marked, so the marking set the deletion's pace"
	} else if n := fig.Limits.KwokPodPlayParallelism; fig.LimitsOK && n > 0 {
		said += ": slower than they were marked, behind kwok" + kwokQueue(fig.Pacers, n)
	}
	return said + "."
}

// atParallelism: kwok with its whole parallelism in flight this share of
// the time it had any is held by that parallelism.
const atParallelism = 0.5

// kwokQueue says whether kwok's parallelism n held it (its requests in
// flight at n most of the time), or not: then its own pace of playing the
// stages did.
func kwokQueue(ps []Pacer, n int) string {
	for _, p := range ps {
		if !isKwok(p) {
			continue
		}
		share := p.InFlight.ShareAtLeast(n)
		if share >= atParallelism {
			return fmt.Sprintf(", which had all %d of the requests it sends at once in flight %.0f %% of the time", n, 100*share)
		}
		return fmt.Sprintf(", though not its %d requests at once (a median %d in flight, all %d for %.0f %% of the time): how fast kwok played the stages on this machine set the pace", n, p.InFlight.Median, n, 100*share)
	}
	return fmt.Sprintf(" (%d requests at once)", n)
}
