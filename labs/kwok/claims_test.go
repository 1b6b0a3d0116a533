package kwoklab

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/labtest"
)

var update = flag.Bool("update", false, "rewrite testdata/fidelity.golden.md")

// recorded is a real lab:kwok run on the termlab cluster (kubelet v1.37.2,
// kwok v0.8.0 with the three stage sets); the whole objects are left out of
// events.jsonl.
const recorded = "testdata/20261202-113404-afa8"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func verdicts(rec *evidence.Record) map[string]claims.Claim { return labtest.ByID(Claims(rec)) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 10)
	got := verdicts(load(t))["kwok.stage_sets"].Observed["stage_set_by_pod"].(map[string]string)
	for _, sc := range Scenarios {
		for _, set := range kwok.StageSets {
			if got[PodName(sc.Name, set)] != set {
				t.Errorf("pod %s: stage set %q recorded, want %q", PodName(sc.Name, set), got[PodName(sc.Name, set)], set)
			}
		}
	}
}

// replaceEvents gives pod the events of another pod of the record (same
// scenario, another target), renamed and with pod's own UID: what the record
// would hold had pod behaved like that one.
func replaceEvents(rec *evidence.Record, pod, like string) {
	var keep []evidence.PodEvent
	uid := ""
	for _, e := range rec.PodEvents {
		if e.Name != pod {
			keep = append(keep, e)
		} else {
			uid = e.UID
		}
	}
	for _, e := range rec.PodEvents {
		if e.Name == like {
			e.Name, e.UID = pod, uid
			keep = append(keep, e)
		}
	}
	rec.PodEvents = keep
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  []string
	}{
		{
			name:   "the faithful set behaves like kwok v0.8 (never terminates)",
			mutate: func(rec *evidence.Record) { replaceEvents(rec, "finalizer-faithful", "finalizer-kwok-v08-fast") },
			fails:  []string{"kwok.faithful.finalizer.matches_kubelet"},
		},
		{
			name: "the faithful set kills instead of a clean SIGTERM exit",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == "plain-faithful" && e.Terminal() {
						rec.PodEvents[i].Phase = "Failed"
					}
				}
			},
			fails: []string{"kwok.faithful.plain.matches_kubelet"},
		},
		{
			name:   "kwok v0.7 no longer strips the finalizer",
			mutate: func(rec *evidence.Record) { replaceEvents(rec, "finalizer-kwok-v07-fast", "finalizer-kwok-v08-fast") },
			fails:  []string{"kwok.kwok-v0.7-fast.finalizer.reported_bug"},
		},
		{
			name:   "kwok v0.8 terminates the pod like a kubelet",
			mutate: func(rec *evidence.Record) { replaceEvents(rec, "plain-kwok-v08-fast", "plain-faithful") },
			fails:  []string{"kwok.kwok-v0.8-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			name:   "kwok v0.8 strips the finalizer too",
			mutate: func(rec *evidence.Record) { replaceEvents(rec, "finalizer-kwok-v08-fast", "finalizer-kwok-v07-fast") },
			fails:  []string{"kwok.kwok-v0.8-fast.finalizer.grace_collapsed_never_terminated"},
		},
		{
			name: "the real pod's deletion was not observed to the end",
			mutate: func(rec *evidence.Record) {
				var keep []evidence.PodEvent
				for _, e := range rec.PodEvents {
					if !(e.Name == "plain-kubelet" && e.Type == "DELETED") {
						keep = append(keep, e)
					}
				}
				rec.PodEvents = keep
			},
			fails: []string{"kwok.faithful.plain.matches_kubelet", "kwok.kwok-v0.8-fast.plain.grace_collapsed_never_terminated", "kwok.kwok-v0.7-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			name: "a fake pod was created without its stage set label",
			mutate: func(rec *evidence.Record) {
				for i, a := range rec.Actions {
					if a.Kind == "create" && a.Target == "plain-kwok-v07-fast" {
						var req map[string]any
						if err := json.Unmarshal(a.Request, &req); err != nil {
							panic(err)
						}
						delete(req["body"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any), kwok.StageSetLabel)
						rec.Actions[i].Request, _ = json.Marshal(req)
					}
				}
			},
			fails: []string{"kwok.stage_sets"},
		},
		{
			name: "a fake pod's API object carried another stage set (the label as the recorder keeps it on each event)",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == "plain-kwok-v07-fast" && e.Type == "MODIFIED" {
						rec.PodEvents[i].Labels = map[string]string{kwok.StageSetLabel: kwok.SetFaithful}
						rec.PodEvents[i].Object = nil
						break
					}
				}
			},
			fails: []string{"kwok.stage_sets"},
		},
		{
			// A mutant no claim killed: the create moved after the pod's
			// ADDED (2 s later: after its delete, even).
			name: "a fake pod was watched before the lab created it",
			mutate: func(rec *evidence.Record) {
				for i, a := range rec.Actions {
					if a.Kind == evidence.ActionCreate && a.Target == "plain-kwok-v08-fast" {
						rec.Actions[i].StartedAt = a.StartedAt.Add(2 * time.Second)
						rec.Actions[i].FinishedAt = a.FinishedAt.Add(2 * time.Second)
					}
				}
			},
			fails: []string{"kwok.watch_order"},
		},
		{
			name: "the stage sets were not recorded",
			mutate: func(rec *evidence.Record) {
				rec.Notes = nil
			},
			fails: []string{"kwok.stage_sets"},
		},
		{
			name: "the reference container exited only 2 s after SIGTERM (the kubelet's minimum grace, not the workload's exit)",
			mutate: func(rec *evidence.Record) {
				for i, o := range rec.Containers {
					if o.Pod == "plain-kubelet" && o.State == evidence.ContainerExited {
						at := o.Log.SignalAt.Add(2 * time.Second)
						rec.Containers[i].FinishedAt = &at
					}
				}
			},
			fails: []string{"kwok.kubelet.plain.reference_stopped"},
		},
		{
			name: "the kubelet sent the reference SIGTERM 4 s after the delete",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "finalizer-kubelet")
				late := del.StartedAt.Add(4 * time.Second)
				for i, o := range rec.Containers {
					if o.Pod == "finalizer-kubelet" && o.Log != nil && o.Log.SignalAt != nil {
						l := *o.Log
						l.SignalAt = &late
						rec.Containers[i].Log = &l
					}
				}
			},
			fails: []string{"kwok.kubelet.finalizer.reference_stopped"},
		},
		{
			name: "kwok v0.8 collapsed the grace period only 5 s after the delete",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "plain-kwok-v08-fast")
				for i, e := range rec.PodEvents {
					if e.Name == "plain-kwok-v08-fast" && e.ObservedAt.After(del.StartedAt) {
						rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(5 * time.Second)
					}
				}
			},
			fails: []string{"kwok.kwok-v0.8-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			// The mutant that had no claim to kill it (internal/mutants).
			name: "kwok v0.7's plain pod was never seen DELETED",
			mutate: func(rec *evidence.Record) {
				var keep []evidence.PodEvent
				for _, e := range rec.PodEvents {
					if !(e.Name == "plain-kwok-v07-fast" && e.Type == "DELETED") {
						keep = append(keep, e)
					}
				}
				rec.PodEvents = keep
			},
			fails: []string{"kwok.kwok-v0.7-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			name: "kwok v0.7 reported its plain pod terminated before DELETED",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == "plain-kwok-v07-fast" && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0 {
						rec.PodEvents[i].Phase = "Succeeded"
					}
				}
			},
			fails: []string{"kwok.kwok-v0.7-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			// A mutant no claim killed (internal/mutants): the stop was timed
			// from another pod's delete, sent at the same moment.
			name: "the reference pod's delete was not recorded",
			mutate: func(rec *evidence.Record) {
				rec.Actions = slices.DeleteFunc(rec.Actions, func(a evidence.Action) bool {
					return a.Kind == evidence.ActionDelete && a.Target == "plain-kubelet"
				})
			},
			fails: []string{"kwok.kubelet.plain.reference_stopped", "kwok.faithful.plain.matches_kubelet"},
		},
		{
			// The same sequence, but the faithful pod went before the lab
			// removed its finalizer (at grace 0 no transition shows the
			// finalizer go): a mutant no claim killed.
			name: "the faithful pod was DELETED before the lab removed its finalizer",
			mutate: func(rec *evidence.Record) {
				for i, a := range rec.Actions {
					if a.Kind == evidence.ActionRemoveFinalizers && a.Target == "finalizer-faithful" {
						rec.Actions[i].StartedAt = a.StartedAt.Add(2 * time.Second)
						rec.Actions[i].FinishedAt = a.FinishedAt.Add(2 * time.Second)
					}
				}
			},
			fails: []string{"kwok.faithful.finalizer.matches_kubelet"},
		},
		{
			// Mutants no claim killed: a delete 2 s earlier is sent before
			// the pod's create, and still inside every timing's bound.
			name: "the faithful pod's delete was sent before its create",
			mutate: func(rec *evidence.Record) {
				moveAction(rec, evidence.ActionDelete, "plain-faithful", -2*time.Second)
			},
			fails: []string{"kwok.faithful.plain.matches_kubelet"},
		},
		{
			name: "the reference pod was watched before the lab created it",
			mutate: func(rec *evidence.Record) {
				moveAction(rec, evidence.ActionCreate, "plain-kubelet", 700*time.Millisecond)
			},
			fails: []string{"kwok.watch_order"},
		},
		{
			name: "the lab never force-deleted kwok v0.8's finalizer pod",
			mutate: func(rec *evidence.Record) {
				rec.Actions = slices.DeleteFunc(rec.Actions, func(a evidence.Action) bool {
					return a.Kind == evidence.ActionForceDelete && a.Target == "finalizer-kwok-v08-fast"
				})
			},
			fails: []string{"kwok.kwok-v0.8-fast.finalizer.grace_collapsed_never_terminated"},
		},
		{
			name: "kwok v0.8's pod was deleted before it was there",
			mutate: func(rec *evidence.Record) {
				moveAction(rec, evidence.ActionDelete, "plain-kwok-v08-fast", -2*time.Second)
			},
			fails: []string{"kwok.kwok-v0.8-fast.plain.grace_collapsed_never_terminated"},
		},
		{
			name: "crictl never saw the real container stop",
			mutate: func(rec *evidence.Record) {
				var keep []evidence.ContainerObservation
				for _, o := range rec.Containers {
					if o.Pod != "finalizer-kubelet" {
						keep = append(keep, o)
					}
				}
				rec.Containers = keep
			},
			fails: []string{"kwok.kubelet.finalizer.reference_stopped"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

// moveAction moves the lab's request of the kind on the pod by d.
func moveAction(rec *evidence.Record, kind evidence.ActionKind, pod string, d time.Duration) {
	for i, a := range rec.Actions {
		if a.Kind == kind && a.Target == pod {
			rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = a.StartedAt.Add(d), a.FinishedAt.Add(d)
		}
	}
}

func TestFidelityTable(t *testing.T) {
	rec := load(t)
	for _, tc := range []struct {
		sc, set string
		want    string
	}{
		{"finalizer", kwok.SetFaithful, "match"},
		{"plain", kwok.SetFaithful, "match"},
		{"finalizer", kwok.SetKwokV08Fast, "differs at #3: kubelet `container/heartbeat=terminated(reason=Completed,exitCode=0)` · kwok `deletionGracePeriodSeconds=0`"},
		{"finalizer", kwok.SetKwokV07Fast, "differs at #3: kubelet `container/heartbeat=terminated(reason=Completed,exitCode=0)` · kwok `finalizers=[]`"},
		{"plain", kwok.SetKwokV07Fast, "differs at #3: kubelet `container/heartbeat=terminated(reason=Completed,exitCode=0)` · kwok `deletionGracePeriodSeconds=0`"},
	} {
		sc := Scenarios[0]
		if tc.sc == "plain" {
			sc = Scenarios[1]
		}
		if got := Compare(rec, sc, tc.set).String(); got != tc.want {
			t.Errorf("%s × %s: %q, want %q", tc.sc, tc.set, got, tc.want)
		}
	}
	replaceEvents(rec, "plain-kubelet", "nobody")
	if got := Compare(rec, Scenarios[1], kwok.SetFaithful).String(); got != "not comparable: kubelet not observed whole" {
		t.Errorf("without the reference: %q", got)
	}
}

// TestReportGolden renders the fidelity section of the recorded run.
func TestReportGolden(t *testing.T) {
	sections := Report(load(t), nil)
	if len(sections) != 1 {
		t.Fatalf("%d sections", len(sections))
	}
	got := "## " + sections[0].Title + "\n\n" + sections[0].Body
	path := filepath.Join("testdata", "fidelity.golden.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the fidelity section differs from %s (run with -update after checking):\n%s", path, got)
	}
}

func TestSequencePlacesTheLabsRequests(t *testing.T) {
	got := Sequence(load(t), "finalizer-kubelet")
	want := []string{
		"*lab: delete*",
		"1 · `deletionTimestamp=set`", "2 · `deletionGracePeriodSeconds=30`",
		"3 · `container/heartbeat=terminated(reason=Completed,exitCode=0)`", "4 · `ready=False`", "5 · `phase=Succeeded`",
		"6 · `deletionGracePeriodSeconds=0`",
		"*lab: force-delete*", "*lab: remove-finalizers*",
		"7 · `object=DELETED`",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The stage-set label is one the recorder keeps on every pod event: the
// claim that each pod kept its set reads it there.
func TestStageSetLabelIsRecorded(t *testing.T) {
	if !slices.Contains(evidence.RecordedLabels, kwok.StageSetLabel) {
		t.Errorf("evidence.RecordedLabels %v lacks %s", evidence.RecordedLabels, kwok.StageSetLabel)
	}
}

// A pod's watch events in an order a watch never sends fail kwok.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "kwok")
}
