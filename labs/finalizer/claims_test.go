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
	labtest.AllPass(t, Claims(load(t)), 9)
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
						rec.Containers[i].Log.ExitCodeLogged = nil
					}
				}
				setKubeletExitCode(rec, "held", &code)
			},
			// container_stopped states exit 0 too: a SIGKILL within its bound no longer passes it.
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "crictl found the container removed, and the kubelet reported exit code 137",
			mutate: func(rec *evidence.Record) {
				removeExited(rec, "held")
				setKubeletExitCode(rec, "held", ptr(int32(137)))
			},
			// The log still says exit 0: the sources disagree, and neither stop claim may pass on that.
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "crictl found the container removed, and no other source knows the exit code",
			mutate: func(rec *evidence.Record) {
				removeExited(rec, "held")
				setKubeletExitCode(rec, "held", nil)
				for i, o := range rec.Containers {
					if o.Pod == "held" && o.Log != nil {
						rec.Containers[i].Log.ExitCodeLogged, rec.Containers[i].Log.ExitLogged = nil, false
					}
				}
			},
			// The container is gone, so it stopped; how is unknown, so neither
			// "ended by itself" nor a graceful stop is shown.
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			// The slowest recorded reaction is 0.52 s; the claim allows 1 s.
			name: "the kubelet sent SIGTERM 4 s after the delete",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "held")
				moveSignal(rec, "held", del.StartedAt.Add(4*time.Second))
				setFinishedAt(rec, "held", del.StartedAt.Add(4010*time.Millisecond))
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "the workload took 1 s after SIGTERM to exit (its term delay is 0 s)",
			mutate: func(rec *evidence.Record) {
				setFinishedAt(rec, "held", signalAt(rec, "held").Add(time.Second))
			},
			fails: []string{"finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "the container stopped 4.1 s after the delete",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "held")
				moveSignal(rec, "held", del.StartedAt.Add(3500*time.Millisecond))
				setFinishedAt(rec, "held", del.StartedAt.Add(4100*time.Millisecond))
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "the kubelet waited out the 30 s grace period, then SIGKILL",
			mutate: func(rec *evidence.Record) {
				sig := *signalAt(rec, "held")
				setFinishedAt(rec, "held", sig.Add(30*time.Second))
				code := int32(137)
				for i, o := range rec.Containers {
					if o.Pod == "held" && o.State == evidence.ContainerExited {
						rec.Containers[i].ExitCode = &code
						rec.Containers[i].Log.ExitCodeLogged, rec.Containers[i].Log.ExitAt, rec.Containers[i].Log.ExitLogged = nil, nil, false
					}
				}
				setKubeletExitCode(rec, "held", &code)
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "DELETED came 1.5 s after the finalizer removal",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == "held" && e.Type == "DELETED" {
						rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(1500 * time.Millisecond)
					}
				}
			},
			fails: []string{"finalizer.kubelet.finalizer_removed.deleted"},
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
			// The force delete's update (deletionGracePeriodSeconds 0) never
			// seen by the watch: only the GET 5 s later shows grace 0.
			name: "the watch never showed held-kwok's grace 0",
			mutate: func(rec *evidence.Record) {
				deleteEvents(rec, "held-kwok", func(e evidence.PodEvent) bool {
					return e.Type == "MODIFIED" && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0
				})
			},
			fails: []string{"finalizer.kwok.force.object_stays"},
		},
		{
			// The slowest recorded is 0.012 s; the claim allows 1 s.
			name: "the ordinary delete's update was seen 1.5 s after the request",
			mutate: func(rec *evidence.Record) {
				del, _ := rec.Action("delete", "held-kwok")
				for i, e := range rec.PodEvents {
					if e.Name == "held-kwok" && e.DeletionTimestamp != nil && e.ObservedAt.Before(del.StartedAt.Add(1500*time.Millisecond)) {
						rec.PodEvents[i].ObservedAt = del.StartedAt.Add(1500 * time.Millisecond)
					}
				}
			},
			fails: []string{"finalizer.kwok.delete.object_stays"},
		},
		{
			name: "crictl saw held's container exited before the ordinary delete",
			mutate: func(rec *evidence.Record) {
				rec.Containers[0].State = evidence.ContainerExited
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"},
		},
		{
			name: "phase Succeeded reported with held's container still running",
			mutate: func(rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Name == "held" && e.Terminal() {
						cs := append([]evidence.ContainerState(nil), e.Containers...)
						cs[0].State = "running"
						rec.PodEvents[i].Containers = cs
						break
					}
				}
			},
			fails: []string{"finalizer.kubelet.delete.container_stopped"},
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

// removeExited turns crictl's view of the pod's exited container into the
// runtime's "not found": the kubelet removed it before termlab looked, as it
// does when a finalizer keeps the object (seen in CI on a busy machine).
func removeExited(rec *evidence.Record, pod string) {
	for i, o := range rec.Containers {
		if o.Pod == pod && o.State == evidence.ContainerExited {
			rec.Containers[i].State, rec.Containers[i].ExitCode, rec.Containers[i].FinishedAt = evidence.ContainerNotFound, nil, nil
		}
	}
}

// setKubeletExitCode rewrites the exit code in every terminated state the
// kubelet reported for the pod (nil: none reported).
func setKubeletExitCode(rec *evidence.Record, pod string, code *int32) {
	for i, e := range rec.PodEvents {
		if e.Name != pod {
			continue
		}
		cs := append([]evidence.ContainerState(nil), e.Containers...)
		for j := range cs {
			if cs[j].State == "terminated" {
				cs[j].ExitCode = code
			}
		}
		rec.PodEvents[i].Containers = cs
	}
}

func ptr[T any](v T) *T { return &v }

// signalAt is when the pod's workload logged SIGTERM, as the stopped
// observation's log says.
func signalAt(rec *evidence.Record, pod string) *time.Time {
	for _, o := range rec.Containers {
		if o.Pod == pod && o.Log != nil && o.Log.SignalAt != nil && o.State == evidence.ContainerExited {
			return o.Log.SignalAt
		}
	}
	panic("no SIGTERM time in the recorded run of " + pod)
}

// moveSignal rewrites when the pod's workload logged SIGTERM.
func moveSignal(rec *evidence.Record, pod string, at time.Time) {
	for i, o := range rec.Containers {
		if o.Pod == pod && o.Log != nil && o.Log.SignalAt != nil {
			l := *o.Log
			l.SignalAt = &at
			rec.Containers[i].Log = &l
		}
	}
}

// setFinishedAt rewrites when the pod's container exited, in crictl's
// finishedAt and the workload's exit line alike.
func setFinishedAt(rec *evidence.Record, pod string, at time.Time) {
	for i, o := range rec.Containers {
		if o.Pod != pod || o.State != evidence.ContainerExited {
			continue
		}
		rec.Containers[i].FinishedAt = &at
		if o.Log != nil && o.Log.ExitAt != nil {
			l := *o.Log
			l.ExitAt = &at
			rec.Containers[i].Log = &l
		}
	}
}

// The kubelet may remove the exited container before crictl looks while the
// finalizer keeps the object: the stop claims then decide from the kubelet's
// terminated state in the watch record and say so.
func TestContainerAlreadyRemovedByRuntime(t *testing.T) {
	rec := load(t)
	removeExited(rec, "held")
	cs := Claims(rec)
	labtest.AllPass(t, cs, 9)
	for _, id := range []string{"finalizer.kubelet.delete.container_stopped", "finalizer.kubelet.delete.graceful_stop"} {
		c := labtest.ByID(cs)[id]
		if src, _ := c.Observed["exit_code_source"].(string); !strings.HasPrefix(src, "kubelet:") {
			t.Errorf("%s: exit_code_source = %q, want the kubelet's terminated state", id, src)
		}
		if c.Observed["crictl_state"] != evidence.ContainerNotFound || c.Observed["container_removed_while_object_exists"] != true {
			t.Errorf("%s: observed %v, want crictl NOT_FOUND and the removal recorded", id, c.Observed)
		}
		if m, _ := c.Observed["measured_by"].(string); !strings.HasPrefix(m, "kubelet-reported") {
			t.Errorf("%s: measured_by = %q, want the kubelet's finishedAt", id, m)
		}
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

// A cluster without kwok: the kwok half did not run. Its claims are not
// checked, the real worker's still pass, and the run is partial. The same
// record that does not say the cluster had no fake nodes fails those claims.
func TestWithoutFakeNodesTheKwokHalfIsNotChecked(t *testing.T) {
	rec := load(t)
	deleteEvents(rec, "held-kwok", func(evidence.PodEvent) bool { return true })
	var actions []evidence.Action
	for _, a := range rec.Actions {
		if a.Target != "held-kwok" {
			actions = append(actions, a)
		}
	}
	rec.Actions = actions

	failing := labtest.ByID(Claims(rec))
	for id, c := range failing {
		if strings.HasPrefix(id, "finalizer.kwok.") && c.Verdict != claims.Fail {
			t.Errorf("%s without kwok's evidence and without NoFakeNodes: %s, want fail", id, c.Verdict)
		}
	}

	rec.NoFakeNodes = true
	cs := Claims(rec)
	for _, c := range cs {
		switch {
		case strings.HasPrefix(c.ID, "finalizer.kwok."):
			if c.Verdict != claims.NotChecked || c.Reason != claims.NeedsFakeNodes {
				t.Errorf("%s: %s (%s), want not checked for want of fake nodes", c.ID, c.Verdict, c.Reason)
			}
		case !c.Passed():
			t.Errorf("%s on the real worker: %s (%s), want pass", c.ID, c.Verdict, c.Reason)
		}
	}
	if v := claims.Overall(cs); v != claims.Partial {
		t.Errorf("overall %s, want partial", v)
	}
}

// A pod's watch events in an order a watch never sends fail finalizer.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "finalizer")
}
