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
	"strings"
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

// Bounds of the waits: long enough to record what happens even when a claim
// rejects it, so a failed claim says how late, not just "not observed".
const (
	readyWithin       = 90 * time.Second // pod Ready after create
	deletionSetWithin = 10 * time.Second // deletionTimestamp after the delete request
	stopWait          = 45 * time.Second // container stopped after the ordinary delete: even a kubelet that waited out the 30 s grace is recorded
	deletedWait       = 10 * time.Second // DELETED after the finalizer is removed
	probeEvery        = 250 * time.Millisecond
)

// Bounds of the claims, each from the mechanism (internal/claims/bounds.go).
const (
	// watchHeldFor is how long the lab watches the object stay after each
	// delete. Without the finalizer it would be gone well within it: the
	// kubelet's own final delete follows an ordinary delete by 0.8–3.2 s
	// (lab:kwok's plain pod) and a force delete is DELETED within 1 s.
	watchHeldFor = 5 * time.Second
	// termDelay is the workload's own delay from SIGTERM to its exit 0
	// (--term-delay=0s in manifests/pods/held.yaml).
	termDelay = 0 * time.Second
	// sigtermWithin: the kubelet sends SIGTERM as soon as it sees the
	// deletionTimestamp; it waits none of the pod's 30 s grace period.
	sigtermWithin = claims.KubeletSyncAllowance
	// exitAfterSigterm: the workload exits after its term delay, plus the
	// allowance for the runtime to record the exit.
	exitAfterSigterm = termDelay + claims.ExitAllowance
	// stoppedWithin (4 s) adds those up. A SIGKILL after the kubelet's 2 s
	// minimum grace could also meet it: the stop within ExitAllowance of the
	// logged SIGTERM, with exit code 0, is what tells the workload's own exit.
	stoppedWithin = sigtermWithin + exitAfterSigterm
	// goneAfterRelease: at grace 0 the API server deletes the object in the
	// same update that removes its last finalizer; only the watch delivery remains.
	goneAfterRelease = claims.WatchAllowance
	// updateSeenWithin: a delete writes its update (deletionTimestamp,
	// grace period) before the API server answers; only the watch
	// delivery remains.
	updateSeenWithin = claims.WatchAllowance
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "finalizer",
	Question:  "A pod has a finalizer nobody removes. What do an ordinary delete and a force delete do to the API object and to its container on the node — and does a kwok fake node behave the same?",
	Summary:   "the object stays while its finalizer stays, even after a force delete; the kubelet still stops the container",
	Predict:   "After an ordinary delete, and then a force delete, of a pod whose finalizer nobody removes: is the API object still there? Is its container still running on the node? And on a kwok fake node?",
	Uses:      lab.Uses{Worker: 0, FakeNode: true, FakeNodeOptional: true},
	Manifests: []string{"held.yaml", "held-kwok.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pod held on a real worker and wait until it is Ready", Pod: "held",
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/held.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels", "kubectl wait pod/held -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"kubectl get pod held -n {ns} -o wide", "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
		{Title: "ordinary delete (the pod's 30 s grace period)", Pod: "held",
			Do:  []string{"kubectl delete pod held -n {ns} --wait=false"},
			See: []string{"kubectl get pod {pod} -n {ns} -o jsonpath='{.metadata.deletionTimestamp} grace={.metadata.deletionGracePeriodSeconds} finalizers={.metadata.finalizers} phase={.status.phase}{\"\\n\"}'", "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
		{Title: "force delete: the finalizer still holds the object", Pod: "held",
			Do:  []string{"kubectl delete pod held -n {ns} --force --grace-period=0 --wait=false"},
			See: []string{"kubectl get pod {pod} -n {ns} -o jsonpath='{.metadata.deletionTimestamp} grace={.metadata.deletionGracePeriodSeconds} finalizers={.metadata.finalizers} phase={.status.phase}{\"\\n\"}'"}},
		{Title: "remove the finalizer: now the object goes", Pod: "held",
			Do:  []string{"kubectl patch pod held -n {ns} --type=merge -p '{\"metadata\":{\"finalizers\":null}}'"},
			See: []string{"kubectl get pod held -n {ns}"}},
	},
	Steps:  steps,
	Claims: Claims,
	Answer: Answer,
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
		wctx, cancel = lab.Within(ctx, stopWait)
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
		if err := r.WaitDeleted(ctx, t.pod, deletedWait); err != nil {
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
		return r.Unobserved(ctx, fmt.Errorf("reading crictl evidence for %s: %w", t.pod, err))
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
	sec := claims.InSeconds
	var out []claims.Claim
	for _, t := range []struct{ label, pod, where string }{{"kubelet", "held", "on a real worker"}, {"kwok", "held-kwok", "on a kwok fake node"}} {
		p := "finalizer." + t.label
		out = append(out, claims.DeletionHeld(rec, claims.Held{
			ID: p + ".delete.object_stays",
			Statement: fmt.Sprintf("After an ordinary delete of pod %s %s (no grace period given: the pod's 30 s apply), termlab waits at least %s before it removes the finalizer (precondition); in that time the API object gets a deletionTimestamp, which the watch shows within %s of the request, and stays, finalizer %s still set, with no DELETED event (without a finalizer the kubelet's own final delete comes 0.8–3.2 s after such a delete).",
				t.pod, t.where, sec(watchHeldFor), sec(updateSeenWithin), Finalizer),
			Pod: t.pod, Finalizer: Finalizer, Delete: evidence.ActionDelete, Release: evidence.ActionRemoveFinalizers, MinHold: watchHeldFor,
			UpdateSeenWithin: updateSeenWithin,
		}))
		if t.label == "kubelet" {
			out = append(out,
				claims.ContainerStopped(rec, claims.Stops{
					ID: p + ".delete.container_stopped",
					Statement: fmt.Sprintf("While the object stays, the kubelet still stops the container: the container of %s on the node stopped (crictl: exited, or already removed with the kubelet reporting it terminated) within %s of the ordinary delete — %s for the kubelet to act, the workload's %s term delay and %s for the exit to be recorded; short of the kubelet's %s minimum grace; its exit code 0 says the workload ended by itself, not by SIGKILL (137) — and the pod reports phase Succeeded or Failed before any DELETED event. Runs compare within ±%[2]s, the range this bound allows.",
						t.pod, sec(stoppedWithin), sec(sigtermWithin), sec(termDelay), sec(claims.ExitAllowance), sec(claims.KubeletMinimumGracePeriod)),
					Pod: t.pod, After: evidence.ActionDelete, Within: stoppedWithin, WhileObjectExists: true, WantExitCode: &exitedClean,
				}).WithTolerance("stopped_after_seconds", stoppedWithin),
				claims.ContainerStopped(rec, claims.Stops{
					ID: p + ".delete.graceful_stop",
					Statement: fmt.Sprintf("The kubelet stops it gracefully: the workload in %s logged SIGTERM within %s of the ordinary delete (the kubelet sends it as soon as it sees the deletionTimestamp, spending none of the 30 s grace period; %[2]s is the allowance for its watch and pod worker), stopped within %s of that SIGTERM (its term delay is %s, plus %s for the exit to be recorded) and exited with code 0 (it handles SIGTERM). Runs compare within ±%[2]s and ±%[3]s.",
						t.pod, sec(sigtermWithin), sec(exitAfterSigterm), sec(termDelay), sec(claims.ExitAllowance)),
					Pod: t.pod, After: evidence.ActionDelete, Within: stoppedWithin, WantSIGTERM: true, WantExitCode: &exitedClean,
					SignalWithin: sigtermWithin, StopAfterSignal: &claims.Window{Min: termDelay, Max: exitAfterSigterm},
				}).WithTolerance("sigterm_after_seconds", sigtermWithin).WithTolerance("stopped_after_sigterm_seconds", exitAfterSigterm))
		}
		out = append(out,
			claims.DeletionHeld(rec, claims.Held{
				ID: p + ".force.object_stays",
				Statement: fmt.Sprintf("After a force delete (DeleteOptions gracePeriodSeconds=0, as kubectl --force --grace-period=0 sends) of %s, termlab waits %s before it removes the finalizer (precondition); in that time the object still exists — no DELETED event (without a finalizer it would be DELETED within %s) — with deletionGracePeriodSeconds 0, which the watch shows within %s of the request, and finalizer %s still set.",
					t.pod, sec(watchHeldFor), sec(claims.WatchAllowance), sec(updateSeenWithin), Finalizer),
				Pod: t.pod, Finalizer: Finalizer, Delete: evidence.ActionForceDelete, Release: evidence.ActionRemoveFinalizers, GracePeriod: &zero, MinHold: watchHeldFor,
				UpdateSeenWithin: updateSeenWithin,
			}),
			claims.DeletedWithin(rec, claims.Deleted{
				ID: p + ".finalizer_removed.deleted",
				Statement: fmt.Sprintf("Once the lab removes the finalizer of %s, a DELETED event arrives within %s and a GET answers NotFound: its grace period is already 0, so the API server deletes the object in the same update that removes the last finalizer; %[2]s is the allowance for the watch to deliver it. Runs compare within ±%[2]s.",
					t.pod, sec(goneAfterRelease)),
				Pod: t.pod, After: evidence.ActionRemoveFinalizers, Within: goneAfterRelease, RequireGone: true,
			}).WithTolerance("deleted_after_seconds", goneAfterRelease))
	}
	out = append(out, claims.WatchOrder(rec, "finalizer"))
	if rec.NoFakeNodes {
		// The kwok half never ran: its claims are open, not failed.
		for i, c := range out {
			if strings.HasPrefix(c.ID, "finalizer.kwok.") {
				out[i] = claims.NotCheckedFor(c, claims.NeedsFakeNodes)
			}
		}
	}
	return out
}

// exitedClean is the exit code of the workload after SIGTERM: it exits 0.
var exitedClean int32 = 0
