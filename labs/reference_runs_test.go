package labs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// A committed run folder is one run: its summary.json and record.json carry
// the same run id. A reference whose summary was kept over a newer record
// (results:render once allowed it) pairs one run's times with another's
// observations, and the README numbers quoted from it mean nothing.
func TestCommittedRunsAreOneRunEach(t *testing.T) {
	for _, d := range All {
		dir := filepath.Join("..", "results", "reference", d.Name)
		if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
			continue
		}
		sum, err := report.ReadSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := evidence.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if sum.RunID != rec.RunID {
			t.Errorf("%s: summary.json is run %s, record.json is run %s", dir, sum.RunID, rec.RunID)
		}
	}
}

// Rerender refuses a folder whose summary and record are different runs.
func TestRerenderRefusesMixedRuns(t *testing.T) {
	src := filepath.Join("..", "results", "reference", "finalizer")
	dir := t.TempDir()
	for _, name := range []string{"summary.json", "record.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "summary.json" {
			sum, err := report.ReadSummary(src)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Replace(b, []byte(sum.RunID), []byte("20200101-000000-0000"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := Rerender(dir)
	if err == nil || !strings.Contains(err.Error(), "20200101-000000-0000") {
		t.Fatalf("Rerender of a summary over another run's record: %v, want a refusal naming both runs", err)
	}
}
