package report

import (
	"strings"
	"testing"
)

func TestSectionsFollowTheClaims(t *testing.T) {
	run := orphanRun()
	without := string(Markdown(run))
	run.Sections = []Section{{Title: "Fidelity", Body: Table([]string{"a", "b|c"}, [][]string{{"`x=1`", "two\nlines"}})}}
	md := string(Markdown(run))
	want := "## Fidelity\n\n| a | b\\|c |\n|---|---|\n| `x=1` | two lines |\n\n## Steps\n"
	if !strings.Contains(md, want) {
		t.Fatalf("report.md does not hold the section before the steps:\n%s", md)
	}
	if strings.Replace(md, "## Fidelity\n\n| a | b\\|c |\n|---|---|\n| `x=1` | two lines |\n\n", "", 1) != without {
		t.Error("a section changed more of report.md than its own part")
	}
	if i, j := strings.Index(md, "## Claims"), strings.Index(md, "## Fidelity"); i < 0 || j < i {
		t.Error("the section is not after the claims")
	}
}
