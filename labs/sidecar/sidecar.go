// Package sidecar is lab:sidecar — the shutdown order of native sidecars.
//
// Pod sidecars has a main container (app) and two native sidecars (init
// containers with restartPolicy Always: sidecar-a, started first, then
// sidecar-b), each the heartbeat workload with a preStop. The lab deletes it
// and records, from the workloads' own logs and crictl, when each container
// got SIGTERM and exited. Pod sidecars-overrun is the same pod whose main
// container outlasts the 6 s grace period: the lab records how soon the
// sidecars are ended after the main container is killed.
//
// The preStops are the native `sleep` action. The heartbeat image holds one
// binary and no shell, and an exec hook's output never reaches the
// container's log (the kubelet drops it unless the hook fails), so no hook
// can log its own start. What the lab sees instead: the kubelet's Killing
// event, which it records for each container right before running that
// container's preStop (killContainer in pkg/kubelet/kuberuntime), and each
// workload's own SIGTERM line, which can come only after its preStop ended.
package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
)

// The pods and their containers, as manifests/pods/sidecars*.yaml name them.
const (
	podOrdered = "sidecars"
	podOverrun = "sidecars-overrun"
	mainName   = "app"
	sidecarA   = "sidecar-a" // started first: ends last
	sidecarB   = "sidecar-b"
)

// sidecarsInStartOrder are the sidecars in spec order, the order the kubelet
// starts them in.
var sidecarsInStartOrder = []string{sidecarA, sidecarB}

// containersOf are every container of either pod, in start order.
var containersOf = []string{sidecarA, sidecarB, mainName}

// exitOrder is the order the containers of either pod are meant to exit in.
var exitOrder = []string{mainName, sidecarB, sidecarA}

// thePods are the lab's pods with their manifests, in the order they are made.
var thePods = []struct{ name, manifest string }{
	{podOrdered, "sidecars.yaml"},
	{podOverrun, "sidecars-overrun.yaml"},
}

// What the manifests set, which the claims' bounds are made of.
const (
	// mainPreStop and sidecarPreStop are the preStop sleeps. The sidecars'
	// is the longer, so a preStop run only when the sidecar's turn came
	// would show as a 3 s gap before its SIGTERM.
	mainPreStop    = 2 * time.Second
	sidecarPreStop = 3 * time.Second
	// mainTermDelay is how long app keeps going after SIGTERM in pod
	// sidecars: the time the sidecars have to wait for it.
	mainTermDelay = 3 * time.Second
	// sidecarTermDelay is each sidecar's delay from SIGTERM to its exit 0:
	// within the kubelet's 2 s minimum grace, so a sidecar ended with that
	// short grace still exits by itself.
	sidecarTermDelay = 1 * time.Second
	// overrunGrace is terminationGracePeriodSeconds of pod sidecars-overrun,
	// whose app wants 60 s after SIGTERM.
	overrunGrace       = 6 * time.Second
	overrunMainWants   = 60 * time.Second
	orderedGracePeriod = 30 * time.Second
)

// Bounds of the waits: long enough to record what happens even when a claim
// rejects it.
const (
	readyWithin = 90 * time.Second
	// stopWait: a kubelet that made a sidecar wait out the pod's whole 30 s
	// grace (kubernetes #125880) is still recorded.
	stopWait   = 45 * time.Second
	probeEvery = 250 * time.Millisecond
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "sidecar",
	Question:  "A pod with a main container and two native sidecars is deleted. Do the sidecars get SIGTERM only after the main container exited, in reverse start order, with their preStop run alongside the main container's — and when the main container uses up the grace period, how soon are the sidecars ended?",
	Summary:   "native sidecars get SIGTERM only after the main container exited, in reverse start order; when it overruns the grace period they are ended together right after",
	Predict:   "A pod's main container takes 5 s to stop (a 2 s preStop, then 3 s after SIGTERM); its two sidecars each have a 3 s preStop. When does each sidecar get SIGTERM, in which order — and if the main container instead outlasts a 6 s grace period, what happens to the sidecars?",
	Uses:      lab.Uses{Worker: 0, NeedsNodeAccess: true},
	Manifests: []string{"sidecars.yaml", "sidecars-overrun.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create pods sidecars and sidecars-overrun on a real worker and wait until they are Ready", Pod: podOrdered,
			Do: []string{"kubectl create -n {ns} -f manifests/pods/sidecars.yaml -f manifests/pods/sidecars-overrun.yaml  # the lab also sets the workload image, nodeSelector kubernetes.io/hostname={node} and its run labels",
				"kubectl wait pod/sidecars pod/sidecars-overrun -n {ns} --for=condition=Ready --timeout=90s"},
			See: []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.namespace={ns}"}},
		{Title: "delete both pods (an ordinary delete: each pod's own grace period)", Pod: podOrdered,
			Do:  []string{"kubectl delete pod sidecars -n {ns} --wait=false", "kubectl delete pod sidecars-overrun -n {ns} --wait=false"},
			See: []string{"kubectl get events -n {ns} --field-selector reason=Killing", "docker exec {node} crictl ps -a --label io.kubernetes.pod.namespace={ns}"}},
		{Title: "read each container's SIGTERM and exit", Pod: podOrdered,
			See: []string{"for id in $(docker exec {node} crictl ps -aq --label io.kubernetes.pod.namespace={ns}); do docker exec {node} crictl inspect -o go-template --template '{{.status.metadata.name}} exit={{.status.exitCode}} finished={{.status.finishedAt}}' $id; docker exec {node} crictl logs $id | grep -E 'signal|exit'; done"}},
	},
	Steps:   steps,
	Claims:  Claims,
	Report:  Report,
	Moments: Moments,
	Answer:  Answer,
}

// Run runs lab:sidecar on the cluster.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

// withSidecarImages gives the init containers the cluster's workload image
// too (the lab runner sets it on the main containers only).
func withSidecarImages(image string) func(*corev1.Pod) error {
	return func(p *corev1.Pod) error {
		for i := range p.Spec.InitContainers {
			if image != "" {
				p.Spec.InitContainers[i].Image = image
			}
		}
		return nil
	}
}

// containerIDs maps each container's name to its ID, as the pod's status reports it.
func containerIDs(e evidence.PodEvent) map[string]string {
	ids := map[string]string{}
	for _, c := range append(append([]evidence.ContainerState(nil), e.InitContainers...), e.Containers...) {
		if c.ContainerID != "" {
			ids[c.Name] = c.ContainerID
		}
	}
	return ids
}

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	ids := map[string]map[string]string{} // pod → container → ID
	err = r.Step(ctx, fmt.Sprintf("create pods %s and %s on %s and wait until they are Ready", podOrdered, podOverrun, worker), func(ctx context.Context) error {
		for _, p := range thePods {
			if _, err := r.CreatePodEdited(ctx, p.manifest, lab.Placement{Node: worker.String()}, withSidecarImages(r.Env.WorkloadImage)); err != nil {
				return err
			}
		}
		for _, p := range thePods {
			e, err := r.WaitRunning(ctx, p.name, readyWithin)
			if err != nil {
				return err
			}
			ids[p.name] = containerIDs(e)
			for _, name := range containersOf {
				if ids[p.name][name] == "" {
					return fmt.Errorf("pod %s is Ready but its status names no container %s", p.name, name)
				}
				// From now on every container's log is streamed: the kubelet
				// removes a deleted pod's containers soon after they exit.
				r.Rec.FollowLogs(worker, p.name, ids[p.name][name])
			}
			if _, err := r.Rec.Snapshot(ctx, p.name); err != nil {
				return err
			}
			for _, name := range containersOf {
				_, err := r.Rec.ObserveContainer(ctx, worker, p.name, ids[p.name][name])
				if err := r.Unobserved(ctx, err); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, "delete both pods (an ordinary delete: each pod's own grace period)", func(ctx context.Context) error {
		for _, p := range thePods {
			if err := r.Delete(ctx, p.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, "wait for every container to stop", func(ctx context.Context) error {
		// One poller per pod, each waiting for the containers in the order
		// they are meant to exit, so that a probe runs while each is seen
		// exited: the kubelet removes a deleted pod's containers soon after
		// the last one exits. (Six pollers at once slowed every crictl call
		// to 2 s on this 2-core machine and missed app's kill.)
		type waited struct {
			pod, name string
			obs       evidence.ContainerObservation
			err       error
		}
		var all []*waited
		var wg sync.WaitGroup
		for _, p := range thePods {
			var queue []*waited
			for _, name := range exitOrder {
				w := &waited{pod: p.name, name: name}
				queue = append(queue, w)
				all = append(all, w)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				wctx, cancel := lab.Within(ctx, stopWait)
				defer cancel()
				for _, w := range queue {
					w.obs, w.err = r.Rec.WaitContainer(wctx, worker, w.pod, ids[w.pod][w.name], "stop", probeEvery, func(o evidence.ContainerObservation) bool {
						return o.Stopped()
					})
				}
			}()
		}
		wg.Wait()
		var errs []error
		for _, w := range all {
			if w.err == nil {
				r.Infof("%s/%s: %s", w.pod, w.name, w.obs.Describe())
			}
			errs = append(errs, r.Unobserved(ctx, w.err))
		}
		return errors.Join(errs...)
	})
}
