package labs

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// drawnPrecision is how far a drawn time may be from a claim's observed
// one: the SVG keeps milliseconds, the claims round to them.
const drawnPrecision = 0.002

// showsFailedRequestsInTheirWindows (lab:graceful, whose answer is the table
// variant × failed requests × why): one group of lanes per variant with its
// endpoint's conditions, where exit-now (no preStop) has one mark per failed
// request and the preStop sleeps have none, as many as the claims counted,
// each in the window the claims attribute it to; every variant's endpoint
// turns terminating and the client node's rules drop it when the claims say.
func showsFailedRequestsInTheirWindows(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	if !strings.Contains(pic.root.attr("class"), "traffic") {
		t.Fatal("lab:graceful's picture is not drawn per Service")
	}
	services := map[string]element{}
	for _, s := range pic.all("service") {
		services[s.attr("data-service")] = s
	}
	failed := map[string][]element{}
	for _, q := range pic.all("failed-request") {
		failed[q.lane.attr("data-service")] = append(failed[q.lane.attr("data-service")], q)
	}
	for _, name := range []string{"exit-now", "exec-sleep", "native-sleep", "ignore-term", "prestop-overrun"} {
		if _, ok := services[name]; !ok {
			t.Errorf("no lanes for variant %s", name)
			continue
		}
		if n, ok := observed(decided, "graceful.every_failure_attributed", name+"_failed"); ok && float64(len(failed[name])) != n {
			t.Errorf("%s: %d failed-request marks, the claims counted %v", name, len(failed[name]), n)
		}
		// Its endpoint's conditions, and the moment they turned terminating.
		var terminating []element
		for _, l := range pic.all("lane-endpoint") {
			if l.attr("data-service") == name {
				terminating = append(terminating, pic.inside(l, "segment-endpoint-terminating")...)
			}
		}
		want, ok := observed(decided, "graceful.endpoint_terminating", name+"_terminating_after_seconds")
		switch {
		case len(terminating) == 0:
			t.Errorf("%s: no endpoint-condition lane showing its endpoint ready=false, terminating", name)
		case ok && math.Abs(terminating[0].num("data-from")-want) > drawnPrecision:
			t.Errorf("%s: the endpoint turns terminating at %+.3f s as drawn, %+.3f s by the claims", name, terminating[0].num("data-from"), want)
		}
		if want, ok := observed(decided, "graceful.client_node_stops_forwarding", name+"_propagation_seconds"); ok {
			dropped := inService(pic, "rules-dropped-between", name)
			if len(dropped) != 1 || math.Abs(dropped[0].num("data-to")-want) > drawnPrecision {
				t.Errorf("%s: the client node's rules drop it by %v as drawn, by %+.3f s by the claims", name, dropped, want)
			}
		}
		if len(inService(pic, "mark-sigterm", name)) != 1 {
			t.Errorf("%s: no SIGTERM mark", name)
		}
	}
	if len(failed["exit-now"]) == 0 {
		t.Error("exit-now (no preStop) has no failed-request mark")
	}
	for _, name := range []string{"exec-sleep", "native-sleep"} {
		if len(failed[name]) > 0 {
			t.Errorf("%s (a preStop sleep) has %d failed-request marks, want none", name, len(failed[name]))
		}
	}
	// exit-now's marks, counted by the window the claims name, and each
	// drawn where that window is: in flight across the stop, or sent
	// between the stop and the rules' drop.
	byWhy := map[string]float64{}
	for _, q := range failed["exit-now"] {
		byWhy[q.attr("data-why")]++
	}
	if windows, ok := observedValue(decided, "graceful.every_failure_attributed", "exit-now_windows"); ok {
		for why, n := range byWhy {
			if want, _ := number(mapValue(windows, why)); want != n {
				t.Errorf("exit-now: %v marks %q, the claims %v", n, why, want)
			}
		}
	}
	bands := inService(pic, "window", "exit-now")
	if len(failed["exit-now"]) > 0 && len(bands) != 1 {
		t.Fatalf("exit-now: %d windows drawn from its stop to the rules' drop, want 1", len(bands))
	}
	for _, q := range failed["exit-now"] {
		stop, drop := bands[0].num("data-from"), bands[0].num("data-to")
		from, to := q.num("data-from"), q.num("data-to")
		switch q.attr("data-window") {
		case report.WindowInFlight:
			if from >= stop || to < stop-0.1 {
				t.Errorf("an in-flight request drawn %+.3f → %+.3f s, not across the stop at %+.3f s", from, to, stop)
			}
		case report.WindowUnreachable:
			if from < stop-0.1 || from > drop {
				t.Errorf("a request sent while unreachable drawn at %+.3f s, outside %+.3f … %+.3f s", from, stop, drop)
			}
		}
	}
}

// inService are the elements of a class in a variant's lanes.
func inService(pic picture, class, service string) []element {
	var out []element
	for _, e := range pic.all(class) {
		if e.lane != nil && e.lane.attr("data-service") == service || e.attr("data-service") == service {
			out = append(out, e)
		}
	}
	return out
}

// showsShutdownOrder (lab:sidecar): pod sidecars's shutdown as numbered
// moments, each on its container's lane: app's exit, then sidecar-b's
// SIGTERM and exit, then sidecar-a's, in time order, the hand-offs as long
// as the claims measured.
func showsShutdownOrder(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	var moments []element
	for _, m := range pic.all("moment") {
		if m.attr("data-pod") == "sidecars" {
			moments = append(moments, m)
		}
	}
	sort.SliceStable(moments, func(i, j int) bool { return moments[i].num("data-n") < moments[j].num("data-n") })
	want := []string{"app exit", "sidecar-b sigterm", "sidecar-b exit", "sidecar-a sigterm", "sidecar-a exit"}
	var got []string
	at := map[string]float64{}
	for i, m := range moments {
		what := m.attr("data-container") + " " + m.attr("data-kind")
		got = append(got, what)
		at[what] = m.num("data-at")
		if i > 0 && m.num("data-at") < moments[i-1].num("data-at") {
			t.Errorf("moment %s (%+.3f s) is numbered after one that came later", what, m.num("data-at"))
		}
		lane := laneNumbered(pic, m.attr("data-lane"))
		if lane == nil || !strings.Contains(lane.text, "sidecars/"+m.attr("data-container")+":") {
			t.Errorf("moment %s is not drawn on its container's lane", what)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pod sidecars's shutdown drawn as %q, want %q", got, want)
	}
	for _, gap := range []struct{ id, key, from, to string }{
		{"sidecar.sidecars_after_main", "sidecar_b_sigterm_after_main_exit_seconds", "app exit", "sidecar-b sigterm"},
		{"sidecar.reverse_start_order", "sidecar_a_sigterm_after_sidecar_b_exit_seconds", "sidecar-b exit", "sidecar-a sigterm"},
	} {
		if w, ok := observed(decided, gap.id, gap.key); ok && math.Abs(at[gap.to]-at[gap.from]-w) > drawnPrecision {
			t.Errorf("%s → %s drawn %.3f s apart, the claims measured %.3f s", gap.from, gap.to, at[gap.to]-at[gap.from], w)
		}
	}
}

func laneNumbered(pic picture, n string) *element {
	for _, e := range pic.all("lane") {
		if e.attr("data-lane") == n {
			return &e
		}
	}
	return nil
}

// showsTerminatingPastNotReady (lab:stuck): the pod's API lane stays
// Terminating past its node's NotReady by at least what the claims
// measured, and ends with the pod GC's force delete, marked on that lane.
func showsTerminatingPastNotReady(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	api := pic.apiLane("stuck")
	deleting := pic.inside(api, "segment-deleting")
	var notReady []element
	for _, l := range pic.all("lane-node") {
		notReady = append(notReady, pic.inside(l, "segment-not-ready")...)
	}
	if len(deleting) != 1 || len(notReady) == 0 {
		t.Fatalf("%d Terminating spans of pod stuck, %d NotReady spans of its node; want one of each at least", len(deleting), len(notReady))
	}
	past := deleting[0].num("data-to") - notReady[0].num("data-from")
	if want, ok := arranged(decided, "stuck.stays_terminating", "until_past_not_ready_seconds"); !ok {
		t.Error("stuck.stays_terminating states no measured precondition until_past_not_ready_seconds")
	} else if past+drawnPrecision < want {
		t.Errorf("drawn Terminating %.3f s past NotReady, the record shows termlab waited %.3f s past it", past, want)
	}
	var force []element
	for _, m := range pic.all("moment") {
		if m.attr("data-kind") == "force-delete" && m.attr("data-lane") == api.attr("data-lane") {
			force = append(force, m)
		}
	}
	if len(force) != 1 {
		t.Fatalf("%d force-delete marks on pod stuck's API lane, want 1", len(force))
	}
	if at := force[0].num("data-at"); math.Abs(at-deleting[0].num("data-to")) > 1 || at < notReady[0].num("data-from") {
		t.Errorf("the force delete is marked at %+.3f s, not where Terminating ends (%+.3f s) after NotReady", at, deleting[0].num("data-to"))
	}
	if !strings.Contains(pic.source, "pod garbage collector") && len(rec.Audit) > 0 {
		t.Error("the force delete's mark does not name the pod garbage collector")
	}
}

// showsObjectGoneContainerRunning (lab:force: "No: the API object was gone
// at once, while the container ran on; SIGKILL 2 s after SIGTERM"): the API
// lane goes from exists to gone with no Terminating span, the container's
// running span outlives it by what the claims measured, hatched as an
// orphan, and the SIGTERM→SIGKILL gap and exit 137 are drawn.
func showsObjectGoneContainerRunning(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	// Gone at once: whatever Terminating span the watch showed lasts no
	// longer than the delete took.
	terminating := 0.0
	for _, s := range append(pic.all("segment-deleting"), pic.all("segment-terminated")...) {
		terminating += s.num("data-to") - s.num("data-from")
	}
	if took, ok := observed(decided, "force.api_object_gone", "deleted_after_seconds"); ok && terminating > took+drawnPrecision {
		t.Errorf("the object is drawn Terminating for %.3f s; the claims have it gone %.3f s after the force delete", terminating, took)
	}
	gone, running := pic.all("segment-gone"), pic.all("segment-running")
	if len(gone) != 1 || len(running) != 1 {
		t.Fatalf("%d gone and %d running spans, want one of each", len(gone), len(running))
	}
	if want, ok := observed(decided, "force.api_object_gone", "deleted_after_seconds"); ok && math.Abs(gone[0].num("data-from")-want) > 0.05 {
		t.Errorf("the object is drawn gone at %+.3f s, %.3f s after the delete by the claims", gone[0].num("data-from"), want)
	}
	outlived := running[0].num("data-to") - gone[0].num("data-from")
	if want, ok := observed(decided, "force.container_stops", "stopped_after_deleted_seconds"); ok && math.Abs(outlived-want) > 1/pic.root.num("data-px-per-second") {
		t.Errorf("the container is drawn outliving its object by %.3f s, the claims measured %.3f s", outlived, want)
	}
	if len(pic.all("orphan")) != 1 {
		t.Error("the time the container outlived its object is not hatched")
	}
	if want, ok := observed(decided, "force.sigkill_after_minimum_grace", "stopped_after_sigterm_seconds"); ok && !strings.Contains(pic.source, "SIGKILL "+report.FormatSeconds(want)+" after SIGTERM") {
		t.Errorf("no label \"SIGKILL %s after SIGTERM\"", report.FormatSeconds(want))
	}
	if !strings.Contains(pic.source, ">exited 137<") {
		t.Error("the exit code 137 is not drawn")
	}
}

// observed is a claim's observed number.
func observed(decided []claims.Claim, id, key string) (float64, bool) {
	v, ok := observedValue(decided, id, key)
	if !ok {
		return 0, false
	}
	return number(v)
}

// arranged is a precondition's actual value (what termlab gave the claim).
func arranged(decided []claims.Claim, id, key string) (float64, bool) {
	for _, c := range decided {
		for _, p := range c.Preconditions {
			if c.ID == id && p.Key == key && p.Measured() {
				return *p.ActualSeconds, true
			}
		}
	}
	return 0, false
}

func observedValue(decided []claims.Claim, id, key string) (any, bool) {
	for _, c := range decided {
		if c.ID == id {
			v, ok := c.Observed[key]
			return v, ok
		}
	}
	return nil, false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	}
	return 0, false
}

// mapValue reads a key of an observed map, decoded (map[string]any) or as
// the claim set it (map[string]int).
func mapValue(m any, key string) any {
	switch x := m.(type) {
	case map[string]int:
		return x[key]
	case map[string]any:
		return x[key]
	}
	return nil
}

// showsHeldByBusyMount (lab:mount: "the volume held it: the umount failed N
// times while a process was in the tmpfs; released, it went at the next
// retry"): pod mounted's API lane shows it deleted and still there — a
// Terminating span, then (its container exited, phase Succeeded) a
// terminated one — the kubelet's failed unmounts are marked on it, as many
// as the claims counted, all inside those spans, and their end comes after
// the retry mark the last failure set, not before it.
func showsHeldByBusyMount(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	api := pic.apiLane("mounted")
	deleting := pic.inside(api, "segment-deleting")
	if len(deleting) != 1 {
		t.Fatalf("%d Terminating spans of pod mounted, want 1", len(deleting))
	}
	from, to := deleting[0].num("data-from"), deleting[0].num("data-to")
	for _, s := range pic.inside(api, "segment-terminated") {
		to = max(to, s.num("data-to"))
	}
	var failed, retry []element
	for _, m := range pic.all("moment") {
		if m.attr("data-lane") != api.attr("data-lane") {
			continue
		}
		switch m.attr("data-kind") {
		case "teardown-failed":
			failed = append(failed, m)
		case "unmount-retry":
			retry = append(retry, m)
		}
	}
	if want, ok := observed(decided, "mount.stays_while_busy", "teardown_failures_while_held"); !ok || float64(len(failed)) != want {
		t.Errorf("%d failed unmounts marked on pod mounted's API lane, the claims counted %v (%v)", len(failed), want, ok)
	}
	if len(failed) == 0 {
		t.Fatalf("no failed unmount marked on pod mounted's API lane")
	}
	for _, m := range failed {
		if at := m.num("data-at"); at < from-drawnPrecision || at > to+drawnPrecision {
			t.Errorf("a failed unmount marked at %+.3f s, outside the Terminating span %+.3f…%+.3f s", at, from, to)
		}
	}
	if len(retry) != 1 {
		t.Fatalf("%d retry marks on pod mounted's API lane, want 1", len(retry))
	}
	if at := retry[0].num("data-at"); to < at-1 {
		t.Errorf("Terminating ends at %+.3f s, before the kubelet's retry at %+.3f s that let it go", to, at)
	}
}
