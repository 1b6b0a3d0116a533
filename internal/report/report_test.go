package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/version"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time  { return t0.Add(time.Duration(sec * float64(time.Second))) }
func tp(sec float64) *time.Time { t := at(sec); return &t }
func i32(v int32) *int32        { return &v }

const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// orphanRun is a decided lab:orphan run, written out as the recorder records it.
func orphanRun() Run {
	pod := func(sec float64, typ, rv string, st evidence.PodState) evidence.PodEvent {
		st.Name, st.ResourceVersion = "orphan-process", rv
		return evidence.PodEvent{ObservedAt: at(sec), Type: typ, PodState: st, Object: json.RawMessage(`{}`)}
	}
	running := evidence.PodState{Phase: "Running", Ready: "True", NodeName: "termlab-worker2",
		Containers: []evidence.ContainerState{{Name: "heartbeat", ContainerID: cid, State: "running", StartedAt: tp(1.5)}}}
	action := func(kind evidence.ActionKind, target string, sec float64, req string) evidence.Action {
		return evidence.Action{Kind: kind, Target: target, Request: json.RawMessage(req), StartedAt: at(sec), FinishedAt: at(sec + 0.2)}
	}
	obs := func(sec float64, state string, exit *int32, finished *time.Time, seq int) evidence.ContainerObservation {
		return evidence.ContainerObservation{Step: "x", Pod: "orphan-process", Node: "termlab-worker2", ContainerID: cid, ObservedAt: at(sec),
			State: state, ExitCode: exit, StartedAt: tp(1.5), FinishedAt: finished,
			Log:         &evidence.LogSummary{Started: true, Heartbeats: seq, LastSeq: seq, LastBeatAt: tp(sec - 0.2)},
			InspectPath: "steps/04-look/orphan-process-crictl-inspect.json", LogsPath: "steps/04-look/orphan-process-crictl-logs.txt"}
	}
	rec := &evidence.Record{
		Lab: "orphan", RunID: "20261202-100000-abcd", Namespace: "termlab-orphan-20261202-100000-abcd",
		StartedAt: at(0), EndedAt: at(80),
		Steps: []evidence.Step{
			{Name: "create pod orphan-process", StartedAt: at(0), FinishedAt: at(2)},
			{Name: "stop the kubelet", StartedAt: at(2), FinishedAt: at(3)},
			{Name: "force delete", StartedAt: at(3), FinishedAt: at(4)},
			{Name: "restart the kubelet", StartedAt: at(60), FinishedAt: at(65)},
		},
		Actions: []evidence.Action{
			action("create", "orphan-process", 0.1, `{"verb":"create"}`),
			action("stop-kubelet", "termlab-worker2", 2.5, `["systemctl","stop","kubelet"]`),
			action("force-delete", "orphan-process", 3.5, `{"gracePeriodSeconds":0}`),
			action("start-kubelet", "termlab-worker2", 60, `["systemctl","start","kubelet"]`),
		},
		PodEvents: []evidence.PodEvent{
			pod(0.2, "ADDED", "100", evidence.PodState{Phase: "Pending"}),
			pod(1.6, "MODIFIED", "101", running),
			pod(3.6, "DELETED", "102", running),
		},
		NodeEvents: []evidence.NodeEvent{
			{ObservedAt: at(0), Type: "LISTED", Name: "termlab-worker2", Ready: "True", Reason: "KubeletReady"},
			{ObservedAt: at(45), Type: "MODIFIED", Name: "termlab-worker2", Ready: "Unknown", Reason: "NodeStatusUnknown"},
			{ObservedAt: at(64), Type: "MODIFIED", Name: "termlab-worker2", Ready: "True", Reason: "KubeletReady"},
		},
		Snapshots: []evidence.Snapshot{{Step: "force delete", Pod: "orphan-process", At: at(3.8), Path: "steps/03-force-delete/orphan-process.yaml"}},
		Containers: []evidence.ContainerObservation{
			obs(1.8, evidence.ContainerRunning, nil, nil, 1),
			obs(3.9, evidence.ContainerRunning, nil, nil, 3),
			obs(6.0, evidence.ContainerRunning, nil, nil, 5),
			obs(63.1, evidence.ContainerExited, i32(137), tp(62.9), 61),
		},
		Notes: []evidence.Note{{At: at(0), Text: "repaired nothing"}},
	}
	cs := []claims.Claim{
		claims.DeletedWithin(rec, claims.Deleted{ID: "orphan.api_object_exists_false", Statement: "gone within 2 s; runs compare within ±2 s", Pod: "orphan-process", After: "force-delete", Within: 2 * time.Second, RequireGone: true}).
			WithTolerance("deleted_after_seconds", 2*time.Second),
		claims.RunningAfterDeleted(rec, claims.Orphaned{ID: "orphan.container_running", Statement: "running after", Pod: "orphan-process", Until: "start-kubelet", All: true, MinObservations: 2}),
		claims.ContainerStopped(rec, claims.Stops{ID: "orphan.container_stopped", Statement: "stops within 30 s", Pod: "orphan-process", After: "start-kubelet", Within: 30 * time.Second, WantSIGTERM: true}),
	}
	return Run{
		Title: "lab:orphan", Question: "What happens to a container whose pod is force-deleted while its node's kubelet is stopped?",
		Answer: Join(NewFindings(cs).Say("orphan.container_running", "The container ran on after its object was gone."),
			NewFindings(cs).Say("orphan.container_stopped", "It got SIGTERM.")),
		Record: rec,
		Summary: Summary{Lab: "orphan", RunID: rec.RunID, Verdict: claims.Overall(cs), StartedAt: at(0), FinishedAt: at(80),
			Versions: map[string]string{"kind": "v0.33.0", "kubernetes_server": "v1.37.2"}, Namespace: rec.Namespace,
			Claims: cs, Steps: rec.Steps, Repairs: []string{"started the kubelet on termlab-worker2"}},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./internal/report -update and review the diff", name)
	}
}

func TestGolden(t *testing.T) {
	run := orphanRun()
	sum, err := SummaryJSON(run)
	if err != nil {
		t.Fatal(err)
	}
	junit, err := JUnit(run)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "orphan.summary.json", sum)
	golden(t, "orphan.report.md", Markdown(run))
	golden(t, "orphan.timeline.svg", SVG(run))
	golden(t, "orphan.junit.xml", junit)
}

func TestRenderedFilesAreWellFormedAndShowTheOrphan(t *testing.T) {
	run := orphanRun()
	dir := t.TempDir()
	if err := Write(dir, run); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, TimelineFile))
	junit, _ := os.ReadFile(filepath.Join(dir, JUnitFile))
	for name, b := range map[string][]byte{TimelineFile: svg, JUnitFile: junit} {
		d := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s is not well-formed XML: %v", name, err)
				}
				break
			}
		}
	}
	if !strings.Contains(string(svg), ">orphan for ") {
		t.Error("the timeline does not mark the orphan")
	}
	tl := BuildTimeline(run.Record, run.Summary.Claims)
	if len(tl.Orphans) != 1 || !tl.Orphans[0].From.Equal(at(3.6)) || !tl.Orphans[0].To.Equal(at(62.9)) {
		t.Fatalf("orphan intervals %+v, want one from the DELETED event (+3.6s) to the container's exit (+62.9s)", tl.Orphans)
	}
	s, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.RunID != run.Summary.RunID || len(s.Claims) != 3 {
		t.Fatalf("summary round trip: %+v", s)
	}
	// The SIGTERM claim fails (exit 137, no SIGTERM): the junit must show one failure.
	if !strings.Contains(string(junit), `failures="1"`) {
		t.Errorf("junit does not report the failed claim:\n%s", junit)
	}
	for _, key := range []string{`"lab"`, `"run_id"`, `"verdict"`, `"started_at"`, `"finished_at"`, `"versions"`, `"claims"`, `"statement"`, `"observed"`, `"evidence"`} {
		b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
		if !strings.Contains(string(b), key) {
			t.Errorf("summary.json lacks %s", key)
		}
	}
}

func TestTimelineDrawsWhatTheRunShows(t *testing.T) {
	run := orphanRun()
	tl := BuildTimeline(run.Record, run.Summary.Claims)
	if !tl.Origin.Equal(at(3.5)) {
		t.Errorf("axis zero at %s, want the force delete (+3.5s)", tl.Origin.Sub(t0))
	}
	var kinds []string
	for _, m := range tl.Marks {
		kinds = append(kinds, m.Kind)
	}
	if len(tl.Marks) != 1 || tl.Marks[0].Kind != MarkSIGKILL || !tl.Marks[0].At.Equal(at(62.9)) {
		t.Errorf("marks %v, want SIGKILL at the exit 137 (+62.9s)", kinds)
	}
	var ready []Segment
	for _, l := range tl.Lanes {
		for _, s := range l.Segments {
			if s.Kind == KindReady {
				ready = append(ready, s)
			}
		}
	}
	if len(ready) != 2 || !ready[0].To.Equal(at(45)) {
		t.Errorf("Ready=True segments %+v, want two: until NotReady at +45s and from +64s", ready)
	}
	svg := string(SVG(run))
	for _, unused := range []string{kindStyle[KindDeleting].legend, kindStyle[KindRemoved].legend, markStyle[MarkSIGTERM].legend} {
		if strings.Contains(svg, ">"+unused+"<") {
			t.Errorf("the legend lists %q, which the picture does not use", unused)
		}
	}
	for _, used := range []string{kindStyle[KindReady].legend, kindStyle[KindKubeletStopped].legend, markStyle[MarkSIGKILL].legend} {
		if !strings.Contains(svg, ">"+used+"<") {
			t.Errorf("the legend lacks %q", used)
		}
	}
}

func TestFakeNodePodIsOneLaneOfWhatTheAPIReports(t *testing.T) {
	pod := func(sec float64, typ string, st evidence.PodState) evidence.PodEvent {
		st.Name, st.NodeName = "plain-kwok-v07-fast", "kwok-node-0"
		return evidence.PodEvent{ObservedAt: at(sec), Type: typ, PodState: st}
	}
	deleting := &time.Time{}
	rec := &evidence.Record{StartedAt: at(0), EndedAt: at(10),
		Actions: []evidence.Action{{Kind: "delete", Target: "plain-kwok-v07-fast", StartedAt: at(1), FinishedAt: at(1.1)}},
		PodEvents: []evidence.PodEvent{
			pod(0.1, "ADDED", evidence.PodState{Phase: "Running", Finalizers: []string{"lab.example.com/cleanup"}}),
			pod(1.1, "MODIFIED", evidence.PodState{Phase: "Running", DeletionTimestamp: deleting, Finalizers: []string{"lab.example.com/cleanup"}}),
			pod(1.2, "MODIFIED", evidence.PodState{Phase: "Running", DeletionTimestamp: deleting}),
			pod(1.3, "DELETED", evidence.PodState{Phase: "Running", DeletionTimestamp: deleting}),
		}}
	tl := BuildTimeline(rec, nil)
	if len(tl.Lanes) != 1 || !strings.Contains(tl.Lanes[0].Label, "kwok") {
		t.Fatalf("lanes %+v, want one API lane for the kwok pod", tl.Lanes)
	}
	if len(tl.Marks) != 1 || tl.Marks[0].Kind != MarkFinalizersEmptied || !tl.Marks[0].At.Equal(at(1.2)) {
		t.Errorf("marks %+v, want the finalizers emptied at +1.2s", tl.Marks)
	}
}

// A StatefulSet's replacement has the old pod's name and a new UID: it is
// its own incarnation, with its own API and crictl lanes, the old
// container's life after its object's DELETED is an orphan, and the two
// containers running at once are one overlap of the measured length.
func TestIncarnationsHaveTheirOwnLanes(t *testing.T) {
	const oldID, newID = "aaaa", "bbbb"
	ev := func(sec float64, typ, uid, node, id string) evidence.PodEvent {
		st := evidence.PodState{Name: "ident-0", UID: uid, NodeName: node, Phase: "Running",
			Containers: []evidence.ContainerState{{Name: "w", ContainerID: id, State: "running"}}}
		return evidence.PodEvent{ObservedAt: at(sec), Type: typ, PodState: st}
	}
	look := func(sec float64, node, id string, started float64, finished *time.Time) evidence.ContainerObservation {
		state := evidence.ContainerRunning
		if finished != nil {
			state = evidence.ContainerExited
		}
		return evidence.ContainerObservation{Pod: "ident-0", Node: node, ContainerID: id, ObservedAt: at(sec), State: state, StartedAt: tp(started), FinishedAt: finished}
	}
	rec := &evidence.Record{StartedAt: at(0), EndedAt: at(30),
		Actions: []evidence.Action{{Kind: "force-delete", Target: "ident-0", StartedAt: at(10), FinishedAt: at(10.1)}},
		PodEvents: []evidence.PodEvent{
			ev(1, "ADDED", "uid-1", "worker2", oldID),
			ev(10.1, "DELETED", "uid-1", "worker2", oldID),
			ev(10.2, "ADDED", "uid-2", "worker", newID),
		},
		Containers: []evidence.ContainerObservation{
			look(2, "worker2", oldID, 1.5, nil),
			look(12, "worker", newID, 11, nil),
			look(25, "worker2", oldID, 1.5, tp(24)),
		}}
	tl := BuildTimeline(rec, nil)
	var kinds []string
	for _, l := range tl.Lanes {
		kinds = append(kinds, fmt.Sprintf("%s#%d/%s", l.Kind, l.Incarnation, l.Node))
	}
	if want := "[api#1/ crictl#1/worker2 api#2/ crictl#2/worker]"; fmt.Sprint(kinds) != want {
		t.Fatalf("lanes %v, want %s", kinds, want)
	}
	if len(tl.Orphans) != 1 || !tl.Orphans[0].From.Equal(at(10.1)) || !tl.Orphans[0].To.Equal(at(24)) {
		t.Errorf("orphans %+v, want the old container from its object's DELETED (+10.1s) to its exit (+24s)", tl.Orphans)
	}
	if len(tl.Overlaps) != 1 || tl.Overlaps[0].Seconds() != 13 || !strings.Contains(tl.Overlaps[0].Label, "13.0 s") {
		t.Errorf("overlaps %+v, want one of 13 s (+11s → +24s)", tl.Overlaps)
	}
}

// A run's summary.json names the termlab that made it; one without (made
// before it was recorded) still reads.
func TestSummaryNamesTheTermlabThatMadeIt(t *testing.T) {
	run := orphanRun()
	run.Summary.Termlab = &version.Info{Version: "v0.1.0", Commit: "abc123", Go: "go1.26.0", ClientGo: "v0.37.2", Date: "2026-12-01T10:00:00Z"}
	dir := t.TempDir()
	if err := Write(dir, run); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"termlab": {`, `"version": "v0.1.0"`, `"commit": "abc123"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary.json lacks %s:\n%s", want, b)
		}
	}
	s, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Termlab == nil || *s.Termlab != *run.Summary.Termlab {
		t.Errorf("termlab read back as %+v, want %+v", s.Termlab, run.Summary.Termlab)
	}
	old, err := SummaryJSON(orphanRun())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(old), `"termlab"`) {
		t.Errorf("a run without it says termlab: %s", old)
	}
}

// report.md opens with the answer in plain words and the picture; how
// exact the clocks were is developer detail and comes after the picture.
func TestReportOpensWithTheAnswerThenThePicture(t *testing.T) {
	run := orphanRun()
	run.Summary.Clocks = []evidence.ClockOffset{{Clock: evidence.ClockAPIServer, Offset: -0.006, Uncertainty: 0.006, Samples: 12, How: "audit log"}}
	md := string(Markdown(run))
	answer := strings.Index(md, "**Answer from this run.**")
	picture := strings.Index(md, "![Timeline")
	clocks := strings.Index(md, "**Clocks against the host's**")
	claimsAt := strings.Index(md, "## Claims")
	if answer < 0 || picture < 0 || clocks < 0 || claimsAt < 0 {
		t.Fatalf("report.md lacks its answer (%d), picture (%d), clocks (%d) or claims (%d):\n%s", answer, picture, clocks, claimsAt, md)
	}
	if !(answer < picture && picture < clocks && clocks < claimsAt) {
		t.Errorf("report.md's order is answer %d, picture %d, clocks %d, claims %d; want the answer, the picture, then the clocks", answer, picture, clocks, claimsAt)
	}
}
