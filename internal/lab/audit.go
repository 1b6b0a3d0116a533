package lab

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// AuditSection is report.md's account of what the API server received that
// changed the run's pods and nodes, from its audit log: who sent each request
// — the lab (or the person or script doing its steps), or the cluster itself:
// the kubelet's final delete, the pod garbage collector, the taint manager,
// the namespace controller at cleanup. Status updates and bindings are left
// out. Nil when the run has no audit record.
func AuditSection(rec *evidence.Record) *report.Section {
	if rec.AuditCount() == 0 {
		return nil
	}
	// The table shows the first auditRows requests; the deletes the lab did
	// not send are counted over all of them.
	first := report.Earliest[evidence.AuditEvent]{Keep: auditRows, At: func(e evidence.AuditEvent) time.Time { return e.ReceivedAt }}
	others := map[string]int{}
	_ = rec.EachAudit(func(e evidence.AuditEvent) bool {
		if e.Subresource != "" {
			return true
		}
		if !e.ByPerson() && e.Verb == "delete" {
			others[e.Sender()]++
		}
		first.Add(e)
		return true
	})
	events, total := first.Items()
	var rows [][]string
	for _, e := range events {
		opts := ""
		if e.GracePeriodSeconds != nil {
			opts = fmt.Sprintf("gracePeriodSeconds=%d", *e.GracePeriodSeconds)
		}
		if e.PropagationPolicy != "" {
			opts = strings.TrimSpace(opts + " propagationPolicy=" + e.PropagationPolicy)
		}
		if len(e.Patch) > 0 {
			opts = strings.TrimSpace(opts + " " + string(e.Patch))
		}
		if e.Taints != nil {
			opts = strings.TrimSpace(opts + " taints now " + fmt.Sprint(e.Taints))
		}
		if e.DryRun {
			opts = strings.TrimSpace(opts + " (server-side dry run)")
		}
		answer := fmt.Sprint(e.Code)
		if e.Result != "" {
			answer += " " + e.Result
			if e.DeletionGracePeriodSeconds != nil {
				answer += fmt.Sprintf(" (grace %d)", *e.DeletionGracePeriodSeconds)
			}
		}
		sender := e.Sender()
		if !e.ByPerson() {
			sender = "**" + sender + "**"
		}
		agent, _, _ := strings.Cut(e.UserAgent, " ")
		rows = append(rows, []string{
			fmt.Sprintf("+%.3fs", e.ReceivedAt.Sub(rec.StartedAt).Seconds()), sender, agent,
			strings.ToUpper(e.Verb) + " " + e.Object(), opts, answer,
		})
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Every request that created, changed or deleted the run's pods and nodes, as the API server's audit log recorded it (`" + evidence.AuditFile + "`; times from the run's start, by the server's clock). Senders in bold are the cluster itself, not the lab.")
	if len(others) > 0 {
		var parts []string
		for who, n := range others {
			parts = append(parts, fmt.Sprintf("%s %d", who, n))
		}
		b.WriteString(" Deletes the lab did not send: " + strings.Join(sorted(parts), ", ") + ".")
	}
	if total > len(rows) {
		fmt.Fprintf(&b, " The first %d of %d requests (all are in `%s`).", len(rows), total, evidence.AuditFile)
	}
	b.WriteString("\n\n")
	b.WriteString(report.Table([]string{"received", "sender", "user agent", "request", "options", "answer"}, rows))
	return &report.Section{Title: "What the API server received", Body: b.String()}
}

// auditRows bounds the table: a run of thousands of pods has hundreds of
// thousands of requests.
const auditRows = 400

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
