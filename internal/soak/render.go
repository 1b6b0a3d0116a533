package soak

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/report"
)

// Files of a soak folder.
const (
	MarkdownFile = "soak.md"
	JSONFile     = "soak.json"
)

// Write writes soak.json and soak.md into dir (made if missing).
func (r Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r.Dir = dir
	b, err := r.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, JSONFile), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(r.Markdown()), 0o644)
}

// JSON renders soak.json.
func (r Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Answer is a lab's result in one line: "lab:force 20/20 runs pass", or how
// many passed and what did not.
func (l Lab) Answer() string {
	s := fmt.Sprintf("lab:%s %d/%d runs pass", l.Lab, l.Passed, l.Runs)
	if l.Passed == l.Runs {
		return s
	}
	var parts []string
	if f := l.Flaky(); len(f) > 0 {
		// Claims that differ in the same runs are named together: one
		// interrupted run fails several claims at once.
		// A claim that passed wherever it was checked is apart: the runs
		// that did not check it lacked the evidence (node access, fake
		// nodes), which says more about where they ran than about the claim.
		var groups []string
		names := map[string][]string{}
		notChecked := map[string]bool{}
		for _, c := range f {
			odd := oddSummary(c)
			if _, ok := names[odd]; !ok {
				groups = append(groups, odd)
			}
			names[odd] = append(names[odd], "`"+c.ID+"`")
			notChecked[odd] = c.Fail == 0
		}
		var differ, unchecked []string
		for _, odd := range groups {
			t := fmt.Sprintf("%s (%s)", strings.Join(names[odd], ", "), odd)
			if notChecked[odd] {
				unchecked = append(unchecked, t)
			} else {
				differ = append(differ, t)
			}
		}
		if len(differ) > 0 {
			parts = append(parts, "verdicts differ: "+strings.Join(differ, "; "))
		}
		if len(unchecked) > 0 {
			parts = append(parts, "passed wherever checked: "+strings.Join(unchecked, "; "))
		}
	}
	if f := l.AlwaysFailing(); len(f) > 0 {
		var names []string
		for _, c := range f {
			names = append(names, "`"+c.ID+"`")
		}
		parts = append(parts, "fails in every run: "+strings.Join(names, ", "))
	}
	if n := l.Verdicts[string(claims.Partial)]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d partial (claims not checked)", n))
	}
	if n := l.failedOnErrors(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d failed with no claim failing (run errors)", n))
	}
	if n := l.failedClaimsAndErrors(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of the runs with failed claims ended with a run error too (interrupted, a step failed: see below)", n))
	}
	if n := l.Verdicts[NoSummary]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d left no summary", n))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}

// failedOnErrors counts the runs that failed although no claim failed in them.
func (l Lab) failedOnErrors() int {
	n := 0
	for _, ref := range l.RunList {
		if ref.Verdict == string(claims.Fail) && len(ref.FailedClaims) == 0 {
			n++
		}
	}
	return n
}

// failedClaimsAndErrors counts the runs in which claims failed and the run
// itself reported errors: their failed claims may say more about the run than
// about the claims.
func (l Lab) failedClaimsAndErrors() int {
	n := 0
	for _, ref := range l.RunList {
		if len(ref.FailedClaims) > 0 && len(ref.Errors) > 0 {
			n++
		}
	}
	return n
}

// oddSummary: "fail in 2 of 20: 20261204-…, 20261204-…".
func oddSummary(c ClaimStats) string {
	by := map[claims.Verdict][]string{}
	var order []claims.Verdict
	for _, o := range c.Odd {
		if _, ok := by[o.Verdict]; !ok {
			order = append(order, o.Verdict)
		}
		by[o.Verdict] = append(by[o.Verdict], o.RunID)
	}
	total := c.Pass + c.Fail + c.NotChecked
	var parts []string
	for _, v := range order {
		parts = append(parts, fmt.Sprintf("%s in %d of %d: %s", v, len(by[v]), total, strings.Join(by[v], ", ")))
	}
	return strings.Join(parts, "; ")
}

// Markdown renders soak.md: the answer first (each lab's runs passed, or its
// claims whose verdicts differ), then a table per lab.
func (r Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var names []string
	for _, l := range r.Labs {
		names = append(names, "lab:"+l.Lab)
	}
	p("# Soak: %s\n\n", strings.Join(names, ", "))
	if len(r.Labs) == 0 {
		p("**No runs.**\n\n")
	}
	for _, l := range r.Labs {
		p("- **%s**\n", l.Answer())
	}
	p("\n%s", r.Source)
	if !r.Started.IsZero() {
		end := r.Finished.UTC().Format("2006-01-02 15:04:05")
		if r.Finished.UTC().Format("20060102") == r.Started.UTC().Format("20060102") {
			end = r.Finished.UTC().Format("15:04:05")
		}
		p(", %s – %s UTC", r.Started.UTC().Format("2006-01-02 15:04:05"), end)
	}
	p(".\n")
	if r.Interrupted != "" {
		p("\n**Interrupted**: %s\n", r.Interrupted)
	}
	for _, l := range r.Labs {
		r.labMarkdown(&b, l)
	}
	if len(r.Skipped) > 0 {
		p("\n## Not counted\n\n")
		for _, s := range r.Skipped {
			p("- %s\n", cell(s))
		}
	}
	p("\n## Reading this\n\n")
	p("Verdicts count the runs that decided the claim. Timings are the claim's observed `*_seconds` values, in seconds: " +
		"first those it vouches for (±: how far another run may be from the reference in `results:compare`), then the others it reports. " +
		"p50 and p95 are nearest-rank (always one of the observed values; with fewer than 20 runs p95 is the maximum). " +
		"⚠ after a tolerance: max − min is wider than it, so one of these runs taken as the reference would fail `results:compare` on another. " +
		"Run time is from a run's start to its summary; waiting for the cluster's run lock is not in it.\n")
	return b.String()
}

func (r Report) labMarkdown(b *strings.Builder, l Lab) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## lab:%s: %d/%d runs pass\n\n", l.Lab, l.Passed, l.Runs)
	if d := l.RunSeconds; d != nil {
		p("Run time: %s.\n\n", distText(*d))
	}
	var notPassing []RunRef
	for _, ref := range l.RunList {
		if ref.Verdict != string(claims.Pass) {
			notPassing = append(notPassing, ref)
		}
	}
	if len(notPassing) > 0 {
		p("Runs that did not pass:\n\n")
		for _, ref := range notPassing {
			p("- %s: %s", r.runLink(ref), ref.Verdict)
			if ref.Seconds > 0 {
				p(" in %s s", num(ref.Seconds))
			}
			if len(ref.FailedClaims) > 0 {
				p(", failed %s", "`"+strings.Join(ref.FailedClaims, "`, `")+"`")
			}
			if len(ref.Errors) > 0 {
				p(" — %s", cell(shorten(strings.Join(ref.Errors, "; "), 300)))
			}
			p("\n")
		}
		p("\n")
	}

	p("| claim | verdicts | timing | vouched | n | min | p50 | p95 | max |\n")
	p("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range l.Claims {
		name := "`" + c.ID + "`"
		if c.Differs {
			name = "⚠ " + name
		}
		verdicts := verdictText(c)
		if len(c.Timings) == 0 {
			p("| %s | %s | – | | | | | | |\n", name, verdicts)
			continue
		}
		for i, t := range c.Timings {
			if i > 0 {
				name, verdicts = "", ""
			}
			vouched := "no"
			if t.Vouched {
				vouched = fmt.Sprintf("±%g", t.Tolerance)
				if t.WiderThanTolerance {
					vouched += " ⚠"
				}
			}
			key := strings.ReplaceAll(strings.TrimSuffix(t.Key, "_seconds"), "_", " ")
			if t.N == 0 {
				p("| %s | %s | %s | %s | 0 | | | | |\n", name, verdicts, key, vouched)
				continue
			}
			p("| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", name, verdicts, key, vouched, t.N, num(t.Min), num(t.P50), num(t.P95), num(t.Max))
		}
	}
	if f := l.Flaky(); len(f) > 0 {
		p("\nVerdicts that differ between runs:\n\n")
		for _, c := range f {
			p("- `%s` (%s) — %s\n", c.ID, verdictText(c), cell(c.Statement))
			for _, o := range c.Odd {
				p("  - %s in %s", o.Verdict, r.runLink(RunRef{RunID: o.RunID, Dir: l.dirOf(o.RunID)}))
				if o.Reason != "" {
					p(": %s", cell(shorten(o.Reason, 300)))
				}
				p("\n")
			}
		}
	}
	p("\n<details><summary>All %d runs</summary>\n\n", len(l.RunList))
	for _, ref := range l.RunList {
		p("- %s %s", r.runLink(ref), ref.Verdict)
		if ref.Seconds > 0 {
			p(" in %s s", num(ref.Seconds))
		}
		p("\n")
	}
	p("\n</details>\n")
}

func (l Lab) dirOf(runID string) string {
	for _, ref := range l.RunList {
		if ref.RunID == runID {
			return ref.Dir
		}
	}
	return ""
}

// runLink links the run's report, relative to the soak folder when known.
func (r Report) runLink(ref RunRef) string {
	id := ref.RunID
	if id == "" {
		id = "(no run id)"
	}
	if ref.Dir == "" {
		return id
	}
	target := filepath.Join(ref.Dir, report.MarkdownFile)
	if r.Dir != "" {
		if abs, err := filepath.Abs(target); err == nil {
			if base, err := filepath.Abs(r.Dir); err == nil {
				if rel, err := filepath.Rel(base, abs); err == nil {
					target = rel
				}
			}
		}
	}
	return fmt.Sprintf("[%s](%s)", id, filepath.ToSlash(target))
}

func verdictText(c ClaimStats) string {
	total := c.Pass + c.Fail + c.NotChecked
	var parts []string
	switch {
	case c.Pass == total:
		parts = append(parts, fmt.Sprintf("%d/%d pass", c.Pass, total))
	default:
		if c.Pass > 0 {
			parts = append(parts, fmt.Sprintf("%d pass", c.Pass))
		}
		if c.Fail > 0 {
			parts = append(parts, fmt.Sprintf("**%d fail**", c.Fail))
		}
		if c.NotChecked > 0 {
			parts = append(parts, fmt.Sprintf("%d not checked", c.NotChecked))
		}
	}
	if c.Absent > 0 {
		parts = append(parts, fmt.Sprintf("absent from %d", c.Absent))
	}
	return strings.Join(parts, ", ")
}

func distText(d Dist) string {
	return fmt.Sprintf("min %s s, p50 %s s, p95 %s s, max %s s (n %d)", num(d.Min), num(d.P50), num(d.P95), num(d.Max), d.N)
}

// num prints seconds to the precision they are worth reading at.
func num(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a == 0:
		return "0"
	case a < 1:
		return fmt.Sprintf("%.3f", v)
	case a < 100:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
