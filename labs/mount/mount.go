// Package mount is lab:mount — a pod whose process is gone and that still
// stays, because the kubelet cannot unmount its volume.
//
// Pod mounted has a memory-backed emptyDir (a tmpfs the kubelet mounts on
// the node). The lab starts a process on the node whose working directory
// is inside that mount, as a backup agent or a shell cd-ed into it would,
// and deletes the pod the ordinary way. The container exits at once; the
// kubelet's umount fails ("target is busy") and it retries with a growing
// back-off, and the object stays Terminating: the kubelet lets a pod go
// only once its volumes are cleaned up. The lab ends the process, and the
// pod goes at the kubelet's next retry. Cleanup ends the process on every
// exit path; systemd on the node ends it by itself if termlab is killed.
package mount

import (
	"context"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/mounthold"
)

const (
	pod    = "mounted"
	volume = "scratch"
)

// Bounds, each from the mechanism it waits for.
const (
	readyWithin = 90 * time.Second
	// grace is the pod's terminationGracePeriodSeconds (manifests/pods/mounted.yaml).
	grace = 30 * time.Second
	// termDelay is the workload's wait between SIGTERM and its exit
	// (manifests/pods/mounted.yaml): clear of the clocks' uncertainty.
	termDelay = time.Second
	// exitAfterSigterm: the workload exits termDelay after the SIGTERM it
	// logs, plus the allowance for the runtime to record the exit.
	exitAfterSigterm = termDelay + claims.ExitAllowance
	// exitWithin: the kubelet sends SIGTERM at its sync after the delete,
	// and the workload exits termDelay later.
	exitWithin = claims.KubeletSyncAllowance + exitAfterSigterm
	// holdPast: the object must still be there this long after its container
	// exited, while the mount is busy: several of the kubelet's unmount
	// retries (0.5 s, then doubling: failures at about 0, 0.5, 1.5, 3.5, 7.5
	// and 15.5 s), and far past the kubelet's own sync after an exit.
	holdPast = 20 * time.Second
	// goneWithin bounds the lab's wait after the release: the retry in
	// effect then (at most holdPast plus the time to the first failure,
	// the back-off doubling from 0.5 s) plus the kubelet's sync; the claim
	// derives its tighter bound from the retry time the kubelet logged.
	goneWithin = 2*holdPast + claims.KubeletSyncAllowance + 10*time.Second
	// MaxHold arms the mount's dead-man's switch: systemd on the node ends
	// the holding process by itself this long after it started, past every
	// wait of the lab, so a killed termlab leaves no busy mount for long.
	MaxHold = readyWithin + exitWithin + holdPast + goneWithin + time.Minute
	// journalDeliveryWithin bounds a kubelet journal line's way to termlab
	// (journald, journalctl --follow, the exec stream) once the pod is gone:
	// far past the usual fraction of a second, and paid only when it is lost.
	journalDeliveryWithin = 10 * time.Second
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "mount",
	Question:  "The container of a deleted pod has exited and the node is healthy. Why can the pod still stay Terminating — and when does it go once what holds its volume lets go?",
	Summary:   "a process on the node keeps the pod's tmpfs volume busy: the container exits, the kubelet's unmount fails and the object stays until the mount is released",
	Predict:   "A process on the node has its working directory in the pod's volume. The pod is deleted and its container exits at once: when does the object go — at once, after its 30 s grace period, or never while the process stays?",
	Uses:      lab.Uses{Worker: 0, Changes: []lab.Change{lab.HeldMount{AtMost: MaxHold}}},
	Manifests: []string{"mounted.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pod mounted (a memory-backed emptyDir) on the first worker and wait until it is Ready", Pod: pod,
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/mounted.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels", "kubectl wait pod/mounted -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"docker exec {node} grep kubernetes.io~empty-dir/scratch /proc/1/mountinfo"}},
		{Title: "keep the volume busy: a process on the node with its working directory in it",
			Do:  []string{"UID=$(kubectl get pod mounted -n {ns} -o jsonpath='{.metadata.uid}')", "docker exec {node} systemd-run --unit=" + mounthold.Unit + " --collect --property=RuntimeMaxSec=300 --property=WorkingDirectory=/var/lib/kubelet/pods/$UID/volumes/kubernetes.io~empty-dir/scratch sleep infinity"},
			See: []string{"docker exec {node} systemctl status " + mounthold.Unit}},
		{Title: "an ordinary delete: the container exits, the object stays", Pod: pod,
			Do:  []string{"kubectl delete pod mounted -n {ns} --wait=false"},
			See: []string{"kubectl get pod mounted -n {ns} -w", "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "docker exec {node} journalctl -u kubelet -f | grep UnmountVolume.TearDown"}},
		{Title: "release the mount: the pod goes at the kubelet's next retry", Pod: pod,
			Do:  []string{"docker exec {node} systemctl stop " + mounthold.Unit},
			See: []string{"kubectl get pod mounted -n {ns} -w", "docker exec {node} grep kubernetes.io~empty-dir/scratch /proc/1/mountinfo"}},
	},
	Steps:   steps,
	Claims:  Claims,
	Answer:  Answer,
	Moments: Moments,
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	var containerID, dir, uid string
	following := false // the kubelet's journal is followed (node access)
	err = r.Step(ctx, fmt.Sprintf("create pod %s with a memory-backed emptyDir on %s", pod, worker), func(ctx context.Context) error {
		containerID, err = r.StartPod(ctx, "mounted.yaml", pod, worker, readyWithin)
		if err != nil {
			return err
		}
		s, err := r.Rec.Snapshot(ctx, pod)
		if err != nil {
			return err
		}
		if !s.Found || s.State == nil {
			return fmt.Errorf("pod %s is gone before the lab could read its UID", pod)
		}
		uid = s.State.UID
		dir = mounthold.EmptyDirPath(uid, volume)
		// The kubelet's own word on the volume, from now to past every wait.
		err = r.Rec.FollowJournal(worker, "kubelet", uid, MaxHold)
		following = err == nil
		if err := r.Unobserved(ctx, err); err != nil {
			return fmt.Errorf("following the kubelet's journal on %s: %w", worker, err)
		}
		return lookMount(ctx, r, worker, dir, "the volume as the kubelet mounted it")
	})
	if err != nil {
		return err
	}
	err = r.Step(ctx, fmt.Sprintf("keep the volume busy: a process on %s with its working directory in it", worker), func(ctx context.Context) error {
		if err := r.HoldMount(ctx, worker, dir, MaxHold); err != nil {
			return err
		}
		return lookMount(ctx, r, worker, dir, "held: the process's working directory is in the mount")
	})
	if err != nil {
		return err
	}
	err = r.Step(ctx, fmt.Sprintf("ordinary delete of %s: its container exits, the object stays while the mount is busy", pod), func(ctx context.Context) error {
		if err := r.Delete(ctx, pod); err != nil {
			return err
		}
		if err := r.WaitStopped(ctx, worker, pod, containerID, exitWithin+claims.WatchAllowance); err != nil {
			return err
		}
		r.Infof("container exited; holding %s while the kubelet retries the unmount", holdPast)
		select { // the hold is the experiment: the watch and the journal record it
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(holdPast):
		}
		if _, err := r.Rec.Snapshot(ctx, pod); err != nil {
			return err
		}
		return lookMount(ctx, r, worker, dir, "still held, the object still Terminating")
	})
	if err != nil {
		return err
	}
	return r.Step(ctx, fmt.Sprintf("release the mount on %s and wait for %s to be gone", worker, pod), func(ctx context.Context) error {
		if err := r.ReleaseMount(ctx, worker); err != nil {
			return err
		}
		if err := r.WaitDeleted(ctx, pod, goneWithin); err != nil {
			return err
		}
		if following {
			// The kubelet logs the unmount before it deletes the pod, but the
			// line can reach termlab after the DELETED does (CI: a run whose
			// recorder stopped first read as "no TearDown succeeded").
			wctx, cancel := lab.Within(ctx, journalDeliveryWithin)
			_, err := r.Rec.WaitJournal(wctx, "UnmountVolume.TearDown succeeded for volume "+volume, func(e evidence.JournalEntry) bool {
				return unmountSucceeded(e, uid)
			})
			cancel()
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
		}
		return lookMount(ctx, r, worker, dir, "released, the object gone: the volume unmounted")
	})
}

// lookMount records a look at the node's mount table and the holder; what
// it saw is for the claims to judge.
func lookMount(ctx context.Context, r *lab.Run, node cluster.Node, dir, why string) error {
	_, err := r.LookMount(ctx, node, dir, why)
	return r.Unobserved(ctx, err)
}
