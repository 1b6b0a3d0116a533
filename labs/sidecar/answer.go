package sidecar

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Claim ids, as the answer names them.
const (
	idAfterMain   = "sidecar.sidecars_after_main"
	idReverse     = "sidecar.reverse_start_order"
	idPreStop     = "sidecar.prestop_with_main"
	idMainKilled  = "sidecar.overrun_main_killed_at_grace_end"
	idEndedAfter  = "sidecar.overrun_sidecars_ended_right_after"
	sidecarAKey   = "sidecar_a"
	sidecarBKey   = "sidecar_b"
	afterMainKill = "_sigterm_after_main_killed_seconds"
	endedAfter    = "_ended_after_main_killed_seconds"
)

// Answer is the opening paragraph of lab:sidecar's report: its question
// answered with this run's numbers.
func Answer(_ *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	return report.Join(
		f.Say(idAfterMain, fmt.Sprintf("Yes, as documented. In pod %s the main container %s got SIGTERM %s after the delete (its %s preStop first) and exited %s after it; only then did the sidecars get theirs: %s %s after %s's exit,",
			podOrdered, mainName, f.Seconds(idAfterMain, "main_sigterm_after_delete_seconds"), claims.InSeconds(mainPreStop), f.Seconds(idAfterMain, "main_exit_after_delete_seconds"),
			sidecarB, f.Seconds(idAfterMain, sidecarBKey+"_sigterm_after_main_exit_seconds"), mainName)),
		f.Say(idReverse, fmt.Sprintf("and %s, started first, %s after %s had exited — reverse start order.",
			sidecarA, f.Seconds(idReverse, "sidecar_a_sigterm_after_sidecar_b_exit_seconds"), sidecarB)),
		f.Say(idAfterMain, fmt.Sprintf("All three exited 0; the pod's last container was gone %s after the delete.", f.Seconds(idAfterMain, "sidecar_a_exit_after_delete_seconds"))),
		f.Say(idPreStop, fmt.Sprintf("The sidecars' %s preStops ran alongside the main container's: the kubelet's Killing events, recorded right before each preStop, came for all three containers within %s of each other, and no sidecar's SIGTERM waited for its preStop after its turn came.",
			claims.InSeconds(sidecarPreStop), f.Seconds(idPreStop, "stopping_spread_seconds"))),
		f.Say(idMainKilled, fmt.Sprintf("When the main container used up the grace period (pod %s, %s): it was killed (exit code %s) %s after the delete,",
			podOverrun, claims.InSeconds(overrunGrace), f.Int(idMainKilled, "main_exit_code"), f.Seconds(idMainKilled, "main_killed_after_delete_seconds"))),
		f.Say(idEndedAfter, fmt.Sprintf("and both sidecars were ended at the same moment, together (%s apart), with the kubelet's short grace rather than in order: %s got SIGTERM %s and %s %s that kill — the grace period's end for every container — and both were gone %s and %s after it.",
			f.Seconds(idEndedAfter, "sidecars_sigterm_apart_seconds"),
			sidecarB, relative(f, idEndedAfter, sidecarBKey+afterMainKill), sidecarA, relative(f, idEndedAfter, sidecarAKey+afterMainKill),
			f.Seconds(idEndedAfter, sidecarBKey+endedAfter), f.Seconds(idEndedAfter, sidecarAKey+endedAfter))),
	)
}

// relative says an observed gap as "0.19 s before" or "0.02 s after".
func relative(f report.Findings, id, key string) string {
	n := f.Number(id, key)
	if n < 0 {
		return report.FormatSeconds(-n) + " before"
	}
	return report.FormatSeconds(n) + " after"
}

// Report is the report's table of every container's shutdown, from the
// same record the claims read.
func Report(rec *evidence.Record, _ []claims.Claim) []report.Section {
	var b strings.Builder
	b.WriteString("Times after each pod's delete request. Killing: the kubelet's event, recorded right before the container's preStop. SIGTERM: the workload's own log line. Exit: crictl's finishedAt, or, marked *(log)*, the workload's own exit line when the kubelet removed the container before crictl could see it exited (the exit code is then the pod status's).\n\n")
	b.WriteString("| pod | container | started (crictl) | Killing event | SIGTERM | exit | exit code |\n|---|---|---|---|---|---|---|\n")
	for _, pod := range []string{podOrdered, podOverrun} {
		p := shutdownOf(rec, pod)
		for _, name := range containersOf {
			c := p.Containers[name]
			kind := "sidecar"
			if name == mainName {
				kind = "main"
			}
			code := "?"
			if c.ExitCode != nil {
				code = fmt.Sprint(*c.ExitCode)
			}
			fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s | %s | %s | %s |\n", pod, name, kind,
				stamp(c.Started), since(rec, p.Deleted, c.Stopping, evidence.OnHost), since(rec, p.Deleted, c.Sigterm, p.onNode), exitCell(rec, p, c), code)
		}
	}
	return []report.Section{{Title: "Shutdown, container by container", Body: b.String()}}
}

func exitCell(rec *evidence.Record, p podRun, c *containerRun) string {
	s := since(rec, p.Deleted, c.Finished, p.onNode)
	if c.FinishedBy == byLogAndStatus {
		s += " *(log)*"
	}
	return s
}

func stamp(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format("15:04:05.000")
}

// since is t (read by the clock on names) after from, on the host's clock
// (evidence.Record.Between).
func since(rec *evidence.Record, from *evidence.Stamp, t *time.Time, on func(time.Time) evidence.Stamp) string {
	if from == nil || t == nil {
		return "—"
	}
	return report.FormatSeconds(rec.Between(*from, on(*t)).D.Seconds())
}
