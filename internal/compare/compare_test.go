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

// forceRun is a lab:force run: stoppedAfterSigterm is a timing its claim
// vouches for (±0.5 s), stoppedAfterDeleted one it only reports.
func forceRun(dir string, base time.Time, uid string, stoppedAfterSigterm, stoppedAfterDeleted float64, exitCode int) *Run {
	c := []claims.Claim{
		{ID: "force.api_object_gone", Statement: "DELETED within 1 s", Verdict: claims.Pass,
			Observed:   map[string]any{"deleted_after_seconds": 0.012, "deleted_at": base.Add(2 * time.Second).Format(time.RFC3339Nano), "deleted_resourceVersion": "1274", "api_object_exists": false},
			Tolerances: map[string]float64{"deleted_after_seconds": 1}},
		{ID: "force.container_stops", Statement: "stopped 2 s ± 0.5 s after SIGTERM", Verdict: claims.Pass,
			Observed:   map[string]any{"stopped_after_sigterm_seconds": stoppedAfterSigterm, "stopped_after_deleted_seconds": stoppedAfterDeleted, "exit_code": float64(exitCode), "container_id": strings.Repeat("ab", 32)},
			Tolerances: map[string]float64{"stopped_after_sigterm_seconds": 0.5}},
	}
	return &Run{
		Dir:     dir,
		Summary: &report.Summary{Lab: "force", RunID: filepath.Base(dir), Verdict: claims.Overall(c), Claims: c, Versions: map[string]string{"kubernetes_server": "v1.37.2", "docker": "20.10.24"}},
		Record:  &evidence.Record{Lab: "force", PodEvents: forceEvents(base, uid)},
	}
}

func TestRunsMatch(t *testing.T) {
	ref := forceRun("reference/force", time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC), "uid-a", 2.013, 2.0, 137)
	// Another day, other UIDs, container IDs and resourceVersions, a vouched
	// timing within its claim's tolerance, an unvouched one far off, another
	// exit code and Docker version: still a match.
	run := forceRun("force/latest", time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC), "uid-b", 2.4, 9.5, 0)
	run.Summary.Versions["docker"] = "27.0.1"
	r := Runs(run, ref)
	if !r.Matches() {
		t.Fatalf("want a match, got differences %v", r.Differences)
	}
	if r.Claims != 2 || r.Pods != 1 || r.Timings != 2 || r.Reported != 1 {
		t.Errorf("compared %d claims, %d pods, %d vouched and %d reported timings; want 2, 1, 2, 1", r.Claims, r.Pods, r.Timings, r.Reported)
	}
	notes := itemsText(r.Notes)
	for _, want := range []string{
		"stopped_after_sigterm_seconds: 2.400 s in the run, 2.013 s in the reference (within the claim's ±0.5 s)",
		"stopped_after_deleted_seconds: 9.500 s in the run, 2.000 s in the reference (reported only: no claim vouches for it)",
		"exit_code: 0 in the run, 137 in the reference", "versions docker",
	} {
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

// The case seen on a busy machine: lab:kwok's reference pod stopped as the
// reference's did, but the kubelet's own final delete came 3.1 s after the
// stop instead of 0.7 s. No claim bounds that gap: a note, not a failure.
func TestKwokBusyMachineMatches(t *testing.T) {
	kwokRun := func(dir string, stoppedAfterDeleted float64) *Run {
		c := []claims.Claim{{
			ID: "kwok.kubelet.plain.reference_stopped", Statement: "SIGTERM within 1 s, stopped within 0.5 s of it, exit 0", Verdict: claims.Pass,
			Observed: map[string]any{"sigterm_after_seconds": 0.087, "stopped_after_sigterm_seconds": 0.002, "stopped_after_seconds": 0.09,
				"stopped_after_deleted_seconds": stoppedAfterDeleted, "exit_code": float64(0)},
			Tolerances: map[string]float64{"sigterm_after_seconds": 1, "stopped_after_sigterm_seconds": 0.5, "stopped_after_seconds": 1.5},
		}}
		return &Run{Dir: dir, Summary: &report.Summary{Lab: "kwok", Verdict: claims.Pass, Claims: c}, Record: &evidence.Record{}}
	}
	r := Runs(kwokRun("kwok/latest", -3.105), kwokRun("reference/kwok", -0.696))
	if !r.Matches() {
		t.Fatalf("want a match, got differences %v", r.Differences)
	}
	want := "timing kwok.kubelet.plain.reference_stopped: stopped_after_deleted_seconds: -3.105 s in the run, -0.696 s in the reference (reported only: no claim vouches for it)"
	if notes := itemsText(r.Notes); !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
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
			run.Summary.Claims[0].Statement = "DELETED within 5 s"
		}, []string{`the statement differs: run "DELETED within 5 s", reference "DELETED within 1 s"`}},
		{"vouched timing beyond its claim's tolerance", func(run *Run) {
			run.Summary.Claims[1].Observed["stopped_after_sigterm_seconds"] = 2.6
		}, []string{"timing force.container_stops: stopped_after_sigterm_seconds: 2.600 s in the run, 2.013 s in the reference: 0.587 s apart, beyond the ±0.5 s the claim vouches for"}},
		{"vouched timing not observed", func(run *Run) {
			delete(run.Summary.Claims[1].Observed, "stopped_after_sigterm_seconds")
		}, []string{"timing force.container_stops: stopped_after_sigterm_seconds: not observed in the run (reference: 2.013), and the claim vouches for it"}},
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
			ref := forceRun("reference/force", base, "uid-a", 2.013, 2.0, 137)
			run := forceRun("force/latest", base.Add(time.Hour), "uid-b", 2.013, 2.0, 137)
			tc.change(run)
			r := Runs(run, ref)
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

// A vouched timing differs from the reference's by at most its tolerance,
// the edge included; the run's claim decides the tolerance, else the
// reference's (a claim that no longer vouches, or not yet).
func TestVouchedTolerance(t *testing.T) {
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		got            float64
		runTol, refTol map[string]float64
		differs        bool
	}{
		{"at the edge", 2.513, nil, nil, false},
		{"just beyond", 2.514, nil, nil, true},
		{"below, beyond", 1.5, nil, nil, true},
		{"the run's claim vouches for more", 2.9, map[string]float64{"stopped_after_sigterm_seconds": 1}, nil, false},
		{"only the reference's claim vouches", 2.9, map[string]float64{}, map[string]float64{"stopped_after_sigterm_seconds": 0.5}, true},
		{"no claim vouches", 9, map[string]float64{}, map[string]float64{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := forceRun("reference/force", base, "uid-a", 2.013, 2.0, 137)
			run := forceRun("force/latest", base.Add(time.Hour), "uid-b", tc.got, 2.0, 137)
			if tc.runTol != nil {
				run.Summary.Claims[1].Tolerances = tc.runTol
			}
			if tc.refTol != nil {
				ref.Summary.Claims[1].Tolerances = tc.refTol
			}
			if r := Runs(run, ref); r.Matches() == tc.differs {
				t.Errorf("%.3f s against 2.013 s: matches = %v, want %v (differences %v)", tc.got, r.Matches(), !tc.differs, r.Differences)
			}
		})
	}
}

// Folders on disk: Load, Resolve and DefaultPairs as results:compare uses them.
func TestFolders(t *testing.T) {
	results := t.TempDir()
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	writeRun(t, filepath.Join(results, "reference", "force"), forceRun("", base, "uid-a", 2.013, 2.0, 137))
	writeRun(t, filepath.Join(results, "force", "20261203-093000-abcd"), forceRun("", base.Add(24*time.Hour), "uid-b", 2.1, 2.4, 137))
	if err := os.Symlink("20261203-093000-abcd", filepath.Join(results, "force", "latest")); err != nil {
		t.Fatal(err)
	}
	// A lab with a reference and no run yet.
	writeRun(t, filepath.Join(results, "reference", "orphan"), forceRun("", base, "uid-c", 2.013, 2.0, 137))

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
	rs, err := Compare(&out, ps)
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
