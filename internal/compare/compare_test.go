package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// The recorded shape of a force delete on a real worker: Pending, Ready,
// then the deletionTimestamp with grace 0, then DELETED.
func forceEvents(base time.Time, uid string) []evidence.PodEvent {
	ts := base.Add(10 * time.Second)
	zero := int64(0)
	n := 0
	ev := func(d time.Duration, typ string, s evidence.PodState) evidence.PodEvent {
		n++
		s.Name, s.UID, s.ResourceVersion = "slow-exit", uid, fmt.Sprint(1000*len(uid)+n)
		return evidence.PodEvent{ObservedAt: base.Add(d), Type: typ, PodState: s}
	}
	running := evidence.PodState{Phase: "Running", Ready: "True", Containers: []evidence.ContainerState{{Name: "heartbeat", State: "running", ContainerID: uid + "c"}}}
	deleting := running
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &ts, &zero
	return []evidence.PodEvent{
		ev(0, "ADDED", evidence.PodState{Phase: "Pending"}),
		ev(time.Second, "MODIFIED", running),
		ev(2*time.Second, "MODIFIED", deleting),
		ev(2*time.Second+10*time.Millisecond, "DELETED", deleting),
	}
}

func forceRun(dir string, base time.Time, uid string, stoppedAfter float64, exitCode int) *Run {
	c := []claims.Claim{
		{ID: "force.api_object_gone", Statement: "DELETED within 2s", Verdict: claims.Pass,
			Observed: map[string]any{"deleted_after_seconds": 0.012, "deleted_at": base.Add(2 * time.Second).Format(time.RFC3339Nano), "deleted_resourceVersion": "1274", "api_object_exists": false}},
		{ID: "force.container_stops", Statement: "the container exits within 45s", Verdict: claims.Pass,
			Observed: map[string]any{"stopped_after_deleted_seconds": stoppedAfter, "exit_code": float64(exitCode), "container_id": strings.Repeat("ab", 32)}},
	}
	return &Run{
		Dir:     dir,
		Summary: &report.Summary{Lab: "force", RunID: filepath.Base(dir), Verdict: claims.Overall(c), Claims: c, Versions: map[string]string{"kubernetes_server": "v1.37.2", "docker": "20.10.24"}},
		Record:  &evidence.Record{Lab: "force", PodEvents: forceEvents(base, uid)},
	}
}

func TestRunsMatch(t *testing.T) {
	ref := forceRun("reference/force", time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC), "uid-a", 8.0, 0)
	// Another day, other UIDs, container IDs and resourceVersions, a timing
	// within tolerance, another exit code and Docker version: still a match.
	run := forceRun("force/latest", time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC), "uid-b", 9.5, 137)
	run.Summary.Versions["docker"] = "27.0.1"
	r := Runs(run, ref, DefaultTolerance)
	if !r.Matches() {
		t.Fatalf("want a match, got differences %v", r.Differences)
	}
	if r.Claims != 2 || r.Pods != 1 || r.Timings != 2 {
		t.Errorf("compared %d claims, %d pods, %d timings; want 2, 1, 2", r.Claims, r.Pods, r.Timings)
	}
	notes := itemsText(r.Notes)
	for _, want := range []string{"stopped_after_deleted_seconds: 9.500 s in the run, 8.000 s in the reference (within tolerance)", "exit_code: 137 in the run, 0 in the reference", "versions docker"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for _, never := range []string{"deleted_at", "container_id", "resourceVersion"} {
		if strings.Contains(notes, never) {
			t.Errorf("notes mention the run-specific %s:\n%s", never, notes)
		}
	}
	var out bytes.Buffer
	r.Write(&out)
	if !strings.Contains(out.String(), "matches the reference") {
		t.Errorf("output does not say it matches:\n%s", out.String())
	}
}

func TestRunsDiffer(t *testing.T) {
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		change func(run *Run)
		want   []string // each must be in the differences
	}{
		{"failed claim", func(run *Run) {
			run.Summary.Claims[1].Verdict, run.Summary.Claims[1].Reason = claims.Fail, "no crictl observation"
			run.Summary.Verdict = claims.Fail
		}, []string{"verdict: the run's verdict is fail", "claim force.container_stops: verdict fail in the run (no crictl observation), pass in the reference"}},
		{"missing and extra claim", func(run *Run) {
			run.Summary.Claims[1].ID = "force.container_stopped"
		}, []string{"claim force.container_stops: missing from the run", "claim force.container_stopped: only in the run"}},
		{"changed statement", func(run *Run) {
			run.Summary.Claims[0].Statement = "DELETED within 5s"
		}, []string{`the statement differs: run "DELETED within 5s", reference "DELETED within 2s"`}},
		{"timing beyond tolerance", func(run *Run) {
			run.Summary.Claims[1].Observed["stopped_after_deleted_seconds"] = 30.0
		}, []string{"timing force.container_stops: stopped_after_deleted_seconds: 30.000 s in the run, 8.000 s in the reference: beyond"}},
		{"other transition sequence", func(run *Run) {
			// kwok ≤ v0.7's fast stage: the finalizers stripped before DELETED.
			e := run.Record.PodEvents
			extra := e[2]
			extra.Finalizers = []string{"lab.example.com/cleanup"}
			e[2].Finalizers = []string{"lab.example.com/cleanup"}
			run.Record.PodEvents = []evidence.PodEvent{e[0], e[1], e[2], extra, e[3]}
			run.Record.PodEvents[3].Finalizers = nil
		}, []string{"transitions slow-exit: first difference at transition 3: run finalizers=[lab.example.com/cleanup], reference object=DELETED"}},
		{"pod missing", func(run *Run) {
			run.Record.PodEvents = nil
		}, []string{"transitions slow-exit: no watch events for this pod in the run"}},
		{"other lab", func(run *Run) {
			run.Summary.Lab = "orphan"
		}, []string{`lab: the run is of lab "orphan", the reference of lab "force"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := forceRun("reference/force", base, "uid-a", 8.0, 0)
			run := forceRun("force/latest", base.Add(time.Hour), "uid-b", 8.0, 0)
			tc.change(run)
			r := Runs(run, ref, DefaultTolerance)
			if r.Matches() {
				t.Fatalf("want differences, got a match (notes %v)", r.Notes)
			}
			got := itemsText(r.Differences)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("differences lack %q:\n%s", w, got)
				}
			}
			var out bytes.Buffer
			r.Write(&out)
			if !strings.Contains(out.String(), "DIFFERS from the reference") {
				t.Errorf("output does not say it differs:\n%s", out.String())
			}
		})
	}
}

func TestToleranceBounds(t *testing.T) {
	tol := Tolerance{Absolute: 2 * time.Second, Relative: 0.5}
	for _, tc := range []struct {
		got, want float64
		ok        bool
	}{
		{0.01, 0.04, true},   // tiny: the absolute bound
		{2.04, 0.04, true},   // exactly 2 s off
		{2.1, 0.04, false},   // beyond 2 s, and 50 % of 0.04 is less
		{65, 44, true},       // 50 % of 44 s is 22 s
		{70, 44, false},      // 26 s off
		{-5.0, -5.5, true},   // negative timings use |reference|
		{-12.0, -5.5, false}, // 6.5 s off, 50 % of 5.5 is 2.75
	} {
		if got := tol.allows(tc.got, tc.want); got != tc.ok {
			t.Errorf("allows(%v, %v) = %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}

// Folders on disk: Load, Resolve and DefaultPairs as results:compare uses them.
func TestFolders(t *testing.T) {
	results := t.TempDir()
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	writeRun(t, filepath.Join(results, "reference", "force"), forceRun("", base, "uid-a", 8, 0))
	writeRun(t, filepath.Join(results, "force", "20261203-093000-abcd"), forceRun("", base.Add(24*time.Hour), "uid-b", 8.4, 0))
	if err := os.Symlink("20261203-093000-abcd", filepath.Join(results, "force", "latest")); err != nil {
		t.Fatal(err)
	}
	// A lab with a reference and no run yet.
	writeRun(t, filepath.Join(results, "reference", "orphan"), forceRun("", base, "uid-c", 8, 0))

	pairs, missing, err := DefaultPairs(results)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 1 || pairs[0].Run != filepath.Join(results, "force", "latest") || pairs[0].Reference != filepath.Join(results, "reference", "force") {
		t.Errorf("pairs = %+v", pairs)
	}
	if len(missing) != 1 || missing[0] != "orphan" {
		t.Errorf("missing = %v, want [orphan]", missing)
	}
	for _, arg := range []string{"force", "force/latest", "force/20261203-093000-abcd", filepath.Join(results, "force", "latest")} {
		if _, err := Resolve(results, arg); err != nil {
			t.Errorf("Resolve(%q): %v", arg, err)
		}
	}
	if _, err := Resolve(results, "nope"); err == nil {
		t.Error("Resolve(nope) found something")
	}
	ps, _, err := Pairs(results, "force", "")
	if err != nil || len(ps) != 1 || ps[0].Reference != filepath.Join(results, "reference", "force") {
		t.Fatalf("Pairs(force) = %+v, %v", ps, err)
	}
	var out bytes.Buffer
	rs, err := Compare(&out, ps, DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || !rs[0].Matches() {
		t.Fatalf("loaded runs do not match:\n%s", out.String())
	}
	if s := Summary(rs); s != "all 1 runs match the reference" {
		t.Errorf("Summary = %q", s)
	}
}

func writeRun(t *testing.T, dir string, run *Run) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(run.Summary)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, report.SummaryFile), b, 0o644))
	b, err = json.Marshal(run.Record)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, evidence.RecordFile), b, 0o644))
	f, err := os.Create(filepath.Join(dir, evidence.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, e := range run.Record.PodEvents {
		b, _ := json.Marshal(e)
		w.Write(append(b, '\n'))
	}
	must(t, w.Flush())
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func itemsText(items []Item) string {
	var b strings.Builder
	for _, i := range items {
		b.WriteString(i.String() + "\n")
	}
	return b.String()
}
