package resultsindex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/report"
)

func writeSummary(t *testing.T, dir string, s report.Summary) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, report.SummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.MarkdownFile), []byte("# report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWrite(t *testing.T) {
	results := t.TempDir()
	start := time.Date(2026, 12, 2, 11, 16, 14, 0, time.UTC)
	versions := map[string]string{"kubernetes_server": "v1.37.2", "node_image": "termlab.local/node:v1.37.2", "node_image_source": "built", "kwok": "v0.8.0", "kwok_stage_set": "faithful"}
	pass := []claims.Claim{{ID: "a", Verdict: claims.Pass}, {ID: "b", Verdict: claims.Pass}}
	writeSummary(t, filepath.Join(results, "finalizer", "20261202-111614-6364"), report.Summary{
		Lab: "finalizer", RunID: "20261202-111614-6364", Verdict: claims.Pass, StartedAt: start, FinishedAt: start.Add(47 * time.Second), Versions: versions, Claims: pass,
	})
	writeSummary(t, filepath.Join(results, "orphan", "20261202-112056-d170"), report.Summary{
		Lab: "orphan", RunID: "20261202-112056-d170", Verdict: claims.Fail, StartedAt: start.Add(5 * time.Minute), FinishedAt: start.Add(6 * time.Minute), Versions: versions,
		Claims: []claims.Claim{{ID: "a", Verdict: claims.Pass}, {ID: "b", Verdict: claims.Fail}}, Errors: []string{"interrupted"},
	})
	if err := os.MkdirAll(filepath.Join(results, "orphan", "20261202-112153-1e5a"), 0o755); err != nil { // killed before summary.json
		t.Fatal(err)
	}
	if err := os.Symlink("20261202-112153-1e5a", filepath.Join(results, "orphan", "latest")); err != nil {
		t.Fatal(err)
	}
	writeSummary(t, filepath.Join(results, "reference", "finalizer"), report.Summary{
		Lab: "finalizer", RunID: "20261201-090000-0000", Verdict: claims.Pass, StartedAt: start.Add(-26 * time.Hour), FinishedAt: start.Add(-26*time.Hour + 50*time.Second), Versions: versions, Claims: pass,
	})
	if err := os.WriteFile(filepath.Join(results, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"soak/20261202T120000Z/soak.md", "matrix/20261202T120000Z/matrix.md"} { // tables over runs, not runs
		if err := os.MkdirAll(filepath.Join(results, filepath.Dir(table)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(results, table), []byte("# table\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	p, err := Write(results)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	wantInOrder := []string{
		"| 20261202-112153-1e5a (latest) | orphan | | | incomplete | no summary.json (running, or interrupted before it was written) | | | | — |",
		"| 20261202-112056-d170 | orphan | 2026-12-02 11:21:14 | 1m0s | fail (1 errors) | 1/2 | v1.37.2 | termlab.local/node:v1.37.2 (built) | v0.8.0, stages faithful | [report.md](orphan/20261202-112056-d170/report.md) |",
		"| 20261202-111614-6364 | finalizer | 2026-12-02 11:16:14 | 47s | pass | 2/2 |",
		"## Reference runs",
		"| 20261201-090000-0000 | finalizer | 2026-12-01 09:16:14 | 50s | pass | 2/2 |",
		"[report.md](reference/finalizer/report.md)",
	}
	if strings.Contains(got, "20261202T120000Z") {
		t.Errorf("index.md lists a soak or matrix folder as a run:\n%s", got)
	}
	at := 0
	for _, w := range wantInOrder {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("index.md lacks (in order) %q:\n%s", w, got)
		}
		at += i + len(w)
	}
}

func TestHTMLShowsEachRunsTimelineAndLinksOnlyWhatExists(t *testing.T) {
	results := t.TempDir()
	start := time.Date(2026, 12, 2, 11, 16, 14, 0, time.UTC)
	run := filepath.Join(results, "force", "20261202-111925-7f5b")
	writeSummary(t, run, report.Summary{Lab: "force", RunID: "20261202-111925-7f5b", Verdict: claims.Fail, StartedAt: start, FinishedAt: start.Add(4 * time.Second),
		Claims: []claims.Claim{{ID: "a", Verdict: claims.Fail}}, Errors: []string{"<b>interrupted</b>"}})
	if err := os.WriteFile(filepath.Join(run, report.TimelineFile), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(results, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`<img class="timeline" src="force/20261202-111925-7f5b/timeline.svg"`,
		`<a href="force/20261202-111925-7f5b/report.md">report</a>`,
		`<span class="verdict fail">FAIL</span>`,
		"&lt;b&gt;interrupted&lt;/b&gt;", // escaped, not markup
		"<h2>Runs</h2>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("index.html lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Reference runs") {
		t.Error("index.html has a reference section with no reference runs")
	}
}

func TestFirstScreenIsOneRowPerLab(t *testing.T) {
	results := t.TempDir()
	start := time.Date(2026, 12, 2, 11, 16, 14, 0, time.UTC)
	for _, r := range []struct{ dir, lab, id, answer string }{
		{"orphan/20261202-100000-aaaa", "orphan", "20261202-100000-aaaa", "older run"},
		{"orphan/20261202-110000-bbbb", "orphan", "20261202-110000-bbbb", "the container ran 59 s after its pod was gone"},
		{"reference/orphan", "orphan", "20261201-090000-0000", "reference answer"},
		{"reference/force", "force", "20261201-080000-0000", "force answer"},
	} {
		dir := filepath.Join(results, filepath.FromSlash(r.dir))
		writeSummary(t, dir, report.Summary{Lab: r.lab, RunID: r.id, Verdict: claims.Pass, StartedAt: start, FinishedAt: start.Add(time.Minute), Answer: r.answer})
		if err := os.WriteFile(filepath.Join(dir, report.TimelineFile), []byte("<svg/>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(results, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	first := strings.Index(page, `<img class="timeline"`)
	table := strings.Index(page, `<table class="labs"`)
	if table < 0 || first < table {
		t.Fatalf("the lab table is not before the first full timeline:\n%s", page)
	}
	rows := page[table:strings.Index(page, "</table>")]
	for _, want := range []string{`data-lab="force"`, "force answer", "(reference)", `data-lab="orphan"`, "the container ran 59 s after its pod was gone", `<img class="thumbnail" src="orphan/20261202-110000-bbbb/timeline.svg"`} {
		if !strings.Contains(rows, want) {
			t.Errorf("the lab table lacks %s:\n%s", want, rows)
		}
	}
	for _, not := range []string{"older run", "reference answer"} {
		if strings.Contains(rows, not) {
			t.Errorf("the lab table shows %q, which is not the lab's latest run", not)
		}
	}
	if n := strings.Count(rows, `<tr class="lab"`); n != 2 {
		t.Errorf("%d lab rows, want 2", n)
	}
}
