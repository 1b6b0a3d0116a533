package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/report"
)

// The recorded summaries are the committed reference runs of lab:force and
// lab:finalizer on termlab's cluster (v1.37.2).
func recorded(t *testing.T) []report.Summary {
	t.Helper()
	var out []report.Summary
	for _, f := range []string{"force-v1.37.2.json", "finalizer-v1.37.2.json"} {
		s, err := readSummary(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// edited returns a deep copy of the summaries with fn applied to each claim.
func edited(t *testing.T, sums []report.Summary, fn func(c *claims.Claim)) []report.Summary {
	t.Helper()
	b, err := json.Marshal(sums)
	if err != nil {
		t.Fatal(err)
	}
	var out []report.Summary
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		for j := range out[i].Claims {
			fn(&out[i].Claims[j])
		}
	}
	return out
}

func row(t *testing.T, tb Table, id string) Row {
	t.Helper()
	for _, r := range tb.Rows {
		if r.Claim == id {
			return r
		}
	}
	t.Fatalf("no row %s in %v", id, tb.Rows)
	return Row{}
}

const terminal = "finalizer.kubelet.delete.object_stays"

func TestTableOfTwoReleasesThatAgree(t *testing.T) {
	sums := recorded(t)
	tb := BuildTable([]VersionRun{
		{Column: Column{Version: "v1.37.2"}, Summaries: sums},
		{Column: Column{Version: "v1.36.3"}, Summaries: sums},
	}, Expectations)
	if len(tb.Columns) != 2 || len(tb.Rows) != 12 || strings.Join(tb.Labs, ",") != "force,finalizer" {
		t.Fatalf("columns %d, rows %d, labs %v", len(tb.Columns), len(tb.Rows), tb.Labs)
	}
	if len(tb.Flags) != 0 {
		t.Errorf("flags: %v", tb.Flags)
	}
	r := row(t, tb, terminal)
	if r.Expected == "" || r.Changed {
		t.Errorf("terminal-phase row: %+v", r)
	}
	for _, c := range r.Cells {
		if c.Verdict != "pass" || c.Value != "phase=Succeeded; deleted_before_release=false" || c.Flag != "" {
			t.Errorf("cell %+v", c)
		}
	}
	if c := row(t, tb, "force.sigkill_after_minimum_grace").Cells[0]; c.Value != "how=killed after SIGTERM: exit code 137 (SIGKILL); stopped_after_sigterm_seconds=2.02 s" {
		t.Errorf("force cell %q", c.Value)
	}
	md := tb.Markdown()
	for _, want := range []string{"| claim | v1.37.2 | v1.36.3 |", "**No flags**", "`" + terminal + "` ⓥ", "≥ v1.27.0"} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
}

func TestReleaseOutsideTheExpectationIsFlagged(t *testing.T) {
	// The same values at a release before 1.27 contradict the declared
	// expectation (the kubelet did not set a terminal phase then).
	sums := recorded(t)
	tb := BuildTable([]VersionRun{
		{Column: Column{Version: "v1.37.2"}, Summaries: sums},
		{Column: Column{Version: "v1.26.5"}, Summaries: sums},
	}, Expectations)
	r := row(t, tb, terminal)
	if r.Cells[0].Flag != "" || !strings.Contains(r.Cells[1].Flag, "phase = Succeeded, expected outside ≥ v1.27.0: Running") {
		t.Errorf("cells %+v", r.Cells)
	}
	if len(tb.Flags) != 2 { // the ordinary and the force delete of the held pod
		t.Errorf("flags %v", tb.Flags)
	}
}

func TestMissingBehaviourInsideTheRangeIsFlagged(t *testing.T) {
	sums := recorded(t)
	running := edited(t, sums, func(c *claims.Claim) {
		if c.ID == terminal {
			c.Observed["phase"] = "Running"
		}
	})
	tb := BuildTable([]VersionRun{
		{Column: Column{Version: "v1.37.2"}, Summaries: sums},
		{Column: Column{Version: "v1.36.3"}, Summaries: running},
	}, Expectations)
	r := row(t, tb, terminal)
	if !r.Changed || r.Cells[0].Flag != "" || !strings.Contains(r.Cells[1].Flag, "phase = Running, expected from v1.27.0: Succeeded or Failed") {
		t.Errorf("row %+v", r)
	}
	if len(tb.Flags) != 1 || !strings.Contains(tb.Flags[0], terminal+" at v1.36.3") {
		t.Errorf("flags %v", tb.Flags)
	}
}

func TestVerdictChangeWithoutExpectationIsFlagged(t *testing.T) {
	sums := recorded(t)
	failed := edited(t, sums, func(c *claims.Claim) {
		if c.ID == "force.container_outlives_object" {
			c.Verdict, c.Reason = claims.Fail, "the container was never seen running after the object was gone"
		}
	})
	tb := BuildTable([]VersionRun{
		{Column: Column{Version: "v1.37.2"}, Summaries: sums},
		{Column: Column{Version: "v1.36.3"}, Summaries: failed},
	}, Expectations)
	r := row(t, tb, "force.container_outlives_object")
	if !r.Changed || r.Cells[1].Verdict != "fail" || r.Cells[1].Reason == "" {
		t.Errorf("row %+v", r)
	}
	if len(tb.Flags) != 1 || !strings.Contains(tb.Flags[0], "v1.37.2 pass, v1.36.3 fail between releases, and the claim declares no version expectation") {
		t.Errorf("flags %v", tb.Flags)
	}
	if md := tb.Markdown(); !strings.Contains(md, "**FAIL**: container_state=CONTAINER_RUNNING") || !strings.Contains(md, "Each lab ran once per release") {
		t.Errorf("matrix.md:\n%s", md)
	}
}

func TestReleaseThatCouldNotRunShowsNotRun(t *testing.T) {
	sums := recorded(t)
	tb := BuildTable([]VersionRun{
		{Column: Column{Version: "v1.37.2"}, Summaries: sums},
		{Column: Column{Version: "v1.36.3", Error: "images for v1.36.3: go build failed"}},
	}, Expectations)
	for _, r := range tb.Rows {
		if r.Cells[1].Verdict != NotRun || r.Changed {
			t.Errorf("%s: %+v", r.Claim, r.Cells[1])
		}
	}
	if len(tb.Flags) != 0 {
		t.Errorf("flags %v", tb.Flags)
	}
	if md := tb.Markdown(); !strings.Contains(md, "**v1.36.3 could not be measured**: images for v1.36.3: go build failed") {
		t.Errorf("matrix.md:\n%s", md)
	}
}

func TestNodeGraceExpectation(t *testing.T) {
	c := claims.Claim{ID: "orphan.node_not_ready", Verdict: claims.Pass, Observed: map[string]any{"not_ready_after_seconds": 36.0}}
	if f := nodeGrace.Judge("v1.37.2", c); !strings.Contains(f, "39.6–65 s") {
		t.Errorf("36 s at 1.37: %q", f)
	}
	if f := nodeGrace.Judge("v1.31.4", c); f != "" {
		t.Errorf("36 s at 1.31: %q", f)
	}
	c.Observed["not_ready_after_seconds"] = 48.5
	if f := nodeGrace.Judge("v1.37.2", c); f != "" {
		t.Errorf("48.5 s at 1.37: %q", f)
	}
	delete(c.Observed, "not_ready_after_seconds")
	if f := nodeGrace.Judge("v1.37.2", c); !strings.Contains(f, "not observed") {
		t.Errorf("missing value: %q", f)
	}
}

func TestVersions(t *testing.T) {
	got, err := ParseVersions(" v1.37.2, 1.36.3 ,")
	if err != nil || strings.Join(got, ",") != "v1.37.2,v1.36.3" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "v1.36", "v1.x", "v1.36.3.x", "v1.36.3,v1.36.3", "v1.36.x,1.36.x", "latest"} {
		if _, err := ParseVersions(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if n := ClusterName("v1.36.3"); n != "termlab-v1-36-3" || n == cluster.DefaultName {
		t.Errorf("cluster name %q", n)
	}
	e := Expectation{Since: "v1.27", Until: "v1.30"}
	for v, want := range map[string]bool{"v1.26.9": false, "v1.27.0": true, "v1.29.15": true, "v1.30.0": false} {
		if got, err := e.Applies(v); err != nil || got != want {
			t.Errorf("%s: %v %v", v, got, err)
		}
	}
}

func TestResolveVersions(t *testing.T) {
	// What the module proxy listed for k8s.io/kubernetes (December 2026).
	served := []string{"v1.34.0", "v1.34.2", "v1.34.3", "v1.34.4", "v1.35.4", "v1.36.1", "v1.36.3", "v1.37.2", "v1.38.0-beta.0"}
	req, err := ParseVersions("v1.37.2,1.36.x,v1.34.x")
	if err != nil || !Wildcards(req) {
		t.Fatalf("%v %v", req, err)
	}
	got, err := ResolveVersions(req, served)
	if err != nil || strings.Join(got, ",") != "v1.37.2,v1.36.3,v1.34.4" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"v1.38.x", "v1.33.x", "v1.36.3,v1.36.x"} {
		req, err := ParseVersions(bad)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ResolveVersions(req, served); err == nil {
			t.Errorf("%s: %v, no error", bad, got)
		}
	}
}

func TestSelectLabs(t *testing.T) {
	all := []lab.Definition{{Name: "finalizer"}, {Name: "force"}, {Name: "orphan"}}
	got, err := SelectLabs(all, "")
	if err != nil || len(got) != 2 || got[0].Name != "force" || got[1].Name != "finalizer" {
		t.Fatalf("default: %v %v", got, err)
	}
	got, err = SelectLabs(all, "lab:orphan, force,orphan")
	if err != nil || len(got) != 2 || got[0].Name != "orphan" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := SelectLabs(all, "nosuch"); err == nil {
		t.Error("unknown lab: no error")
	}
}

// fakeProvider hands out clusters by release; Down is recorded.
type fakeProvider struct {
	envs    map[string]*cluster.Env
	downErr map[string]error
	up      []string
	down    []string
	kwoks   []bool
}

func (p *fakeProvider) Up(_ context.Context, v string, needKwok bool, col *Column) (*cluster.Env, error) {
	p.up = append(p.up, v)
	p.kwoks = append(p.kwoks, needKwok)
	env, ok := p.envs[v]
	if !ok {
		return nil, errors.New("no image for " + v)
	}
	col.Server = "fake " + v
	return env, nil
}

func (p *fakeProvider) Down(_ context.Context, v string) error {
	p.down = append(p.down, v)
	return p.downErr[v]
}

func TestRunPlumbing(t *testing.T) {
	// One release whose cluster cannot come up, one whose "cluster" has no
	// API client (lab.Execute refuses it at once): each is deleted after,
	// nothing else is touched, and the table and the error say what happened.
	p := &fakeProvider{envs: map[string]*cluster.Env{"v1.37.2": {Name: "fake"}}, downErr: map[string]error{"v1.36.3": errors.New("kind: boom")}}
	dir := t.TempDir()
	tb, out, err := Run(context.Background(), Options{
		Versions: []string{"v1.37.2", "v1.36.3"},
		Labs:     []lab.Definition{{Name: "force"}, {Name: "finalizer", Uses: lab.Uses{FakeNode: true}}},
		Root:     dir, OutDir: filepath.Join(dir, "m"), Provider: p, Log: progress.New(testWriter{t}),
	})
	if err == nil || !strings.Contains(err.Error(), "v1.36.3: no image for v1.36.3") || !strings.Contains(err.Error(), "v1.37.2: lab:force:") ||
		!strings.Contains(err.Error(), "v1.36.3: deleting cluster termlab-v1-36-3: kind: boom") {
		t.Errorf("error %v", err)
	}
	if strings.Join(p.up, ",") != "v1.37.2,v1.36.3" || strings.Join(p.down, ",") != "v1.37.2,v1.36.3" || !p.kwoks[0] {
		t.Errorf("up %v down %v kwok %v", p.up, p.down, p.kwoks)
	}
	if len(tb.Columns) != 2 || tb.Columns[0].Server != "fake v1.37.2" || len(tb.Columns[0].Labs) != 2 || tb.Columns[1].Error == "" ||
		tb.Columns[0].DeleteSeconds <= 0 || tb.Columns[1].DeleteSeconds <= 0 {
		t.Errorf("columns %+v", tb.Columns)
	}
	for _, f := range []string{MarkdownFile, JSONFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// A watch_order cell shows what decides it: how many objects broke the
// order, and the re-listed repeats it allowed.
func TestWatchOrderCellShowsItsCounts(t *testing.T) {
	c := claims.Claim{ID: claims.WatchOrderID("force"), Verdict: claims.Pass, Observed: map[string]any{
		claims.WatchOrderStreams: []string{"events.jsonl: 4 events of 1 objects in 1 session(s)"},
		claims.WatchOrderBroken:  float64(0), claims.WatchOrderRepeats: float64(0),
	}}
	if got, want := Deciding(c), "objects_out_of_order=0; relisted_repeats=0"; got != want {
		t.Errorf("Deciding = %q, want %q", got, want)
	}
}
