package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Markdown renders report.md: the story of the run for a person.
func Markdown(run Run) []byte {
	s, rec := run.Summary, run.Record
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	passed := 0
	for _, c := range s.Claims {
		if c.Passed() {
			passed++
		}
	}
	p("# %s\n\n", run.Title)
	if run.Question != "" {
		p("**Question.** %s\n\n", run.Question)
	}
	if run.Answer != "" {
		p("**Answer from this run.** %s\n\n", run.Answer)
	}
	tally := fmt.Sprintf("%d of %d claims passed", passed, len(s.Claims))
	if s.Verdict == claims.Partial {
		tally = fmt.Sprintf("%d of %d claims checked, all passed; %d not checked, so this run proves less than the lab states", passed, len(s.Claims), claims.CountNotChecked(s.Claims))
	}
	p("**Verdict: %s** — %s. Run `%s`, started %s UTC, took %s; namespace `%s`.\n\n",
		strings.ToUpper(string(s.Verdict)), tally, s.RunID, s.StartedAt.UTC().Format("2006-01-02 15:04:05"),
		s.FinishedAt.Sub(s.StartedAt).Round(100*time.Millisecond), s.Namespace)
	if n := claims.CountNotChecked(s.Claims); n > 0 {
		if notCheckedForNodes(s.Claims) {
			p("**%d claim(s) not checked:** the run had no access to the nodes (a cluster reached through a kubeconfig without `-node-access`), and these claims rest on the node's container runtime. They are not passed; run again with `-node-access` to decide them.\n\n", n)
		} else {
			p("**%d claim(s) not checked:** the run could not decide them (each says why below). They are not passed.\n\n", n)
		}
	}
	p("![Timeline: the API object against the container on the node](%s)\n\n", TimelineFile)
	p("Time runs left to right, in seconds from the first delete")
	if tl := timeFrame(rec); !tl.Origin.Equal(tl.Start) {
		p(" (%s of the run; the tables below count from the run's start)", rel(tl.Start, tl.Origin))
	}
	if UseAggregate(rec) {
		p(". With more than %d pods the picture counts them: how many were Pending, Running, Terminating and gone at each moment, the lab's actions as numbered marks, and pods DELETED per second below; every pod's events are in [%s](%s).\n\n", AggregateAbove, evidence.EventsFile, evidence.EventsFile)
	} else {
		p(". Each incarnation of a pod (one UID) has a lane of what the API server reports and one per container of what the runtime on its node (crictl) reports; a pod on a kwok fake node has no container, only the API's lane. The legend under the picture names every colour used.\n\n")
	}
	// Developer detail comes after the picture: the reader wants the answer
	// and what happened first, how exact each timing is after.
	if len(s.Clocks) > 0 {
		var cs []string
		for _, c := range s.Clocks {
			cs = append(cs, c.String())
		}
		p("**Clocks against the host's**, measured in this run: %s. A timing between two clocks is only this exact.\n\n", strings.Join(cs, "; "))
	}

	if len(s.Repairs) > 0 || len(s.Errors) > 0 {
		p("## Before and around the run\n\n")
		for _, r := range s.Repairs {
			p("- Repaired leftover: %s\n", r)
		}
		for _, e := range s.Errors {
			p("- Error: %s\n", e)
		}
		p("\n")
	}

	p("## Claims\n\n| | claim | statement |\n|---|---|---|\n")
	for _, c := range s.Claims {
		statement := c.Statement
		if c.Reason != "" {
			statement += " **" + reasonLabel(c.Verdict) + ": " + c.Reason + "**"
		}
		p("| %s | [`%s`](#%s) | %s |\n", mark(c.Verdict), c.ID, anchor(c.ID), cell(statement))
	}
	p("\n## What each claim observed\n\n")
	for _, c := range s.Claims {
		p("### %s %s\n\n", mark(c.Verdict), c.ID)
		if c.Reason != "" {
			p("**%s:** %s\n\n", reasonLabel(c.Verdict), c.Reason)
		}
		if len(c.Preconditions) > 0 {
			p("| precondition (arranged by termlab, not observed) | scheduled | in this run |\n|---|---|---|\n")
			for _, pc := range c.Preconditions {
				actual := "not measured"
				if pc.Measured() {
					actual = fmt.Sprintf("%g s", *pc.ActualSeconds)
					if !pc.Met() {
						actual += " — not met"
					}
				}
				p("| %s | %g s | %s |\n", cell(pc.Arranged), pc.ScheduledSeconds, actual)
			}
			p("\n")
		}
		keys := make([]string, 0, len(c.Observed))
		for k := range c.Observed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			p("| observed | value |\n|---|---|\n")
		}
		for _, k := range keys {
			v := humanValue(k, c.Observed[k], rec.StartedAt)
			if tol, ok := c.Tolerances[k]; ok {
				v += fmt.Sprintf(" (runs compare within ±%g s)", tol)
			}
			p("| %s | %s |\n", strings.ReplaceAll(k, "_", " "), cell(v))
		}
		if len(c.Evidence) > 0 {
			p("\nEvidence: ")
			for i, e := range c.Evidence {
				if i > 0 {
					p(", ")
				}
				p("[%s](%s)", e, e)
			}
			p("\n")
		}
		p("\n")
	}

	writeSections(&b, run.Sections)

	p("## Steps\n\n| # | step | start | took | outcome |\n|---|---|---|---|---|\n")
	for i, st := range rec.Steps {
		outcome := "ok"
		if st.Error != "" {
			outcome = "error: " + st.Error
		}
		p("| %d | %s | %s | %s | %s |\n", i+1, cell(st.Name), rel(rec.StartedAt, st.StartedAt), st.FinishedAt.Sub(st.StartedAt).Round(100*time.Millisecond), cell(outcome))
	}
	p("\n")

	if len(rec.Actions) > 0 {
		p("## Requests and node commands\n\nWhat the lab did, as a person would type it (exact requests below and in [%s](%s)).\n\n| # | start | what | as a user would type it | result |\n|---|---|---|---|---|\n", evidence.ActionsFile, evidence.ActionsFile)
		actions := rec.Actions
		if len(actions) > maxRows {
			actions = actions[:maxRows]
		}
		for i, a := range actions {
			result := fmt.Sprintf("ok in %s", a.FinishedAt.Sub(a.StartedAt).Round(time.Millisecond))
			if a.Error != "" {
				result = "error: " + a.Error
			}
			p("| %d | %s | %s %s | `%s` | %s |\n", i+1, rel(rec.StartedAt, a.StartedAt), a.Kind, a.Target, cell(a.Equivalent), cell(result))
		}
		if len(actions) < len(rec.Actions) {
			p("| | | … %d more | | |\n", len(rec.Actions)-len(actions))
		}
		p("\n<details><summary>The exact requests (%d)</summary>\n\n", len(actions))
		for i, a := range actions {
			p("%d. %s %s:\n\n   ```json\n   %s\n   ```\n\n", i+1, a.Kind, a.Target, strings.ReplaceAll(indentJSON(a.Request), "\n", "\n   "))
		}
		p("</details>\n\n")
	}

	pods, omitted := DrawnPods(rec)
	if len(pods) > 0 {
		p("## Deletion as a sequence of transitions\n\nEach pod's watch events normalised to the ordered changes of the fields deletion is about (times, UIDs and resourceVersions left out), from the first event with a deletionTimestamp on. Rows with the same event number arrived in one watch event.")
		if len(omitted) > 0 {
			p(" The table and the picture show the first %d of %d pods; every pod's events are in [%s](%s).", len(pods), len(pods)+len(omitted), evidence.EventsFile, evidence.EventsFile)
		}
		p("\n\n<details><summary>The transition table, %s</summary>\n\n", plural(len(pods), "pod"))
		seqs := make([][]claims.Transition, len(pods))
		longest := 0
		p("| # |")
		events := rec.EventsOfPods(pods) // one pass: the events may be on disk
		for i, pod := range pods {
			seqs[i] = claims.DeletionTransitions(events[pod])
			if len(seqs[i]) > longest {
				longest = len(seqs[i])
			}
			p(" %s |", pod)
		}
		p("\n|---|%s\n", strings.Repeat("---|", len(pods)))
		for row := 0; row < longest; row++ {
			p("| %d |", row+1)
			for _, sq := range seqs {
				if row < len(sq) {
					p(" %d: `%s` |", sq[row].Event, sq[row].String())
				} else {
					p(" |")
				}
			}
			p("\n")
		}
		p("\n</details>\n\n")
		if len(pods) > 1 {
			for i := 1; i < len(pods); i++ {
				if at, differs := claims.FirstDifference(seqs[0], seqs[i]); differs {
					p("- %s differs from %s first at row %d: %s vs %s.\n", pods[i], pods[0], at+1, seqAt(seqs[i], at), seqAt(seqs[0], at))
				} else {
					p("- %s matches %s transition for transition.\n", pods[i], pods[0])
				}
			}
			p("\n")
		}
	}

	shown, total := timelineRows(rec)
	if total > len(shown) {
		p("## Timeline\n\nEverything recorded, in the order observed (times after the run started): the first %d of %d records (all of them are in the JSONL files).\n\n<details><summary>The first %d records</summary>\n\n| time | source | what |\n|---|---|---|\n", len(shown), total, len(shown))
	} else {
		p("## Timeline\n\nEverything recorded, in the order observed (times after the run started).\n\n<details><summary>All %d records</summary>\n\n| time | source | what |\n|---|---|---|\n", total)
	}
	for _, r := range shown {
		p("| %s | %s | %s |\n", rel(rec.StartedAt, r.at), r.source, cell(r.what))
	}
	p("\n</details>\n\n")

	if len(rec.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range rec.Notes {
			p("- %s %s\n", rel(rec.StartedAt, n.At), n.Text)
		}
		p("\n")
	}

	p("## Versions\n\n| component | version |\n|---|---|\n")
	keys := make([]string, 0, len(s.Versions))
	for k := range s.Versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("| %s | %s |\n", k, cell(s.Versions[k]))
	}
	p("\n## Files\n\n")
	p("- [%s](%s): this run's verdict, claims and versions\n", SummaryFile, SummaryFile)
	p("- [%s](%s): every watch event on the run's pods, with the whole object\n", evidence.EventsFile, evidence.EventsFile)
	p("- [%s](%s): the namespace's Kubernetes events; [%s](%s): the nodes' Ready condition\n", evidence.KubeEventsFile, evidence.KubeEventsFile, evidence.NodesFile, evidence.NodesFile)
	p("- [%s](%s): steps, snapshots and crictl observations; `steps/`: YAML snapshots and raw crictl output per step; `inputs/`: the exact inputs\n", evidence.RecordFile, evidence.RecordFile)
	p("- [%s](%s): one test case per claim\n", JUnitFile, JUnitFile)
	return []byte(b.String())
}

// maxRows bounds the report's tables of records and requests: a run of
// thousands of pods keeps its report readable; the JSONL files hold all.
const maxRows = 400

type row struct {
	at     time.Time
	source string
	what   string
}

// timelineRows are the first maxRows records in the order observed, and how
// many there are in all.
func timelineRows(rec *evidence.Record) ([]row, int) {
	rows := Earliest[row]{Keep: maxRows, At: func(r row) time.Time { return r.at }}
	for _, a := range rec.Actions {
		what := string(a.Kind) + " " + a.Target
		if a.Error != "" {
			what += " (failed: " + a.Error + ")"
		}
		rows.Add(row{a.StartedAt, "lab", what})
	}
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		rows.Add(row{e.ObservedAt, "API watch", e.Name + " " + evidence.Describe(e)})
		return true
	})
	for _, o := range rec.Containers {
		what := fmt.Sprintf("%s %s", o.Pod, o.State)
		if o.State == "" {
			what += "(" + o.Error + ")"
		}
		if o.ExitCode != nil {
			what += fmt.Sprintf(" exit=%d", *o.ExitCode)
		}
		if o.FinishedAt != nil {
			what += " finishedAt=" + rel(rec.StartedAt, *o.FinishedAt)
		}
		if o.Log != nil {
			what += fmt.Sprintf(" last heartbeat seq=%d", o.Log.LastSeq)
			if o.Log.Signal != "" {
				what += " " + o.Log.Signal + " logged"
			}
		}
		rows.Add(row{o.ObservedAt, "crictl on " + o.Node, what})
	}
	for _, n := range rec.NodeEvents {
		rows.Add(row{n.ObservedAt, "node " + n.Name, fmt.Sprintf("%s Ready=%s %s", n.Type, n.Ready, n.Reason)})
	}
	for _, k := range rec.KubeEvents {
		rows.Add(row{k.ObservedAt, "event", fmt.Sprintf("%s %s: %s (%s)", k.Object, k.Reason, k.Message, k.Source)})
	}
	return rows.Items()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func seqAt(s []claims.Transition, i int) string {
	if i < len(s) {
		return "`" + s[i].String() + "`"
	}
	return "(nothing)"
}

func mark(v claims.Verdict) string {
	switch v {
	case claims.Pass:
		return "✅"
	case claims.NotChecked:
		return "➖"
	}
	return "❌"
}

// anchor is the id GitHub-style markdown gives the claim's heading ("### ✅ id").
func anchor(id string) string {
	return "-" + strings.ReplaceAll(strings.ToLower(id), ".", "")
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// humanValue shows an observed value for a person: durations in seconds,
// times relative to the run's start, container IDs shortened as crictl ps
// shows them. The raw values stay in summary.json.
func humanValue(key string, v any, start time.Time) string {
	switch x := v.(type) {
	case float64:
		if strings.HasSuffix(key, "_seconds") {
			return FormatSeconds(x)
		}
		return fmt.Sprint(x)
	case int, int32, int64:
		return fmt.Sprint(x)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return fmt.Sprintf("%s (%s UTC)", rel(start, t), t.UTC().Format("15:04:05.000"))
		}
		if len(x) == 64 && strings.Trim(x, "0123456789abcdef") == "" {
			return "`" + x[:13] + "`"
		}
		return x
	}
	return value(v)
}

func indentJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

func value(v any) string {
	switch x := v.(type) {
	case string:
		return "`" + x + "`"
	case nil:
		return "`null`"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return "`" + string(b) + "`"
}

// reasonLabel names a claim's reason by its verdict: a claim not checked
// did not fail.
func reasonLabel(v claims.Verdict) string {
	if v == claims.NotChecked {
		return "Not checked"
	}
	return "Failed"
}

// notCheckedForNodes says whether every claim not checked was for want of
// the node (the banner's usual cause).
func notCheckedForNodes(cs []claims.Claim) bool {
	for _, c := range cs {
		if c.Verdict == claims.NotChecked && c.Reason != claims.NeedsNodeAccess {
			return false
		}
	}
	return true
}
