//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/report"
	kwoklab "github.com/termlab/termlab/labs/kwok"
)

// checkKwokRun: the report's fidelity table shows the faithful set matching
// the kubelet in every scenario and the ≤ v0.7 set reproducing the reported
// bug, and the summary records each fake pod's stage set.
func checkKwokRun(t *testing.T, s *report.Summary) {
	t.Helper()
	checkKwokSteps(t, s)
	checkKwokSummary(t, s.Dir)
	checkFidelityTable(t, s.Dir)
}

// checkKwokSteps: the steps were recorded; how long they took is a figure
// (side by side they take about ten seconds), not a pass/fail bound.
func checkKwokSteps(t *testing.T, s *report.Summary) {
	t.Helper()
	if len(s.Steps) == 0 {
		t.Fatal("no steps recorded")
	}
	first, last := s.Steps[0].StartedAt, s.Steps[len(s.Steps)-1].FinishedAt
	t.Logf("lab:kwok steps took %s", last.Sub(first).Round(100*time.Millisecond))
}

// checkKwokSummary: summary.json says which stage set played each fake pod.
func checkKwokSummary(t *testing.T, dir string) {
	t.Helper()
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sets map[string]any
	for _, c := range s.Claims {
		if c.ID == "kwok.stage_sets" {
			sets, _ = c.Observed["stage_set_by_pod"].(map[string]any)
		}
	}
	for _, sc := range kwoklab.Scenarios {
		for _, set := range kwok.StageSets {
			pod := kwoklab.PodName(sc.Name, set)
			if sets[pod] != set {
				t.Errorf("summary.json: pod %s stage set %v, want %s", pod, sets[pod], set)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, kwoklab.StagesFile)); err != nil {
		t.Errorf("the Stage objects were not saved: %v", err)
	}
	rec, err := evidence.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range kwoklab.Scenarios {
		for _, target := range kwoklab.Targets {
			pod := kwoklab.PodName(sc.Name, target)
			if _, ok := rec.Deleted(pod); !ok {
				t.Errorf("no DELETED event of pod %s: the run left it behind", pod)
			}
		}
	}
}

// checkFidelityTable reads the table back out of report.md.
func checkFidelityTable(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	header := "| scenario | " + strings.Join(kwok.StageSets, " | ") + " |"
	i := strings.Index(md, header)
	if i < 0 {
		t.Fatalf("report.md has no fidelity table (header %q)", header)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(md[i:], "\n")[2:] {
		if !strings.HasPrefix(line, "| **") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		name := strings.SplitN(strings.TrimSpace(cells[0]), "**", 3)[1]
		rows[name] = cells[1:]
	}
	for _, sc := range kwoklab.Scenarios {
		cells, ok := rows[sc.Name]
		if !ok || len(cells) != len(kwok.StageSets) {
			t.Errorf("fidelity table: row %s is %q", sc.Name, cells)
			continue
		}
		t.Logf("fidelity %s: faithful %s | v0.8 %s | v0.7 %s", sc.Name, cells[0], cells[1], cells[2])
		if strings.TrimSpace(cells[0]) != "match" {
			t.Errorf("fidelity table, %s × faithful: %q, want match", sc.Name, cells[0])
		}
		for j := 1; j < len(cells); j++ {
			if !strings.HasPrefix(strings.TrimSpace(cells[j]), "differs at #3: kubelet `container/heartbeat=terminated(reason=Completed,exitCode=0)`") {
				t.Errorf("fidelity table, %s × %s: %q, want the kubelet's termination as the first difference", sc.Name, kwok.StageSets[j], cells[j])
			}
		}
		if sc.Finalizer && !strings.Contains(cells[2], "kwok `finalizers=[]`") {
			t.Errorf("fidelity table, %s × %s: %q, want the finalizers stripped", sc.Name, kwok.SetKwokV07Fast, cells[2])
		}
	}
}
