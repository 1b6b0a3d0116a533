package soak

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/report"
)

var update = flag.Bool("update", false, "rewrite testdata/soak.golden.md")

func TestPercentileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		name     string
		values   []float64
		p50, p95 float64
	}{
		{"one value", []float64{7}, 7, 7},
		{"two values", []float64{1, 2}, 1, 2},
		{"four values", []float64{4, 1, 3, 2}, 2, 4},
		{"five values", []float64{5, 4, 3, 2, 1}, 3, 5},
		{"twelve values", seq(1, 12), 6, 12}, // p95: rank ceil(11.4) = 12, not 11
		{"twenty values", seq(1, 20), 10, 19},
		{"twenty-one values", seq(1, 21), 11, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Distribution(tc.values)
			if d.P50 != tc.p50 || d.P95 != tc.p95 {
				t.Errorf("p50 %g p95 %g, want %g %g", d.P50, d.P95, tc.p50, tc.p95)
			}
			if d.N != len(tc.values) || d.Min != slices.Min(tc.values) || d.Max != slices.Max(tc.values) {
				t.Errorf("n %d min %g max %g, want %d %g %g", d.N, d.Min, d.Max, len(tc.values), slices.Min(tc.values), slices.Max(tc.values))
			}
		})
	}
	if d := Distribution(nil); d.N != 0 {
		t.Errorf("no values: %+v", d)
	}
}

func seq(from, to int) []float64 {
	var v []float64
	for i := to; i >= from; i-- { // reversed: Distribution sorts
		v = append(v, float64(i))
	}
	return v
}

// summary makes a run of lab:force at minute i with the claims given.
func summary(lab string, i int, cs ...claims.Claim) *report.Summary {
	start := time.Date(2026, 12, 4, 6, i, 0, 0, time.UTC)
	return &report.Summary{
		Lab: lab, RunID: start.Format("20060102-150405") + "-000" + string(rune('a'+i)),
		Verdict: claims.Overall(cs), StartedAt: start, FinishedAt: start.Add(time.Duration(3+i) * time.Second),
		Claims: cs, Dir: filepath.Join("/results", lab, start.Format("20060102-150405")),
	}
}

func claim(id string, v claims.Verdict, observed map[string]any, tol map[string]float64) claims.Claim {
	c := claims.Claim{ID: id, Statement: "statement of " + id, Verdict: v, Observed: observed, Tolerances: tol}
	if v == claims.Fail {
		c.Reason = "why " + id + " failed"
	}
	return c
}

func forceRuns() []Run {
	deleted := func(v float64) map[string]any {
		return map[string]any{"deleted_after_seconds": v, "sigterm_after_seconds": v / 2, "deleted_at": "2026-12-04T06:00:01Z", "grace_seconds": "0"}
	}
	tol := map[string]float64{"deleted_after_seconds": 1}
	return []Run{
		{Lab: "force", Summary: summary("force", 0, claim("force.gone", claims.Pass, deleted(0.2), tol), claim("force.outlives", claims.Pass, nil, nil))},
		{Lab: "force", Summary: summary("force", 1, claim("force.gone", claims.Pass, deleted(0.4), tol), claim("force.outlives", claims.Fail, nil, nil))},
		{Lab: "force", Summary: summary("force", 2, claim("force.gone", claims.Pass, deleted(1.9), tol), claim("force.outlives", claims.Pass, nil, nil))},
	}
}

// A claim whose verdicts differ comes first, naming the run that differs;
// the others keep the lab's order.
func TestBuildListsDifferingVerdictsFirst(t *testing.T) {
	runs := forceRuns()
	r := Build(runs)
	if len(r.Labs) != 1 {
		t.Fatalf("labs: %+v", r.Labs)
	}
	l := r.Labs[0]
	if l.Runs != 3 || l.Passed != 2 || l.Verdicts["fail"] != 1 {
		t.Errorf("runs %d passed %d verdicts %v, want 3, 2, one fail", l.Runs, l.Passed, l.Verdicts)
	}
	var ids []string
	for _, c := range l.Claims {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{"force.outlives", "force.gone"}) {
		t.Fatalf("claim order %v: the differing claim must come first", ids)
	}
	c := l.Claims[0]
	if !c.Differs || c.Pass != 2 || c.Fail != 1 {
		t.Errorf("force.outlives: %+v", c)
	}
	wantRun := runs[1].Summary.RunID
	if len(c.Odd) != 1 || c.Odd[0].RunID != wantRun || c.Odd[0].Verdict != claims.Fail || c.Odd[0].Reason == "" {
		t.Errorf("differing runs %+v, want %s failed with its reason", c.Odd, wantRun)
	}
	if l.Claims[1].Differs {
		t.Errorf("force.gone passed in every run but is marked as differing")
	}
	if got := l.Answer(); !strings.Contains(got, "lab:force 2/3 runs pass") || !strings.Contains(got, "force.outlives") || !strings.Contains(got, wantRun) {
		t.Errorf("answer %q: want 2/3, the claim and the run", got)
	}
	if !slices.Equal(l.RunList[1].FailedClaims, []string{"force.outlives"}) {
		t.Errorf("run 2's failed claims: %v", l.RunList[1].FailedClaims)
	}
}

// Vouched timings (the claim's tolerances) first, then the other *_seconds
// values; values that are not numbers, and keys not in seconds, are left out.
func TestBuildTimings(t *testing.T) {
	l := Build(forceRuns()).Labs[0]
	gone := l.Claims[1]
	if len(gone.Timings) != 2 {
		t.Fatalf("timings %+v, want deleted_after (vouched) and sigterm_after", gone.Timings)
	}
	v, o := gone.Timings[0], gone.Timings[1]
	if v.Key != "deleted_after_seconds" || !v.Vouched || v.Tolerance != 1 {
		t.Errorf("first timing %+v, want deleted_after_seconds vouched ±1", v)
	}
	if v.Dist != (Dist{N: 3, Min: 0.2, P50: 0.4, P95: 1.9, Max: 1.9}) {
		t.Errorf("deleted_after_seconds %+v", v.Dist)
	}
	if !v.WiderThanTolerance {
		t.Errorf("0.2 to 1.9 s is wider than ±1 s")
	}
	if o.Key != "sigterm_after_seconds" || o.Vouched || o.N != 3 {
		t.Errorf("second timing %+v, want sigterm_after_seconds not vouched, n 3", o)
	}
	if l.Claims[0].Timings != nil {
		t.Errorf("a claim with no timings: %+v", l.Claims[0].Timings)
	}
	if l.RunSeconds == nil || *l.RunSeconds != (Dist{N: 3, Min: 3, P50: 4, P95: 5, Max: 5}) {
		t.Errorf("run seconds %+v", l.RunSeconds)
	}
}

// A run that left no summary and one whose claims all passed but which
// failed on a run error are counted, and said in the answer.
func TestBuildRunsWithoutVerdicts(t *testing.T) {
	ok := claim("finalizer.stays", claims.Pass, map[string]any{"stopped_after_seconds": 2.0}, map[string]float64{"stopped_after_seconds": 1})
	errored := summary("finalizer", 1, ok)
	errored.Verdict, errored.Errors = claims.Fail, []string{"cleaning up: timeout"}
	r := Build([]Run{
		{Lab: "finalizer", Summary: summary("finalizer", 0, ok)},
		{Lab: "finalizer", Summary: errored},
		{Lab: "finalizer", Err: "waiting for another termlab run: deadline exceeded"},
	})
	l := r.Labs[0]
	if l.Runs != 3 || l.Passed != 1 || l.Verdicts[NoSummary] != 1 {
		t.Fatalf("%+v", l)
	}
	got := l.Answer()
	for _, want := range []string{"1/3 runs pass", "1 failed with no claim failing", "1 left no summary"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer %q lacks %q", got, want)
		}
	}
	if r.AllPass() {
		t.Error("AllPass with one run in three passing")
	}
}

// soak.md opens with each lab's answer, then a table per lab; the golden
// file shows the whole page (go test ./internal/soak/ -update rewrites it).
func TestMarkdown(t *testing.T) {
	good := claim("finalizer.stays", claims.Pass, map[string]any{"stopped_after_seconds": 2.0}, map[string]float64{"stopped_after_seconds": 1})
	runs := append(forceRuns(),
		Run{Lab: "finalizer", Summary: summary("finalizer", 3, good)},
		Run{Lab: "finalizer", Summary: summary("finalizer", 4, good)})
	r := Build(runs)
	r.Source = "Run by `go tool mage soak -labs=force,finalizer -runs=3`"
	r.Dir = "/results/soak/20261204T060000Z"
	md := r.Markdown()
	lines := strings.Split(md, "\n")
	if lines[2] != "- **lab:force 2/3 runs pass: verdicts differ: `force.outlives` (fail in 1 of 3: 20261204-060100-000b)**" ||
		lines[3] != "- **lab:finalizer 2/2 runs pass**" {
		t.Errorf("soak.md does not open with the answers:\n%s", strings.Join(lines[:5], "\n"))
	}
	if !strings.Contains(md, "| ⚠ `force.outlives` | 2 pass, **1 fail** | – |") {
		t.Errorf("no row for the differing claim:\n%s", md)
	}
	if !strings.Contains(md, "| `force.gone` | 3/3 pass | deleted after | ±1 ⚠ | 3 | 0.200 | 0.400 | 1.90 | 1.90 |") {
		t.Errorf("no distribution row for the vouched timing:\n%s", md)
	}
	if !strings.Contains(md, "[20261204-060100-000b](../../force/20261204-060100/report.md)") {
		t.Errorf("the differing run is not linked relative to the soak folder:\n%s", md)
	}
	golden := filepath.Join("testdata", "soak.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if md != string(want) {
		t.Errorf("soak.md differs from %s (run with -update after checking):\n%s", golden, md)
	}
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Format != Format || len(back.Labs) != 2 || back.Labs[0].Claims[0].Odd[0].RunID != "20261204-060100-000b" {
		t.Errorf("soak.json does not read back: %v %+v", err, back)
	}
}

// Find takes every run folder under a folder, the folder itself when it is
// one, and globs; latest (a link to a run beside it) is not counted twice,
// nor a reference copy of a run already read.
func TestFindAndRead(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, s *report.Summary) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, report.SummaryFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs := forceRuns()
	for _, r := range runs {
		write(filepath.Join(root, "force", r.Summary.RunID), r.Summary)
	}
	write(filepath.Join(root, "reference", "force"), runs[0].Summary)
	if err := os.Symlink(runs[2].Summary.RunID, filepath.Join(root, "force", "latest")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "force", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	dirs, err := Find([]string{filepath.Join(root, "force")})
	if err != nil || len(dirs) != 3 {
		t.Fatalf("Find(force) = %v, %v: want the 3 runs, latest not again", dirs, err)
	}
	dirs, err = Find([]string{filepath.Join(root, "force", "latest"), filepath.Join(root, "force", "2026*")})
	if err != nil || len(dirs) != 3 {
		t.Fatalf("Find(latest, glob) = %v, %v: want 3 folders once each", dirs, err)
	}
	if _, err := Find([]string{filepath.Join(root, "nothing")}); err == nil {
		t.Error("a pattern that names nothing is not an error")
	}
	write(filepath.Join(root, "diagnose", "20261204-060000-held"), &report.Summary{}) // a diagnose report: no lab, no run id
	write(filepath.Join(root, "diagnose", "20261204-060100-held"), &report.Summary{})
	write(filepath.Join(root, "finalizer", "20261204-060500-0000"), summary("finalizer", 5, claim("finalizer.c", claims.Pass, nil, nil)))
	dirs, err = Find([]string{root})
	if err != nil || len(dirs) != 7 {
		t.Fatalf("Find(root) = %v, %v: want 4 runs, the reference and 2 diagnose folders", dirs, err)
	}
	got, skipped := Read(dirs)
	if len(got) != 4 || len(skipped) != 3 || !strings.Contains(strings.Join(skipped, "\n"), "already counted") || !strings.Contains(skipped[0], "not a lab run") {
		t.Errorf("Read: %d runs, skipped %v: want 4, the reference copy and the diagnose folders skipped", len(got), skipped)
	}
	got, skipped = Read(dirs, "force")
	if len(got) != 3 || len(skipped) != 1 {
		t.Errorf("Read(force): %d runs, skipped %v: want 3 and the reference copy skipped", len(got), skipped)
	}
	if l := Build(got).Labs[0]; l.Runs != 3 || !l.Claims[0].Differs {
		t.Errorf("runs read back: %+v", l)
	}
}

// Loop runs every lab each round, counts a failed run and goes on, and
// stops when its context ends.
func TestLoop(t *testing.T) {
	var calls []string
	var out strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs, interrupted := Loop(ctx, LoopOptions{
		Labs: []string{"finalizer", "force"}, Runs: 3, Log: progress.New(&out),
		Exec: func(ctx context.Context, lab string) (*report.Summary, error) {
			calls = append(calls, lab)
			switch len(calls) {
			case 2:
				return nil, errors.New("waiting for the lock: deadline exceeded")
			case 3:
				s := summary(lab, 3, claim(lab+".c", claims.Fail, nil, nil))
				return s, errors.New("claims failed")
			case 5:
				cancel()
			}
			return summary(lab, len(calls), claim(lab+".c", claims.Pass, nil, nil)), nil
		},
	})
	if want := []string{"finalizer", "force", "finalizer", "force", "finalizer"}; !slices.Equal(calls, want) {
		t.Errorf("calls %v, want %v (rounds, going on after failures, stopping on cancel)", calls, want)
	}
	if len(runs) != 5 || runs[1].Summary != nil || runs[1].Err == "" || runs[2].Summary == nil {
		t.Errorf("runs %+v", runs)
	}
	if !strings.Contains(interrupted, "after 5 of 6 runs (the last one cut short)") {
		t.Errorf("interrupted %q", interrupted)
	}
	log := out.String()
	for _, want := range []string{"soak: lab:finalizer run 1/3 (", "): pass in ", "soak: lab:force run 1/3: no summary", "soak: lab:finalizer run 2/3 (", "fail in 6 s — failed: finalizer.c"} {
		if !strings.Contains(log, want) {
			t.Errorf("progress lacks %q:\n%s", want, log)
		}
	}
}

// Claims failing in the same runs are named together, the runs once; a
// claim only some runs could check is named apart; a run whose claims failed
// and which reported errors is said to have.
func TestAnswerGroupsClaimsFailingInTheSameRuns(t *testing.T) {
	pass := func(id string) claims.Claim { return claim(id, claims.Pass, nil, nil) }
	fail := func(id string) claims.Claim { return claim(id, claims.Fail, nil, nil) }
	interrupted := summary("orphan", 1, fail("orphan.a"), fail("orphan.b"), pass("orphan.c"), pass("orphan.d"))
	interrupted.Errors = []string{"running the steps: interrupted"}
	l := Build([]Run{
		{Lab: "orphan", Summary: summary("orphan", 0, pass("orphan.a"), pass("orphan.b"), pass("orphan.c"), pass("orphan.d"))},
		{Lab: "orphan", Summary: interrupted},
		{Lab: "orphan", Summary: summary("orphan", 2, pass("orphan.a"), pass("orphan.b"), fail("orphan.c"), claim("orphan.d", claims.NotChecked, nil, nil))},
	}).Labs[0]
	want := "lab:orphan 1/3 runs pass: verdicts differ: `orphan.a`, `orphan.b` (fail in 1 of 3: " + interrupted.RunID + "); `orphan.c` (fail in 1 of 3: 20261204-060200-000c); " +
		"passed wherever checked: `orphan.d` (not checked in 1 of 3: 20261204-060200-000c); " +
		"1 of the runs with failed claims ended with a run error too (interrupted, a step failed: see below)"
	if got := l.Answer(); got != want {
		t.Errorf("answer\n%s\nwant\n%s", got, want)
	}
}

// A soak ended between two runs starts no other.
func TestLoopEndedBetweenRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	runs, interrupted := Loop(ctx, LoopOptions{
		Labs: []string{"force"}, Runs: 3, Log: progress.New(io.Discard), Between: time.Hour,
		Exec: func(ctx context.Context, lab string) (*report.Summary, error) {
			calls++
			return summary(lab, calls, claim(lab+".c", claims.Pass, nil, nil)), nil
		},
		Done: func([]Run) { time.AfterFunc(10*time.Millisecond, cancel) }, // in the pause
	})
	if calls != 1 || len(runs) != 1 || interrupted != "after 1 of 3 runs: context canceled" {
		t.Errorf("%d calls, %d runs, interrupted %q: want one run, then the end", calls, len(runs), interrupted)
	}
}
