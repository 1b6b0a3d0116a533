// Package resultsindex writes results/index.md and results/index.html: every run folder under
// results/ — lab, run id, time, versions, verdict — newest first, each
// linked to its report, and the committed reference runs below. It reads
// only the run folders' summary.json, so it can be regenerated at any time;
// the lab targets and the workshop session call Write after each run.
package resultsindex

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/report"
)

// File is the index's name in the results folder.
const File = "index.md"

// referenceDir is results/reference/<lab>/ (see internal/compare).
const referenceDir = "reference"

// tableDirs hold tables over runs, not runs: results/matrix/<time>/ and
// results/soak/<time>/ (their own matrix.md, soak.md link the runs).
var tableDirs = map[string]bool{"matrix": true, "soak": true}

// Entry is one run folder.
type Entry struct {
	Lab   string
	RunID string
	// Dir is the run folder relative to the results folder (slash-separated).
	Dir string
	// Summary is nil when the folder has no readable summary.json (a run
	// still going, or killed before it wrote one).
	Summary *report.Summary
	Problem string
	// Latest: <lab>/latest points here.
	Latest bool
	// Reference: results/reference/<lab>.
	Reference bool
	// HasReport: report.md exists.
	HasReport bool
}

// Collect reads every run folder under resultsDir.
func Collect(resultsDir string) ([]Entry, error) {
	labs, err := os.ReadDir(resultsDir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, l := range labs {
		if !l.IsDir() || tableDirs[l.Name()] {
			continue
		}
		labDir := filepath.Join(resultsDir, l.Name())
		runs, err := os.ReadDir(labDir)
		if err != nil {
			return nil, err
		}
		if l.Name() == referenceDir {
			for _, r := range runs {
				if r.IsDir() {
					e := entry(resultsDir, r.Name(), "", filepath.Join(labDir, r.Name()))
					e.Reference = true
					out = append(out, e)
				}
			}
			continue
		}
		latest, _ := os.Readlink(filepath.Join(labDir, "latest"))
		for _, r := range runs {
			if !r.IsDir() || strings.HasPrefix(r.Name(), ".") {
				continue // latest is a symlink; .latest-* are its temporaries
			}
			e := entry(resultsDir, l.Name(), r.Name(), filepath.Join(labDir, r.Name()))
			e.Latest = r.Name() == filepath.Base(latest)
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Reference != b.Reference {
			return !a.Reference
		}
		if a.RunID != b.RunID {
			return a.RunID > b.RunID // run ids start with the UTC time: newest first
		}
		return a.Lab < b.Lab
	})
	return out, nil
}

func entry(resultsDir, lab, runID, dir string) Entry {
	rel, _ := filepath.Rel(resultsDir, dir)
	e := Entry{Lab: lab, RunID: runID, Dir: filepath.ToSlash(rel)}
	if _, err := os.Stat(filepath.Join(dir, report.MarkdownFile)); err == nil {
		e.HasReport = true
	}
	s, err := report.ReadSummary(dir)
	if err != nil {
		e.Problem = "no summary.json (running, or interrupted before it was written)"
		if !os.IsNotExist(unwrapAll(err)) {
			e.Problem = err.Error()
		}
		return e
	}
	e.Summary = s
	if e.Lab == "" || e.Reference {
		e.Lab = s.Lab
	}
	if e.RunID == "" {
		e.RunID = s.RunID
	}
	return e
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}

// Render renders index.md.
func Render(entries []Entry) []byte {
	var b strings.Builder
	b.WriteString("# termlab runs\n\n")
	b.WriteString("Every run folder under results/, newest first; regenerated after each run (`results:index` rewrites it).\n")
	b.WriteString("Compare a run with its lab's reference run: `results:compare` (see results/README.md).\n\n")
	var runs, refs []Entry
	for _, e := range entries {
		if e.Reference {
			refs = append(refs, e)
		} else {
			runs = append(runs, e)
		}
	}
	if labs := LatestPerLab(entries); len(labs) > 0 {
		b.WriteString("## Each lab's latest run\n\n| lab | run | verdict | answer | picture |\n|---|---|---|---|---|\n")
		for _, e := range labs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(e.Lab), cell(runName(e)), cell(verdictOf(e)), cell(answerOf(e)), link(e.Dir, "timeline.svg", "timeline"))
		}
		b.WriteString("\n## Every run\n\n")
	}
	if len(runs) == 0 {
		b.WriteString("No runs yet.\n")
	} else {
		table(&b, runs)
	}
	if len(refs) > 0 {
		b.WriteString("\n## Reference runs\n\n")
		table(&b, refs)
	}
	return []byte(b.String())
}

func table(b *strings.Builder, es []Entry) {
	b.WriteString("| run | lab | started (UTC) | took | verdict | claims | Kubernetes | node image | kwok | report |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range es {
		run := e.RunID
		if e.Latest {
			run += " (latest)"
		}
		report := "—"
		if e.HasReport {
			report = fmt.Sprintf("[report.md](%s/report.md)", e.Dir)
		}
		s := e.Summary
		if s == nil {
			fmt.Fprintf(b, "| %s | %s | | | incomplete | %s | | | | %s |\n", cell(run), cell(e.Lab), cell(e.Problem), report)
			continue
		}
		passed := 0
		for _, c := range s.Claims {
			if c.Passed() {
				passed++
			}
		}
		verdict := string(s.Verdict)
		if len(s.Errors) > 0 {
			verdict += fmt.Sprintf(" (%d errors)", len(s.Errors))
		}
		v := s.Versions
		node := v["node_image"]
		if src := v["node_image_source"]; src != "" {
			node += " (" + src + ")"
		}
		kwok := v["kwok"]
		if set := v["kwok_stage_set"]; set != "" {
			kwok += ", stages " + set
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d/%d | %s | %s | %s | %s |\n",
			cell(run), cell(s.Lab), s.StartedAt.UTC().Format("2006-01-02 15:04:05"), took(s),
			cell(verdict), passed, len(s.Claims), cell(v["kubernetes_server"]), cell(node), cell(kwok), report)
	}
}

// LatestPerLab is one entry per lab, by lab name: its newest run, or its
// reference run when it has none yet. Entries come newest first (Collect).
func LatestPerLab(entries []Entry) []Entry {
	chosen := map[string]Entry{}
	for _, e := range entries {
		if e.Summary == nil {
			continue // a run still going or killed says nothing about the lab yet
		}
		prev, seen := chosen[e.Lab]
		if !seen || (prev.Reference && !e.Reference) {
			chosen[e.Lab] = e
		}
	}
	out := make([]Entry, 0, len(chosen))
	for _, e := range chosen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lab < out[j].Lab })
	return out
}

func runName(e Entry) string {
	if e.Reference {
		return e.RunID + " (reference)"
	}
	return e.RunID
}

func verdictOf(e Entry) string {
	if e.Summary == nil {
		return "incomplete"
	}
	return string(e.Summary.Verdict)
}

// answerOf is the run's answer; runs recorded before summary.json kept it
// point to their report.
func answerOf(e Entry) string {
	if e.Summary == nil || e.Summary.Answer == "" {
		return "in the report"
	}
	return proseOf(e.Summary.Answer)
}

// proseOf is an answer's text before its first table (lab:graceful answers
// with a variant table): an index row holds a sentence, the report the table.
func proseOf(answer string) string {
	var prose []string
	for _, l := range strings.Split(answer, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "|") {
			if len(prose) == 0 {
				return "a table, in the report"
			}
			return strings.Join(prose, " ") + " (the table is in the report)"
		}
		if t := strings.TrimSpace(l); t != "" {
			prose = append(prose, t)
		}
	}
	return strings.Join(prose, " ")
}

func link(dir, file, text string) string { return fmt.Sprintf("[%s](%s/%s)", text, dir, file) }

func took(s *report.Summary) string {
	if s.StartedAt.IsZero() || s.FinishedAt.Before(s.StartedAt) {
		return ""
	}
	return s.FinishedAt.Sub(s.StartedAt).Round(time.Second).String()
}

// cell keeps a value from breaking the table.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Write regenerates resultsDir/index.md and index.html (each atomically)
// and returns index.md's path.
func Write(resultsDir string) (string, error) {
	entries, err := Collect(resultsDir)
	if err != nil {
		return "", fmt.Errorf("indexing %s: %w", resultsDir, err)
	}
	page, err := RenderHTML(resultsDir, entries)
	if err != nil {
		return "", err
	}
	if err := writeAtomically(filepath.Join(resultsDir, HTMLFile), page); err != nil {
		return "", err
	}
	p := filepath.Join(resultsDir, File)
	return p, writeAtomically(p, Render(entries))
}

func writeAtomically(p string, b []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
