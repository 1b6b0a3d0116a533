package graceful

import (
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/workloadlog"
)

// Answer is the opening of lab:graceful's report: the table a person wants,
// variant × failed requests × why, from this run's record and claims.
func Answer(rec *evidence.Record, decided []claims.Claim) string {
	f := report.NewFindings(decided)
	fs := factsOf(rec)
	var rows [][]string
	for _, x := range fs {
		failed := x.Failed()
		rows = append(rows, []string{"`" + x.v.Name + "` — " + x.v.Title, fmt.Sprintf("%d of %d", len(failed), len(x.Requests)), why(x)})
	}
	head := finding(f, fs) + " " + f.Say(idClientNodeDrops, fmt.Sprintf("The client's node stopped forwarding to a deleted pod at most %s after its delete (its iptables rules, read every %s).", f.Seconds(idClientNodeDrops, "propagation_seconds"), sec(readEvery)))
	var failedClaims []string
	for _, c := range decided {
		if c.Verdict == claims.Fail {
			failedClaims = append(failedClaims, c.ID)
		}
	}
	tail := ""
	if len(failedClaims) > 0 {
		tail = "\n\nNot as claimed in this run: " + strings.Join(failedClaims, ", ") + " (see below)."
	}
	return head + "\n\n" + report.Table([]string{"variant", "failed requests", "why"}, rows) + tail
}

// finding is the table's finding in plain words: how many requests the
// variant without a preStop lost, and that the preStop sleeps lost none,
// each sentence resting on its claim.
func finding(f report.Findings, fs []facts) string {
	var lost, sleeps []string
	var sleptFor time.Duration
	for _, x := range fs {
		counted := fmt.Sprintf("%d of %d", len(x.Failed()), len(x.Requests))
		switch {
		case x.v.PreStop == noPreStop && x.v.OnTerm == workloadlog.OnTermExit:
			var parts []string
			windows := x.Windows()
			for _, w := range sortedKeys(windows) {
				parts = append(parts, fmt.Sprintf("%d %s", windows[w], w))
			}
			line := fmt.Sprintf("With no preStop (`%s`), %s requests failed", x.v.Name, counted)
			if len(parts) > 0 {
				line += ": " + strings.Join(parts, "; ")
			}
			lost = append(lost, line)
		case x.v.PreStop != noPreStop && x.v.Sleep == preStopSleep:
			sleptFor = x.v.Sleep
			sleeps = append(sleeps, fmt.Sprintf("%s (`%s`)", counted, x.v.Name))
		}
	}
	out := f.Say(idNoPreStopFails, strings.Join(lost, " ")+".")
	if len(sleeps) > 0 {
		out += " " + f.Say(idPreStopNoFailures, fmt.Sprintf("With a %s preStop sleep, none: %s.", sec(sleptFor), strings.Join(sleeps, " and ")))
	}
	return out
}

// why explains a variant's count from its own timeline, on the host's clock.
func why(x facts) string {
	stopped, sok := x.StoppedAccepting()
	p, pok := x.Propagation()
	if x.Deleted.IsZero() || !sok || !pok {
		return "the record lacks this pod's delete, stop or rule change"
	}
	at := func(t time.Time) string { return fmt.Sprintf("%+.2f s", t.Sub(x.deletedOnHost().T).Seconds()) }
	stop := "stopped accepting (SIGTERM) at " + at(x.server(stopped).T)
	if x.v.OnTerm == "ignore" {
		stop = "served until SIGKILL at " + at(x.server(stopped).T)
	}
	failed := x.Failed()
	if len(failed) == 0 {
		return fmt.Sprintf("the client's node stopped sending to it by %+.2f s; it %s — after that", p.D.Seconds(), stop)
	}
	var parts []string
	windows := x.Windows()
	for _, w := range sortedKeys(windows) {
		parts = append(parts, fmt.Sprintf("%d %s", windows[w], w))
	}
	from, to, _ := x.DroppedBetween()
	return fmt.Sprintf("it %s; the client's node stopped sending to it between %s and %s: %s", stop, at(from), at(to), strings.Join(parts, "; "))
}

// Report is the per-variant timeline, times from each pod's delete.
func Report(rec *evidence.Record, _ []claims.Claim) []report.Section {
	fs := factsOf(rec)
	header := []string{"variant", "endpoint terminating (serving)", "client node stops forwarding", "preStop", "SIGTERM", "exit (crictl or containerd)", "failed requests"}
	var rows [][]string
	for _, x := range fs {
		if x.Deleted.IsZero() {
			continue
		}
		// Every time on the host's clock: the client's node's and the
		// server's node's through their measured offsets.
		host := func(t time.Time) *time.Time { return &t }
		server := func(t *time.Time) *time.Time {
			if t == nil {
				return nil
			}
			return host(x.server(*t).T)
		}
		at := func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return fmt.Sprintf("%+.3f s", t.Sub(x.deletedOnHost().T).Seconds())
		}
		term := "—"
		if x.Terminating != nil {
			term = fmt.Sprintf("%s (serving=%v)", at(&x.Terminating.ObservedAt), x.Serving)
		}
		drop := "never seen"
		if from, to, ok := x.DroppedBetween(); ok {
			drop = at(&from) + " … " + at(&to)
		}
		pre := "none"
		switch x.v.PreStop {
		case nativePreStop:
			pre = fmt.Sprintf("native sleep %s (no process: ends at the SIGTERM)", sec(x.v.Sleep))
		case execPreStop:
			if x.Log != nil {
				pre = at(server(x.Log.PreStopStartAt)) + " … " + at(server(x.Log.PreStopEndAt))
			}
		}
		var sig *time.Time
		if s, ok := x.SignalAt(); ok {
			sig = server(&s)
		}
		exit := "—"
		if e, code, _, ok := x.ExitAt(); ok {
			exit = fmt.Sprintf("%s, code %d", at(server(&e)), code)
		}
		var failed []string
		for _, q := range x.Failed() {
			failed = append(failed, fmt.Sprintf("%s %s", at(host(x.client(q.Start).T)), q.Outcome))
		}
		fl := "none"
		if len(failed) > 0 {
			fl = strings.Join(failed, ", ")
		}
		rows = append(rows, []string{"`" + x.v.Name + "`", term, drop, pre, at(sig), exit, fl})
	}
	body := fmt.Sprintf("Each row in seconds from its pod's delete's arrival at the API server, every time on the host's clock (the nodes' put there through their measured offsets). The client's node is %s; it stopped forwarding to the pod between the later of the last read of its rules that still did (read every %s, each read a node command) and the last request the client's log shows sent to the pod, and the end of the first read that no longer did. The client sent a request to each Service every %s (exit-now's every %s), each on a new connection (%s).",
		clientNode(rec), sec(readEvery), sec(requestEvery), sec(exitNowEvery), evidence.RequestsFile)
	return []report.Section{{Title: "One timeline per variant", Body: body + "\n\n" + report.Table(header, rows), Traffic: picture(rec, fs)}}
}
