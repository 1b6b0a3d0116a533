package sidecar

import (
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:sidecar run on the termlab cluster (kubelet
// v1.37.2, containerd 1.7); the whole objects are left out of events.jsonl.
const recorded = "testdata/20261204-024455-991e"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 6)
}

// edit changes every crictl observation of the pod's named container.
func edit(rec *evidence.Record, pod, name string, fn func(o *evidence.ContainerObservation)) {
	id := shutdownOf(rec, pod).Containers[name].ID
	for i, o := range rec.Containers {
		if o.Pod == pod && o.ContainerID == id {
			if o.Log != nil {
				l := *o.Log // the summaries may be shared: change a copy
				rec.Containers[i].Log = &l
			}
			fn(&rec.Containers[i])
		}
	}
}

// sigtermAt moves the container's logged SIGTERM to t.
func sigtermAt(rec *evidence.Record, pod, name string, t time.Time) {
	edit(rec, pod, name, func(o *evidence.ContainerObservation) {
		if o.Log != nil && o.Log.SignalAt != nil {
			o.Log.SignalAt = &t
		}
	})
}

// exitAt moves the container's exit (crictl's and its logged one) to t, with code.
func exitAt(rec *evidence.Record, pod, name string, t time.Time, code int32) {
	edit(rec, pod, name, func(o *evidence.ContainerObservation) {
		if o.FinishedAt != nil {
			o.FinishedAt, o.ExitCode = &t, &code
		}
		if o.Log != nil && o.Log.ExitAt != nil {
			o.Log.ExitAt = &t
		}
	})
}

// of is the container's recorded shutdown.
func of(rec *evidence.Record, pod, name string) containerRun {
	return *shutdownOf(rec, pod).Containers[name]
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		fails  []string
	}{
		{"sidecar-b got SIGTERM a second before the main container exited", func(rec *evidence.Record) {
			sigtermAt(rec, podOrdered, sidecarB, of(rec, podOrdered, mainName).Finished.Add(-time.Second))
		}, []string{"sidecar.sidecars_after_main"}},
		{"sidecar-a got SIGTERM before the main container exited", func(rec *evidence.Record) {
			sigtermAt(rec, podOrdered, sidecarA, of(rec, podOrdered, mainName).Finished.Add(-100*time.Millisecond))
		}, []string{"sidecar.sidecars_after_main", "sidecar.reverse_start_order"}},
		{"wrong order: sidecar-a (started first) got SIGTERM first", func(rec *evidence.Record) {
			a, b := of(rec, podOrdered, sidecarA), of(rec, podOrdered, sidecarB)
			sigtermAt(rec, podOrdered, sidecarA, *b.Sigterm)
			sigtermAt(rec, podOrdered, sidecarB, *a.Sigterm)
			exitAt(rec, podOrdered, sidecarA, *b.Finished, 0)
			exitAt(rec, podOrdered, sidecarB, *a.Finished, 0)
		}, []string{"sidecar.reverse_start_order"}},
		{"both sidecars got SIGTERM together when the main container exited", func(rec *evidence.Record) {
			sigtermAt(rec, podOrdered, sidecarA, *of(rec, podOrdered, sidecarB).Sigterm)
		}, []string{"sidecar.reverse_start_order"}},
		{"the sidecars started in the other order", func(rec *evidence.Record) {
			a, b := of(rec, podOrdered, sidecarA), of(rec, podOrdered, sidecarB)
			edit(rec, podOrdered, sidecarA, func(o *evidence.ContainerObservation) { o.StartedAt = b.Started })
			edit(rec, podOrdered, sidecarB, func(o *evidence.ContainerObservation) { o.StartedAt = a.Started })
		}, []string{"sidecar.reverse_start_order"}},
		{"each sidecar's preStop ran only when its turn came (3 s more per sidecar)", func(rec *evidence.Record) {
			a, b := of(rec, podOrdered, sidecarA), of(rec, podOrdered, sidecarB)
			sigtermAt(rec, podOrdered, sidecarB, b.Sigterm.Add(sidecarPreStop))
			exitAt(rec, podOrdered, sidecarB, b.Finished.Add(sidecarPreStop), 0)
			sigtermAt(rec, podOrdered, sidecarA, a.Sigterm.Add(2*sidecarPreStop))
			exitAt(rec, podOrdered, sidecarA, a.Finished.Add(2*sidecarPreStop), 0)
		}, []string{"sidecar.sidecars_after_main", "sidecar.reverse_start_order", "sidecar.prestop_with_main"}},
		{"the kubelet began stopping the sidecars only after the main container exited", func(rec *evidence.Record) {
			exit := *of(rec, podOrdered, mainName).Finished
			for i, k := range rec.KubeEvents {
				if k.Object == "Pod/"+podOrdered && k.Reason == "Killing" && k.Message != "Stopping container "+mainName {
					rec.KubeEvents[i].ObservedAt = exit
				}
			}
		}, []string{"sidecar.prestop_with_main"}},
		{"the main container got SIGTERM at once, its preStop skipped", func(rec *evidence.Record) {
			sigtermAt(rec, podOrdered, mainName, of(rec, podOrdered, mainName).Stopping.Add(50*time.Millisecond))
		}, []string{"sidecar.prestop_with_main"}},
		{"sidecar-a exited on its own before the main container, its SIGTERM still in turn", func(rec *evidence.Record) {
			exitAt(rec, podOrdered, sidecarA, of(rec, podOrdered, mainName).Finished.Add(-time.Second), 0)
		}, []string{"sidecar.sidecars_after_main"}},
		{"a sidecar was killed (137)", func(rec *evidence.Record) {
			b := of(rec, podOrdered, sidecarB)
			exitAt(rec, podOrdered, sidecarB, *b.Finished, 137)
		}, []string{"sidecar.sidecars_after_main"}},
		{"overrun: the main container ran out its 60 s and exited 0", func(rec *evidence.Record) {
			exitAt(rec, podOverrun, mainName, of(rec, podOverrun, mainName).Sigterm.Add(overrunMainWants), 0)
		}, []string{"sidecar.overrun_main_killed_at_grace_end", "sidecar.overrun_sidecars_ended_right_after"}},
		{"overrun: the sidecars were still ended in reverse order after the kill", func(rec *evidence.Record) {
			kill := *of(rec, podOverrun, mainName).Finished
			sigtermAt(rec, podOverrun, sidecarB, kill.Add(300*time.Millisecond))
			exitAt(rec, podOverrun, sidecarB, kill.Add(1300*time.Millisecond), 0)
			sigtermAt(rec, podOverrun, sidecarA, kill.Add(1600*time.Millisecond))
			exitAt(rec, podOverrun, sidecarA, kill.Add(2600*time.Millisecond), 0)
		}, []string{"sidecar.overrun_sidecars_ended_right_after"}},
		{"overrun: the sidecars waited a whole grace period more (kubernetes #125880)", func(rec *evidence.Record) {
			kill := *of(rec, podOverrun, mainName).Finished
			for _, name := range sidecarsInStartOrder {
				sigtermAt(rec, podOverrun, name, kill.Add(overrunGrace))
				exitAt(rec, podOverrun, name, kill.Add(overrunGrace+sidecarTermDelay), 0)
			}
		}, []string{"sidecar.overrun_sidecars_ended_right_after"}},
		{"overrun: a sidecar was SIGKILLed after the short grace", func(rec *evidence.Record) {
			a := of(rec, podOverrun, sidecarA)
			exitAt(rec, podOverrun, sidecarA, a.Sigterm.Add(claims.KubeletMinimumGracePeriod), 137)
		}, []string{"sidecar.overrun_sidecars_ended_right_after"}},
		{"sidecar-a's exit was seen neither by crictl nor in its log", func(rec *evidence.Record) {
			// The recorded run read it from its exit line (the kubelet had removed it).
			edit(rec, podOrdered, sidecarA, func(o *evidence.ContainerObservation) {
				if o.Log != nil {
					o.Log.ExitLogged, o.Log.ExitAt, o.Log.ExitCodeLogged = false, nil, nil
				}
			})
		}, []string{"sidecar.sidecars_after_main"}},
		{"the pod status says sidecar-a was killed (137)", func(rec *evidence.Record) {
			killed := int32(137)
			for i, e := range rec.PodEvents {
				if e.Name != podOrdered {
					continue
				}
				var ics []evidence.ContainerState
				for _, c := range e.InitContainers {
					if c.Name == sidecarA && c.State == "terminated" {
						c.ExitCode = &killed
					}
					ics = append(ics, c)
				}
				rec.PodEvents[i].InitContainers = ics
			}
		}, []string{"sidecar.sidecars_after_main"}},
		{"crictl looked at other containers", func(rec *evidence.Record) {
			for i := range rec.Containers {
				rec.Containers[i].ContainerID = "ffffffffffff"
			}
		}, []string{"sidecar.sidecars_after_main", "sidecar.reverse_start_order", "sidecar.prestop_with_main", "sidecar.overrun_main_killed_at_grace_end", "sidecar.overrun_sidecars_ended_right_after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

// A pod's watch events in an order a watch never sends fail sidecar.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "sidecar")
}
