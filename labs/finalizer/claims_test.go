package finalizer

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:finalizer run on the termlab cluster (kubelet
// v1.37.2, kwok v0.8.0 with the faithful stage set); the whole objects are
// left out of events.jsonl.
const recorded = "testdata/20261202-111614-6364"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func verdicts(rec *evidence.Record) map[string]claims.Claim { return labtest.ByID(Claims(rec)) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 8)
}

// deleteEvents drops the pod's events for which drop is true.
func deleteEvents(rec *evidence.Record, pod string, drop func(evidence.PodEvent) bool) {
	var keep []evidence.PodEvent
	for _, e := range rec.PodEvents {
		if e.Name == pod && drop(e) {
			continue
		}
		keep = append(keep, e)
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
			name: "kwok ≤ v0.7: finalizers emptied and the object deleted right after the ordinary delete",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "held-kwok")
				for i, e := range rec.PodEvents {
					if e.Name == "held-kwok" && e.Type == "DELETED" {
						rec.PodEvents[i].ObservedAt = del.FinishedAt.Add(100 * time.Millisecond)
						rec.PodEvents[i].Finalizers = nil
					}
				}
			},
			fails: []string{"finalizer.kwok.delete.object_stays", "finalizer.kwok.force.object_stays", "finalizer.kwok.finalizer_removed.deleted"},
		},
		{
			name: "the kubelet did not stop the container",
			mutate: func(rec *evidence.Record) {
				for i := range rec.Containers {
					rec.Containers[i].State, rec.Containers[i].ExitCode, rec.Containers[i].FinishedAt = evidence.ContainerRunning, nil, nil
				}
				for i, e := range rec.PodEvents {
					if e.Name == "held" && e.Terminal() {
						rec.PodEvents[i].Phase = "Running"
					}
				}
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "killed without SIGTERM",
			mutate: func(rec *evidence.Record) {
				code := int32(137)
				for i, o := range rec.Containers {
					if o.State == evidence.ContainerExited {
						rec.Containers[i].ExitCode = &code
						rec.Containers[i].Log.Signal = ""
					}
				}
			},
			fails: []string{"finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "no DELETED event after the finalizer removal",
			mutate: func(rec *evidence.Record) {
				deleteEvents(rec, "held", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
			},
			fails: []string{"finalizer.kubelet.finalizer_removed.deleted"},
		},
		{
			name: "the finalizer vanished after the force delete",
			mutate: func(rec *evidence.Record) {
				force, _ := rec.Action("force-delete", "held")
				for i, s := range rec.Snapshots {
					if s.Pod == "held" && s.At.After(force.FinishedAt) && s.Found {
						rec.Snapshots[i].State.Finalizers = nil
					}
				}
			},
			fails: []string{"finalizer.kubelet.force.object_stays"},
		},
		{
			name: "the kwok half never ran",
			mutate: func(rec *evidence.Record) {
				deleteEvents(rec, "held-kwok", func(evidence.PodEvent) bool { return true })
				var acts []evidence.Action
				for _, a := range rec.Actions {
					if a.Target != "held-kwok" {
						acts = append(acts, a)
					}
				}
				rec.Actions = acts
			},
			fails: []string{"finalizer.kwok.delete.object_stays", "finalizer.kwok.force.object_stays", "finalizer.kwok.finalizer_removed.deleted"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

func TestRecordedKubeletSequence(t *testing.T) {
	rec := load(t)
	got := strings.Join(claims.Strings(claims.DeletionTransitions(rec.EventsFor("held"))), " ")
	want := "deletionTimestamp=set deletionGracePeriodSeconds=30 container/heartbeat=terminated(reason=Completed,exitCode=0) ready=False phase=Succeeded deletionGracePeriodSeconds=0 object=DELETED"
	if got != want {
		t.Fatalf("the kubelet's deletion sequence\n got %s\nwant %s", got, want)
	}
}
