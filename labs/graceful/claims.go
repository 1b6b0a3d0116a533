package graceful

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/workloadlog"
)

// Claim ids.
const (
	idEndpointTerminating = "graceful.endpoint_terminating"
	idClientNodeDrops     = "graceful.client_node_stops_forwarding"
	idNoPreStopFails      = "graceful.no_prestop_requests_fail_in_window"
	idPreStopNoFailures   = "graceful.prestop_sleep_loses_nothing"
	idFailuresAttributed  = "graceful.every_failure_attributed"
	idSigtermAfterPreStop = "graceful.sigterm_after_prestop"
	idPreStopCountsGrace  = "graceful.prestop_counts_against_grace"
	idSigkillAtGraceEnd   = "graceful.sigkill_at_grace_end"
)

// sigkill is the exit code of a process killed by SIGKILL (128 + 9).
const sigkill = 137

// check builds one claim (claims.Builder) with this lab's own steps.
type check struct{ *claims.Builder }

func newCheck(id, statement string) *check { return &check{claims.NewBuilder(id, statement)} }

// notChecked is the claim when the run could not reach the nodes.
func (k *check) notChecked() claims.Claim {
	k.NotChecked(claims.NeedsNodeAccess)
	return k.Done()
}

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

var sec = claims.InSeconds

// Claims decides lab:graceful's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	fs := factsOf(rec)
	return []claims.Claim{
		endpointTerminating(rec, fs),
		clientNodeDrops(rec, fs),
		noPreStopFails(rec, fs),
		preStopLosesNothing(rec, fs),
		failuresAttributed(rec, fs),
		sigtermAfterPreStop(rec, fs),
		preStopCountsAgainstGrace(rec, fs),
		sigkillAtGraceEnd(rec, fs),
		claims.WatchOrder(rec, "graceful"),
	}
}

func byName(fs []facts, name string) facts {
	for _, f := range fs {
		if f.v.Name == name {
			return f
		}
	}
	return facts{}
}

// deleted requires the variant's delete to have been seen.
func (k *check) deleted(f facts) bool {
	k.Cite(eventsFile)
	return k.Require(!f.Deleted.IsZero(), "%s: no watch event showed the pod with a deletionTimestamp", f.v.Name)
}

func endpointTerminating(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idEndpointTerminating, fmt.Sprintf("Within %s of each delete (the EndpointSlice controller syncs the Service in the pass the pod's update triggers, %s, and its write comes back on the watch, %s), the Service's EndpointSlice shows the pod's endpoint ready=false, terminating=true — and serving=true while the process still serves (every variant but exit-now, whose process has exited by then): new connections stop being sent to it, while it may still answer.",
		sec(endpointSliceWithin), sec(claims.ControllerSyncAllowance), sec(claims.WatchAllowance)))
	k.Cite(slicesFile)
	worst := time.Duration(0)
	for _, f := range fs {
		if !k.deleted(f) {
			continue
		}
		if !k.Require(f.Terminating != nil, "%s: no EndpointSlice event after the delete shows its endpoint ready=false, terminating=true", f.v.Name) {
			continue
		}
		// The watch's time is the host's, the delete a script's or a
		// person's the API server's.
		d := rec.Between(evidence.Stamp{Time: f.Deleted, Clock: f.DeletedOn}, evidence.OnHost(f.Terminating.ObservedAt))
		worst = max(worst, d.D)
		k.ObserveInterval(f.v.Name+"_terminating_after_seconds", d)
		k.Observe(f.v.Name+"_serving", f.Serving)
		k.Require(k.WithinClocks(d, claims.NoLowerBound, endpointSliceWithin, f.v.Name+"'s endpoint turning terminating after the delete"), "%s: the endpoint turned terminating %.3f s after the delete, bound %s", f.v.Name, d.D.Seconds(), sec(endpointSliceWithin))
		if f.v.Name != "exit-now" {
			k.Require(f.Serving, "%s: the terminating endpoint was serving=false, though its process was still serving", f.v.Name)
		}
	}
	k.Observe("slowest_terminating_after_seconds", secs(worst))
	return k.Done()
}

func clientNodeDrops(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idClientNodeDrops, fmt.Sprintf("The client's node stops forwarding new connections to each deleted pod within %s of the delete, as its kube-proxy rules (iptables-save -t nat, read every %s through the node's exec seam) show: the EndpointSlice's %s, kube-proxy's minSyncPeriod of %s (kind's config), %s for one iptables-restore and %s for the next read. Before the delete, the same node forwarded to the pod. The rules, not kube-proxy's sync metric, because they are what decides where a connection goes; a metric says only that a sync happened. The time from the delete to the first read without the pod is the measured propagation.",
		sec(proxyRulesWithin), sec(readEvery), sec(endpointSliceWithin), sec(kubeProxyMinSyncPeriod), sec(kubeProxySyncAllowance), sec(rulesReadAllowance)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(recordFile, slicesFile)
	k.Require(clientNode(rec) != "", "the client pod's node is not in the record")
	worst := time.Duration(0)
	for _, f := range fs {
		if !k.deleted(f) {
			continue
		}
		if !k.Require(f.Endpoint != "", "%s: its endpoint never appeared in an EndpointSlice", f.v.Name) {
			continue
		}
		k.Require(f.ForwardedBefore != nil, "%s: no read of the client node's rules before the delete forwarded to %s", f.v.Name, f.Endpoint)
		p, ok := f.Propagation()
		if !k.Require(ok, "%s: every read after the delete still forwarded to %s (a stale endpoint)", f.v.Name, f.Endpoint) {
			continue
		}
		from, to, _ := f.DroppedBetween()
		deleted := f.deletedOnHost().T
		k.Cite(f.Dropped.Path)
		worst = max(worst, p.D)
		k.ObserveInterval(f.v.Name+"_propagation_seconds", p)
		k.Observe(f.v.Name+"_dropped_between", fmt.Sprintf("%+.3f s … %+.3f s", from.Sub(deleted).Seconds(), to.Sub(deleted).Seconds()))
		k.Require(k.WithinClocks(p, claims.NoLowerBound, proxyRulesWithin, f.v.Name+"'s propagation"), "%s: the client's node still forwarded to it until %.3f s after the delete, bound %s", f.v.Name, p.D.Seconds(), sec(proxyRulesWithin))
	}
	k.Observe("propagation_seconds", secs(worst))
	return k.Done()
}

func noPreStopFails(rec *evidence.Record, fs []facts) claims.Claim {
	f := byName(fs, "exit-now")
	k := newCheck(idNoPreStopFails, fmt.Sprintf("With no preStop and a program that exits at once on SIGTERM, requests fail, each in a named window: %q (each request takes %s to answer, longer than the client's node can be ahead of the kubelet, and at one every %s about half are the pod's: many are in flight at its SIGTERM) or %q (when the kubelet's SIGTERM beats the client node's rule update; a race, often lost by the kubelet on an idle node), or, a timeout after the rules dropped the pod, %q (a connection the pod never answered leaves a SYN_SENT conntrack entry to the pod for %s, and a new connection given its source port follows it). The program ended itself: exit code 0, not a kill.",
		windowInFlight, sec(exitNowAnswerAfter), sec(exitNowEvery), windowUnreachable, windowStaleConntrack, sec(synSentLifetime)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(requestsFile, recordFile)
	if !k.deleted(f) {
		return k.Done()
	}
	k.exitedByItself(f)
	if !k.clocksMeasured(f, "each failed request's window") {
		return k.Done()
	}
	failed := f.FailedByDeletion()
	k.Observe("failed_requests", len(failed))
	k.Observe("failed_in_stalls", len(f.Failed())-len(failed))
	k.Observe("requests", len(f.Requests))
	windows := f.Windows()
	k.Observe("windows", windows)
	if s, ok := f.SignalAt(); ok {
		k.ObserveInterval("sigterm_after_delete_seconds", f.sinceDelete(f.rec, s))
	}
	if p, ok := f.Propagation(); ok {
		k.ObserveInterval("rules_dropped_by_seconds", p)
	}
	outcomes := map[string]int{}
	for _, q := range failed {
		outcomes[q.Outcome]++
	}
	k.Observe("outcomes", outcomes)
	k.Require(len(failed) > 0, "no request to exit-now failed because of its deletion (%d sent)", len(f.Requests))
	for _, q := range failed {
		if w := f.Window(q); !explained(w) {
			k.Require(false, "request seq=%d (%s, started %+.3f s after the delete) is %s", q.Seq, q.Outcome, f.client(q.Start).T.Sub(f.deletedOnHost().T).Seconds(), w)
		}
	}
	return k.Done()
}

func preStopLosesNothing(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idPreStopNoFailures, fmt.Sprintf("With a preStop sleep of %s (exec and native), longer than the propagation measured in the same run for the same pod, no request fails: the process serves until the client's node has stopped sending to it. (A request lost in a stall of the client's node — timeouts on several Services at once, within %s — is no failure of this pod's deletion; it is counted apart and named.) The client kept sending throughout (no two requests %s apart between the delete and the exit).",
		sec(preStopSleep), sec(stallSpan), sec(maxRequestGap)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(requestsFile, recordFile)
	for _, name := range []string{"exec-sleep", "native-sleep"} {
		f := byName(fs, name)
		if !k.deleted(f) || !k.clocksMeasured(f, "each failed request's window and the client's longest pause from the delete", f.DeletedOn) {
			continue
		}
		failed := f.FailedByDeletion()
		k.Observe(name+"_failed_requests", len(failed))
		k.Observe(name+"_failed_in_stalls", len(f.Failed())-len(failed))
		k.Require(len(failed) == 0, "%s: %d request(s) failed, the first %s at %+.3f s", name, len(failed), outcomeOf(failed), startOf(f, failed))
		p, ok := f.Propagation()
		if k.Require(ok, "%s: the client node's rules were never seen without the pod: no propagation to compare", name) {
			k.ObserveInterval(name+"_propagation_seconds", p)
			k.Require(k.WithinClocks(p, claims.NoLowerBound, f.v.Sleep, name+"'s propagation"), "%s: the propagation (%.3f s) is not shorter than the preStop sleep %s", name, p.D.Seconds(), sec(f.v.Sleep))
		}
		until, _, ok := f.EndedAt()
		if !k.Require(ok, "%s: neither crictl nor its log showed the process end", name) {
			continue
		}
		gap, n := f.LongestGap(until)
		k.Observe(name+"_requests_during_shutdown", n)
		k.ObserveInterval(name+"_longest_request_gap_seconds", gap)
		k.Require(n > 0 && k.WithinClocks(gap, claims.NoLowerBound, maxRequestGap, name+"'s longest gap between requests"), "%s: the client did not keep sending (%d requests, longest gap %.3f s)", name, n, gap.D.Seconds())
	}
	return k.Done()
}

func outcomeOf(qs []evidence.Request) string {
	if len(qs) == 0 {
		return ""
	}
	return qs[0].Outcome
}

// startOf is when the first of the requests started, from the delete, both
// on the host's clock.
func startOf(f facts, qs []evidence.Request) float64 {
	if len(qs) == 0 {
		return 0
	}
	return f.client(qs[0].Start).T.Sub(f.deletedOnHost().T).Seconds()
}

func failuresAttributed(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idFailuresAttributed, fmt.Sprintf("Every failed request of every variant falls in a window of its pod's timeline that the deletion explains — %q, %q or %q — or, timed out together with requests to another Service (within %s), %q, which is named apart. None fails otherwise: not before its pod stopped accepting, not after the client's node removed it, not in the %s before the first delete.", windowUnreachable, windowInFlight, windowStaleConntrack, sec(stallSpan), windowStall, sec(baseline)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(requestsFile, recordFile)
	k.Require(len(rec.Requests) > 0, "no request of the client is in the record")
	total := 0
	for _, f := range fs {
		if !k.deleted(f) || !k.clocksMeasured(f, "each failed request's window") {
			continue
		}
		failed := f.Failed()
		total += len(failed)
		k.Observe(f.v.Name+"_failed", len(failed))
		if len(failed) > 0 {
			k.Observe(f.v.Name+"_windows", f.Windows())
		}
		for _, q := range failed {
			if w := f.Window(q); !explained(w) && w != windowStall {
				k.Require(false, "%s: request seq=%d (%s, %+.3f s after the delete) is %s", f.v.Name, q.Seq, q.Outcome, f.client(q.Start).T.Sub(f.deletedOnHost().T).Seconds(), w)
			}
		}
	}
	k.Observe("failed_requests", total)
	return k.Done()
}

func sigtermAfterPreStop(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idSigtermAfterPreStop, fmt.Sprintf("The kubelet runs the preStop first and sends SIGTERM only when it is over. exec-sleep: the hook logged its start within %s of the delete (the kubelet's sync), its end %s later, and the SIGTERM within %s after that end; the process exited after the hook ended. native-sleep (no process to log): the SIGTERM came %s to %s after the delete, the sleep plus the kubelet's sync. Both programs ended themselves on it: exit code 0, not a kill.",
		sec(claims.KubeletSyncAllowance), sec(preStopSleep), sec(hookReturnWithin), sec(preStopSleep), sec(preStopSleep+claims.KubeletSyncAllowance)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(recordFile)
	ex := byName(fs, "exec-sleep")
	if k.deleted(ex) {
		sig, sok := ex.SignalAt()
		l := ex.Log
		if k.Require(l != nil && l.PreStopStartAt != nil && l.PreStopEndAt != nil, "exec-sleep: its log has no preStop start and end lines") && k.Require(sok, "exec-sleep: its log has no SIGTERM") {
			startIv, end := ex.sinceDelete(rec, *l.PreStopStartAt), l.PreStopEndAt.Sub(*l.PreStopStartAt)
			start := startIv.D
			k.ObserveInterval("exec_prestop_started_after_delete_seconds", startIv)
			k.Observe("exec_prestop_ran_seconds", secs(end))
			k.Observe("exec_sigterm_after_prestop_end_seconds", secs(sig.Sub(*l.PreStopEndAt)))
			k.Require(k.CausedWithin(startIv, claims.KubeletSyncAllowance, "exec-sleep's preStop start after the delete"), "exec-sleep: the preStop started %.3f s after the delete", start.Seconds())
			k.Require(end >= preStopSleep, "exec-sleep: the preStop ran %.3f s, less than its %s", end.Seconds(), sec(preStopSleep))
			after := sig.Sub(*l.PreStopEndAt)
			// The hook's end line and the SIGTERM are one node's clock.
			k.Require(after >= 0 && after <= hookReturnWithin, "exec-sleep: SIGTERM %.3f s after the preStop ended (want 0 to %s)", after.Seconds(), sec(hookReturnWithin))
			if exit, how, ok := ex.EndedAt(); k.Require(ok, "exec-sleep: neither crictl nor its log showed the process end") {
				k.Observe("exec_exit_from", how)
				k.Require(!exit.Before(*l.PreStopEndAt), "exec-sleep: the process exited %.3f s before its preStop ended", l.PreStopEndAt.Sub(exit).Seconds())
			}
			k.exitedByItself(ex)
		}
	}
	nat := byName(fs, "native-sleep")
	if k.deleted(nat) {
		if sig, ok := nat.SignalAt(); k.Require(ok, "native-sleep: its log has no SIGTERM") {
			iv := nat.sinceDelete(rec, sig)
			d := iv.D
			k.ObserveInterval("native_sigterm_after_delete_seconds", iv)
			k.Require(k.WithinClocks(iv, preStopSleep, preStopSleep+claims.KubeletSyncAllowance, "native-sleep's SIGTERM after the delete"), "native-sleep: SIGTERM %.3f s after the delete (want %s to %s)", d.Seconds(), sec(preStopSleep), sec(preStopSleep+claims.KubeletSyncAllowance))
			if exit, how, ok := nat.EndedAt(); k.Require(ok, "native-sleep: neither crictl nor its log showed the process end") {
				k.Observe("native_exit_from", how)
				exitIv := nat.sinceDelete(rec, exit)
				k.Require(k.WithinClocks(exitIv, preStopSleep, claims.NoUpperBound, "native-sleep's exit after the delete"), "native-sleep: the process exited %.3f s after the delete, before its preStop sleep ended", exitIv.D.Seconds())
			}
			k.exitedByItself(nat)
		}
	}
	return k.Done()
}

func preStopCountsAgainstGrace(rec *evidence.Record, fs []facts) claims.Claim {
	f := byName(fs, "prestop-overrun")
	k := newCheck(idPreStopCountsGrace, fmt.Sprintf("preStop time counts against the grace period: prestop-overrun's %s preStop started within %s of the delete (the kubelet's sync), and the kubelet stopped waiting for it when the %s grace period was used up — the SIGTERM came no sooner than %s after the delete (the kubelet's clock starts after it) and no later than %s after the hook logged its start (its clock started before the hook ran; %s for the signal's log line), with the hook still running (no end line before it): not after the hook's %s, not after a fresh grace period.",
		sec(overrunSleep), sec(claims.KubeletSyncAllowance), sec(overrunGrace), sec(overrunGrace), sec(overrunGrace+claims.ExitAllowance), sec(claims.ExitAllowance), sec(overrunSleep)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(recordFile)
	if !k.deleted(f) {
		return k.Done()
	}
	l := f.Log
	if !k.Require(l != nil && l.PreStopStartAt != nil, "prestop-overrun: its log has no preStop start line") {
		return k.Done()
	}
	sig, ok := f.SignalAt()
	if !k.Require(ok, "prestop-overrun: its log has no SIGTERM") {
		return k.Done()
	}
	iv, fromHook := f.sinceDelete(rec, sig), sig.Sub(*l.PreStopStartAt)
	d := iv.D
	hookIv := f.sinceDelete(rec, *l.PreStopStartAt)
	k.ObserveInterval("prestop_started_after_delete_seconds", hookIv)
	k.Require(k.CausedWithin(hookIv, claims.KubeletSyncAllowance, "prestop-overrun's preStop start after the delete"), "prestop-overrun: the preStop started %.3f s after the delete", hookIv.D.Seconds())
	k.ObserveInterval("sigterm_after_delete_seconds", iv)
	k.Observe("sigterm_after_prestop_start_seconds", secs(fromHook))
	k.Require(k.WithinClocks(iv, overrunGrace, claims.NoUpperBound, "prestop-overrun's SIGTERM after the delete"), "SIGTERM %.3f s after the delete, before the %s grace period ended", d.Seconds(), sec(overrunGrace))
	k.Require(fromHook <= overrunGrace+claims.ExitAllowance, "SIGTERM %.3f s after the preStop started, later than its %s grace period (+%s)", fromHook.Seconds(), sec(overrunGrace), sec(claims.ExitAllowance))
	k.Require(l.PreStopEndAt == nil || l.PreStopEndAt.After(sig), "the preStop ended before the SIGTERM: it did not overrun")
	return k.Done()
}

func sigkillAtGraceEnd(rec *evidence.Record, fs []facts) claims.Claim {
	k := newCheck(idSigkillAtGraceEnd, fmt.Sprintf("A process that ignores SIGTERM is killed when the grace left at its SIGTERM runs out: ignore-term exited %d (SIGKILL) %s (-%s, +%s) after its SIGTERM (its whole grace period: no preStop used any); prestop-overrun, whose preStop used up its %s, exited %d %s (-%s, +%s) after its SIGTERM — the kubelet's one-time minimum (minimumGracePeriodInSeconds) after an overrun preStop, not a fresh grace period. -%s for a SIGTERM logged late, +%s for the runtime's kill and exit record on a loaded node (seen 0.65 s under a load average of 12), half the step from the 2 s minimum to a fresh 4 s grace.",
		sigkill, sec(ignoreGrace), sec(claims.ExitAllowance), sec(killAllowance), sec(overrunGrace), sigkill, sec(claims.KubeletMinimumGracePeriod), sec(claims.ExitAllowance), sec(killAllowance), sec(claims.ExitAllowance), sec(killAllowance)))
	if rec.NodeAccess == evidence.NodeAccessNone {
		return k.notChecked()
	}
	k.Cite(recordFile)
	for _, c := range []struct {
		name string
		want time.Duration
	}{{"ignore-term", ignoreGrace}, {"prestop-overrun", claims.KubeletMinimumGracePeriod}} {
		f := byName(fs, c.name)
		if !k.deleted(f) {
			continue
		}
		sig, ok := f.SignalAt()
		if !k.Require(ok && f.Log.OnTerm == workloadlog.OnTermIgnore, "%s: its log has no ignored SIGTERM", c.name) {
			continue
		}
		k.ObserveInterval(c.name+"_sigterm_after_delete_seconds", f.sinceDelete(rec, sig))
		exit, code, from, ok := f.ExitAt()
		if !k.Require(ok, "%s: neither crictl nor containerd's events showed its container exit", c.name) {
			continue
		}
		k.Cite(from)
		d := exit.Sub(sig)
		k.Observe(c.name+"_exit_code", code)
		k.Observe(c.name+"_exit_from", from)
		k.ObserveInterval(c.name+"_killed_after_delete_seconds", f.sinceDelete(rec, exit))
		k.Observe(c.name+"_killed_after_sigterm_seconds", secs(d))
		k.Require(code == sigkill, "%s: exit code %d, want %d (SIGKILL)", c.name, code, sigkill)
		k.Require(d >= c.want-claims.ExitAllowance && d <= c.want+killAllowance, "%s: killed %.3f s after its SIGTERM (want %s, -%s +%s)", c.name, d.Seconds(), sec(c.want), sec(claims.ExitAllowance), sec(killAllowance))
	}
	return k.Done()
}

// sortedKeys returns a map's keys in order, for stable text.
func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// exitedByItself requires the variant's process, which exits or drains on
// SIGTERM, to have ended with exit code 0 (crictl or containerd): a kill
// (137, 143) at the same moment would otherwise pass for its own exit.
func (k *check) exitedByItself(f facts) {
	_, code, from, ok := f.ExitAt()
	if !k.Require(ok, "%s: neither crictl nor containerd's events showed its exit code", f.v.Name) {
		return
	}
	k.Cite(from)
	k.Observe(f.v.Name+"_exit_code", code)
	k.Require(code == 0, "%s: exit code %d, want 0: it ends itself on SIGTERM", f.v.Name, code)
}

// clocksMeasured leaves the claim not checked, naming the clocks, when the
// variant's times are read on clocks the run did not measure and cannot
// take as the host's (facts.Unmeasured, with the more given): what names
// what compares them.
func (k *check) clocksMeasured(f facts, what string, more ...string) bool {
	u := f.Unmeasured(more...)
	if len(u) == 0 {
		return true
	}
	k.NotChecked(fmt.Sprintf("not checked: %s: %s puts times of the clock of %s, which the run did not measure, against the host's, on a cluster whose machines are not the host's (how far it reads from the host's clock is unknown)", f.v.Name, what, strings.Join(u, " and ")))
	return false
}
