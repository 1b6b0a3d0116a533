// Package finalizer is lab:finalizer — a finalizer nobody removes.
//
// Pod held carries finalizer lab.example.com/cleanup and runs on a real
// worker. The lab deletes it the ordinary way, then with --force
// --grace-period=0, then removes the finalizer, and records at each step what
// the API server shows and what crictl on the node says. It runs the same
// scenario on a kwok fake node (pod held-kwok), where only the API record
// exists, and reports both side by side.
package finalizer

import (
	"context"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/internal/report"
)

// Finalizer is the finalizer nobody removes (until the lab does).
const Finalizer = "lab.example.com/cleanup"

// Bounds of the waits; the claims state them.
const (
	readyWithin       = 90 * time.Second // pod Ready after create
	deletionSetWithin = 10 * time.Second // deletionTimestamp after the delete request
	stopWithin        = 45 * time.Second // container stopped after the ordinary delete: 30 s grace + 15 s
	watchHeldFor      = 5 * time.Second  // how long the lab watches the object stay after the force delete
	deletedWithin     = 10 * time.Second // DELETED after the finalizer is removed
	probeEvery        = 250 * time.Millisecond
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "finalizer",
	Question:  "A pod has a finalizer nobody removes. What do an ordinary delete and a force delete do to the API object and to its container on the node — and does a kwok fake node behave the same?",
	Manifests: []string{"held.yaml", "held-kwok.yaml"},
	Steps:     steps,
	Claims:    Claims,
}

// Run runs lab:finalizer on the cluster.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

// target is one place the scenario runs: a real worker or a kwok fake node.
type target struct {
	label    string // "kubelet" or "kwok", used in step names and claim ids
	pod      string
	manifest string
	place    lab.Placement
	node     recorder.Node // nil on a fake node: no crictl there
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	real := target{label: "kubelet", pod: "held", manifest: "held.yaml", place: lab.Placement{Node: worker.String()}, node: worker}
	if err := scenario(ctx, r, real); err != nil {
		return err
	}
	if len(r.Env.FakeNodes) == 0 {
		r.Rec.Notef("the cluster has no kwok fake node: the kwok half of the lab (pod held-kwok) did not run")
		return nil
	}
	r.Rec.Notef("pod held-kwok runs on a kwok fake node: there is no kubelet and no container there, so no crictl evidence exists for it; what it shows is the API record alone (kwok stage set: %s)", r.Env.Versions.KwokStageSet)
	fake := target{label: "kwok", pod: "held-kwok", manifest: "held-kwok.yaml", place: lab.Placement{Fake: true}}
	return scenario(ctx, r, fake)
}

func scenario(ctx context.Context, r *lab.Run, t target) error {
	var containerID string
	where := "on " + t.place.Node
	if t.place.Fake {
		where = "on a kwok fake node"
	}
	err := r.Step(ctx, fmt.Sprintf("%s: create pod %s %s and wait until it is Ready", t.label, t.pod, where), func(ctx context.Context) error {
		if _, err := r.CreatePod(ctx, t.manifest, t.place); err != nil {
			return err
		}
		e, err := r.WaitRunning(ctx, t.pod, readyWithin)
		if err != nil {
			return err
		}
		if c, ok := e.Container(""); ok {
			containerID = c.ContainerID
		}
		if _, err := r.Rec.Snapshot(ctx, t.pod); err != nil {
			return err
		}
		return observe(ctx, r, t, containerID)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("%s: ordinary delete of %s (the pod's 30 s grace period)", t.label, t.pod), func(ctx context.Context) error {
		if err := r.Delete(ctx, t.pod); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, deletionSetWithin)
		e, err := r.Rec.WaitPod(wctx, t.pod, "carry a deletionTimestamp", func(e evidence.PodEvent) bool { return e.DeletionTimestamp != nil })
		cancel()
		if err := r.Unobserved(ctx, err); err != nil {
			return err
		}
		if e.DeletionTimestamp != nil {
			r.Infof("deletionTimestamp %s, deletionGracePeriodSeconds %d, finalizers %v", e.DeletionTimestamp.Format(time.RFC3339), deref(e.DeletionGracePeriodSeconds), e.Finalizers)
		}
		wctx, cancel = lab.Within(ctx, stopWithin)
		defer cancel()
		if t.node == nil {
			// No kubelet: wait for whatever kwok's stages do (a terminal phase, or grace collapsed to 0).
			e, err := r.Rec.WaitPod(wctx, t.pod, "be acted on by kwok (phase Succeeded/Failed or deletionGracePeriodSeconds 0)", func(e evidence.PodEvent) bool {
				return e.Type == "DELETED" || e.Terminal() || (e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0)
			})
			if err == nil {
				r.Infof("kwok: %s", evidence.Describe(e))
			}
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
		} else {
			e, err := r.Rec.WaitPod(wctx, t.pod, "reach phase Succeeded or Failed", func(e evidence.PodEvent) bool { return e.Type == "DELETED" || e.Terminal() })
			if err == nil {
				r.Infof("kubelet: %s", evidence.Describe(e))
			}
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
			o, err := r.Rec.WaitContainer(wctx, t.node, t.pod, containerID, "stop", probeEvery, evidence.ContainerObservation.Stopped)
			if err == nil {
				r.Infof("crictl on %s: %s", t.node, o.Describe())
			}
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
		}
		_, err = r.Rec.Snapshot(ctx, t.pod)
		return err
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("%s: force delete of %s (gracePeriodSeconds 0), then watch it for %s", t.label, t.pod, watchHeldFor), func(ctx context.Context) error {
		if err := r.ForceDelete(ctx, t.pod); err != nil {
			return err
		}
		// The object must stay: a DELETED event within the watch is the contradiction.
		wctx, cancel := lab.Within(ctx, watchHeldFor)
		e, err := r.Rec.WaitPod(wctx, t.pod, "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
		cancel()
		if err == nil {
			r.Log.Warnf("pod %s was deleted although its finalizer was never removed: %s", t.pod, evidence.Describe(e))
		} else if ctx.Err() != nil {
			return err
		}
		s, err := r.Rec.Snapshot(ctx, t.pod)
		if err != nil {
			return err
		}
		if s.Found && s.State != nil {
			r.Infof("after %s the object is still there: deletionGracePeriodSeconds %d, finalizers %v, phase %s", watchHeldFor, deref(s.State.DeletionGracePeriodSeconds), s.State.Finalizers, s.State.Phase)
		}
		return nil
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, fmt.Sprintf("%s: remove the finalizer of %s", t.label, t.pod), func(ctx context.Context) error {
		if err := r.RemoveFinalizers(ctx, t.pod); err != nil {
			return err
		}
		wctx, cancel := lab.Within(ctx, deletedWithin)
		e, err := r.Rec.WaitPod(wctx, t.pod, "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
		cancel()
		if err == nil {
			r.Infof("DELETED (resourceVersion %s)", e.ResourceVersion)
		}
		if err := r.Unobserved(ctx, err); err != nil {
			return err
		}
		if _, err := r.Rec.Snapshot(ctx, t.pod); err != nil {
			return err
		}
		return observe(ctx, r, t, containerID)
	})
}

// observe records crictl evidence for the container, on a real node only.
func observe(ctx context.Context, r *lab.Run, t target, containerID string) error {
	if t.node == nil || containerID == "" {
		return nil
	}
	o, err := r.Rec.ObserveContainer(ctx, t.node, t.pod, containerID)
	if err != nil {
		return fmt.Errorf("reading crictl evidence for %s: %w", t.pod, err)
	}
	r.Infof("crictl on %s: %s", t.node, o.Describe())
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// Claims decides lab:finalizer's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	zero := int64(0)
	var out []claims.Claim
	for _, t := range []struct{ label, pod, where string }{{"kubelet", "held", "on a real worker"}, {"kwok", "held-kwok", "on a kwok fake node"}} {
		p := "finalizer." + t.label
		out = append(out, claims.DeletionHeld(rec, claims.Held{
			ID: p + ".delete.object_stays",
			Statement: fmt.Sprintf("After an ordinary delete of pod %s %s (no grace period given: the pod's 30 s apply), the API object gets a deletionTimestamp and stays, finalizer %s still set, with no DELETED event until the lab removes the finalizer (watched for at least %s).",
				t.pod, t.where, Finalizer, watchHeldFor),
			Pod: t.pod, Finalizer: Finalizer, Delete: "delete", Release: "remove-finalizers", MinHold: watchHeldFor,
		}))
		if t.label == "kubelet" {
			out = append(out,
				claims.ContainerStopped(rec, claims.Stops{
					ID: p + ".delete.container_stopped",
					Statement: fmt.Sprintf("While the object stays, the kubelet still stops the container: crictl on the node shows the container of %s exited within %s of the ordinary delete, and the pod reports phase Succeeded or Failed before any DELETED event.",
						t.pod, stopWithin),
					Pod: t.pod, After: "delete", Within: stopWithin, WhileObjectExists: true,
				}),
				claims.ContainerStopped(rec, claims.Stops{
					ID:        p + ".delete.graceful_stop",
					Statement: fmt.Sprintf("The kubelet stops it gracefully: the container of %s logged SIGTERM and exited with code 0 (the workload handles SIGTERM), within %s of the ordinary delete.", t.pod, stopWithin),
					Pod:       t.pod, After: "delete", Within: stopWithin, WantSIGTERM: true,
				}))
		}
		out = append(out,
			claims.DeletionHeld(rec, claims.Held{
				ID: p + ".force.object_stays",
				Statement: fmt.Sprintf("After a force delete (DeleteOptions gracePeriodSeconds=0, as kubectl --force --grace-period=0 sends) of %s, the object still exists %s later, with deletionGracePeriodSeconds 0 and finalizer %s still set.",
					t.pod, watchHeldFor, Finalizer),
				Pod: t.pod, Finalizer: Finalizer, Delete: "force-delete", Release: "remove-finalizers", GracePeriod: &zero, MinHold: watchHeldFor,
			}),
			claims.DeletedWithin(rec, claims.Deleted{
				ID:        p + ".finalizer_removed.deleted",
				Statement: fmt.Sprintf("Once the lab removes the finalizer of %s, a DELETED event arrives within %s and a GET answers NotFound.", t.pod, deletedWithin),
				Pod:       t.pod, After: "remove-finalizers", Within: deletedWithin, RequireGone: true,
			}))
	}
	return out
}
