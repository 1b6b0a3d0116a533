package kwoklab

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/report"
)

// ReportedBug is the watch sequence reported against kwok ≤ v0.7 for a pod
// with a finalizer nobody removes: deletionTimestamp, then the finalizers
// gone, then deletionGracePeriodSeconds 0, then DELETED.
var ReportedBug = []string{
	claims.FieldDeletionTimestamp + "=set",
	claims.FieldGracePeriod + "=30",
	claims.FieldFinalizers + "=[]",
	claims.FieldGracePeriod + "=0",
	claims.FieldObject + "=DELETED",
}

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go).
const (
	// termDelay is the workload's delay from SIGTERM to its exit 0
	// (--term-delay=0s in manifests/pods/kwok-*.yaml).
	termDelay = 0 * time.Second
	// sigtermWithin: the kubelet sends SIGTERM as soon as it sees the
	// deletionTimestamp; it waits none of the pod's 30 s grace period.
	sigtermWithin = claims.KubeletSyncAllowance
	// exitAfterSigterm: the workload's term delay, plus the allowance for the
	// runtime to record the exit.
	exitAfterSigterm = termDelay + claims.ExitAllowance
	// stoppedWithin (4 s) adds those up. A SIGKILL after the kubelet's 2 s
	// minimum grace could also meet it: the stop within ExitAllowance of the
	// logged SIGTERM, with exit code 0, is what tells the workload's own exit.
	stoppedWithin = sigtermWithin + exitAfterSigterm
	// graceZeroWithin: kwok v0.8's fast pod-delete stage has no delay; kwok
	// sees the deletionTimestamp on its watch and deletes with grace 0 at
	// once, as quick as a kubelet acting on a watch event (observed
	// 0.08–0.21 s). The faithful stages reach grace 0 only after their
	// simulated termination.
	graceZeroWithin = claims.KubeletSyncAllowance
)

// Claims decides lab:kwok's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	sec := claims.InSeconds
	exitedClean := int32(0)
	fake := map[string]string{}
	for _, sc := range Scenarios {
		for _, set := range kwok.StageSets {
			fake[PodName(sc.Name, set)] = set
		}
	}
	out := []claims.Claim{claims.PlayedBy(rec, claims.Played{
		ID:        "kwok.stage_sets",
		Statement: fmt.Sprintf("Each fake-node pod was created by the lab (first seen after its create request: kwok.watch_order) with the label %s=<set> of its stage set, kept it, was bound to a kwok fake node, and that set's Stage objects were installed (recorded in %s): no pod was played by another set's stages.", kwok.StageSetLabel, StageSetsFile),
		Label:     kwok.StageSetLabel, Pods: fake, FakeNodePrefix: kwok.FakeNodePrefix,
		Installed: installedStageSets(rec), Evidence: StageSetsFile,
	})}
	for _, sc := range Scenarios {
		ref := PodName(sc.Name, Kubelet)
		out = append(out, claims.SameDeletion(rec, claims.Fidelity{
			ID: fmt.Sprintf("kwok.%s.%s.matches_kubelet", kwok.SetFaithful, sc.Name),
			Statement: fmt.Sprintf("Scenario %q (%s): on a fake node under the %s stage set, pod %s goes through exactly the deletion transitions that the kubelet gives pod %s on a real worker (deletionTimestamp, deletionGracePeriodSeconds, finalizers, container states, Ready, phase, DELETED; times, UIDs and resourceVersions aside), both observed from deletionTimestamp to DELETED, with the lab's requests on each (create, delete, force delete, finalizer removal) in the same order and at the same places among the transitions (each pod first seen after its create: kwok.watch_order): the deletion begins after the lab's delete, and with a finalizer the object stays until the lab removes it.",
				sc.Name, sc.Title, kwok.SetFaithful, PodName(sc.Name, kwok.SetFaithful), ref),
			Reference: ref, Candidate: PodName(sc.Name, kwok.SetFaithful), Requests: append([]evidence.ActionKind{evidence.ActionCreate}, labActions...),
		}))
	}
	for _, sc := range Scenarios {
		out = append(out, claims.ContainerStopped(rec, claims.Stops{
			ID: fmt.Sprintf("kwok.%s.%s.reference_stopped", Kubelet, sc.Name),
			Statement: fmt.Sprintf("The reference is a real termination (what the terminated transitions of the fake nodes stand for): on the real worker the workload in %s logged SIGTERM within %s of the ordinary delete (the kubelet sends it at once; %[2]s is the allowance for its watch and pod worker), and its container stopped (crictl: exited, or removed with the kubelet reporting it terminated) within %s of that SIGTERM (its term delay is %s, plus %s for the exit to be recorded), %s after the delete at most, with exit code 0. Runs compare within ±%[2]s, ±%[3]s and ±%[6]s.",
				PodName(sc.Name, Kubelet), sec(sigtermWithin), sec(exitAfterSigterm), sec(termDelay), sec(claims.ExitAllowance), sec(stoppedWithin)),
			Pod: PodName(sc.Name, Kubelet), After: evidence.ActionDelete, Within: stoppedWithin, WantSIGTERM: true, WantExitCode: &exitedClean,
			SignalWithin: sigtermWithin, StopAfterSignal: &claims.Window{Min: termDelay, Max: exitAfterSigterm},
		}).WithTolerance("sigterm_after_seconds", sigtermWithin).
			WithTolerance("stopped_after_sigterm_seconds", exitAfterSigterm).
			WithTolerance("stopped_after_seconds", stoppedWithin))
	}
	for _, sc := range Scenarios {
		c := claims.Collapsed{
			ID: fmt.Sprintf("kwok.%s.%s.grace_collapsed_never_terminated", kwok.SetKwokV08Fast, sc.Name),
			Statement: fmt.Sprintf("Scenario %q (%s), under kwok v0.8's fast stages as shipped: within %s of the ordinary delete (the pod-delete stage has no delay: kwok's watch and its delete request, as quick as a kubelet acting on a watch event), deletionGracePeriodSeconds of pod %s is 0, and neither its container nor its phase is ever shown terminated before DELETED; so it departs from the kubelet's sequence (pod %s) exactly where the kubelet reports the container terminated. Runs compare within ±%[3]s.",
				sc.Name, sc.Title, sec(graceZeroWithin), PodName(sc.Name, kwok.SetKwokV08Fast), PodName(sc.Name, Kubelet)),
			Pod: PodName(sc.Name, kwok.SetKwokV08Fast), Reference: PodName(sc.Name, Kubelet),
			Delete: evidence.ActionDelete, Within: graceZeroWithin,
		}
		if sc.Finalizer {
			c.Finalizer, c.Release, c.Force = Finalizer, evidence.ActionRemoveFinalizers, evidence.ActionForceDelete
			c.Statement += fmt.Sprintf(" The finalizer %s is kept: the object outlives the lab's force delete and is DELETED only after the lab removes the finalizer.", Finalizer)
		}
		out = append(out, claims.GraceCollapsedUnterminated(rec, c).WithTolerance("grace_zero_after_seconds", graceZeroWithin))
	}
	// Without a finalizer to strip, kwok ≤ v0.7's fast stages delete the
	// pod as v0.8's do: grace 0 at once, never terminated.
	for _, sc := range Scenarios {
		if sc.Finalizer {
			continue
		}
		out = append(out, claims.GraceCollapsedUnterminated(rec, claims.Collapsed{
			ID: fmt.Sprintf("kwok.%s.%s.grace_collapsed_never_terminated", kwok.SetKwokV07Fast, sc.Name),
			Statement: fmt.Sprintf("Scenario %q (%s), under kwok ≤ v0.7's fast stages, which have no finalizer to strip here: within %s of the ordinary delete, deletionGracePeriodSeconds of pod %s is 0, and neither its container nor its phase is ever shown terminated before DELETED; so, like v0.8's, it departs from the kubelet's sequence (pod %s) exactly where the kubelet reports the container terminated. Runs compare within ±%[3]s.",
				sc.Name, sc.Title, sec(graceZeroWithin), PodName(sc.Name, kwok.SetKwokV07Fast), PodName(sc.Name, Kubelet)),
			Pod: PodName(sc.Name, kwok.SetKwokV07Fast), Reference: PodName(sc.Name, Kubelet),
			Delete: evidence.ActionDelete, Within: graceZeroWithin,
		}).WithTolerance("grace_zero_after_seconds", graceZeroWithin))
	}
	for _, sc := range Scenarios {
		if !sc.Finalizer {
			continue
		}
		out = append(out, claims.FinalizersStripped(rec, claims.Stripped{
			ID: fmt.Sprintf("kwok.%s.%s.reported_bug", kwok.SetKwokV07Fast, sc.Name),
			Statement: fmt.Sprintf("Scenario %q, under kwok ≤ v0.7's fast pod-delete (finalizers: empty): pod %s loses finalizer %s although nobody removes it, and is DELETED — the reported watch sequence %s.",
				sc.Name, PodName(sc.Name, kwok.SetKwokV07Fast), Finalizer, strings.Join(ReportedBug, " → ")),
			Pod: PodName(sc.Name, kwok.SetKwokV07Fast), Finalizer: Finalizer,
			Delete: evidence.ActionDelete, Release: evidence.ActionRemoveFinalizers, Want: ReportedBug,
		}))
	}
	return append(out, claims.WatchOrder(rec, "kwok"))
}

// Cell is one comparison of the fidelity table: a stage set's sequence for a
// scenario against the kubelet's.
type Cell struct {
	Match bool
	// Incomplete says which side was not observed from deletionTimestamp to DELETED.
	Incomplete string
	Diff       claims.Difference
}

func (c Cell) String() string {
	switch {
	case c.Incomplete != "":
		return "not comparable: " + c.Incomplete
	case c.Match:
		return "match"
	}
	return fmt.Sprintf("differs at #%d: kubelet %s · kwok %s", c.Diff.Index+1, code(c.Diff.Reference), code(c.Diff.Candidate))
}

func code(s string) string {
	if s == "" {
		return "(sequence ended)"
	}
	return "`" + s + "`"
}

// Compare compares the sequence of scenario sc under stage set set with the kubelet's.
func Compare(rec *evidence.Record, sc Scenario, set string) Cell {
	ref := claims.DeletionTransitions(rec.EventsFor(PodName(sc.Name, Kubelet)))
	cand := claims.DeletionTransitions(rec.EventsFor(PodName(sc.Name, set)))
	var missing []string
	if !claims.Complete(ref) {
		missing = append(missing, "kubelet")
	}
	if !claims.Complete(cand) {
		missing = append(missing, set)
	}
	if len(missing) > 0 {
		return Cell{Incomplete: strings.Join(missing, " and ") + " not observed whole"}
	}
	d, differs := claims.Compare(ref, cand)
	return Cell{Match: !differs, Diff: d}
}

// Report renders the fidelity table (scenario × stage set) and each
// scenario's sequences side by side.
func Report(rec *evidence.Record, _ []claims.Claim) []report.Section {
	header := append([]string{"scenario"}, kwok.StageSets...)
	var rows [][]string
	for _, sc := range Scenarios {
		row := []string{fmt.Sprintf("**%s**: %s", sc.Name, sc.Title)}
		for _, set := range kwok.StageSets {
			row = append(row, Compare(rec, sc, set).String())
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	b.WriteString("Each fake-node pod's deletion, normalised to the ordered transitions of the fields deletion is about (deletionTimestamp, deletionGracePeriodSeconds, finalizers, container states, Ready, phase, DELETED; times, UIDs and resourceVersions left out), compared transition by transition with the same scenario's pod on the real worker (the kubelet). A cell says `match`, or the first transition that differs, with both sides.\n\n")
	b.WriteString(report.Table(header, rows))
	b.WriteString("\nEach scenario's sequences side by side: numbered transitions (the numbers the table above refers to) with the lab's requests on the pod, *in italics*, where they came in time.\n\n")
	for _, sc := range Scenarios {
		fmt.Fprintf(&b, "**%s** — %s:\n\n", sc.Name, sc.Title)
		cols := make([][]string, len(Targets))
		longest := 0
		var h []string
		for i, t := range Targets {
			cols[i] = Sequence(rec, PodName(sc.Name, t))
			longest = max(longest, len(cols[i]))
			h = append(h, fmt.Sprintf("%s (`%s`)", t, PodName(sc.Name, t)))
		}
		var rs [][]string
		for n := 0; n < longest; n++ {
			var r []string
			for _, c := range cols {
				if n < len(c) {
					r = append(r, c[n])
				} else {
					r = append(r, "")
				}
			}
			rs = append(rs, r)
		}
		b.WriteString(report.Table(h, rs))
		b.WriteString("\n")
	}
	return []report.Section{{Title: "Fidelity: kwok stage sets against the kubelet", Body: b.String()}}
}

// labActions are the requests on a pod that the sequences show.
var labActions = []evidence.ActionKind{evidence.ActionDelete, evidence.ActionForceDelete, evidence.ActionRemoveFinalizers}

// Sequence is the pod's deletion transitions, numbered from 1, with the lab's
// requests on the pod (in italics) placed by time among them.
func Sequence(rec *evidence.Record, pod string) []string {
	events := rec.EventsFor(pod)
	ts := claims.DeletionTransitions(events)
	// When each transition's watch event was observed: the k-th event adds
	// the transitions of its number to the sequence of the events up to it.
	eventAt := map[int]time.Time{}
	for k := range events {
		if p := claims.DeletionTransitions(events[:k+1]); len(p) > 0 {
			if _, ok := eventAt[p[len(p)-1].Event]; !ok {
				eventAt[p[len(p)-1].Event] = events[k].ObservedAt
			}
		}
	}
	var acts []evidence.Action
	for _, a := range rec.Actions {
		if a.Target == pod && slices.Contains(labActions, a.Kind) {
			acts = append(acts, a)
		}
	}
	var out []string
	for i, t := range ts {
		for len(acts) > 0 && !acts[0].StartedAt.After(eventAt[t.Event]) {
			out = append(out, "*lab: "+string(acts[0].Kind)+"*")
			acts = acts[1:]
		}
		out = append(out, fmt.Sprintf("%d · `%s`", i+1, t))
	}
	for _, a := range acts {
		out = append(out, "*lab: "+string(a.Kind)+"*")
	}
	return out
}
