// Package kwoklab is lab:kwok — do kwok fake nodes delete pods the way a
// kubelet does?
//
// The same two deletion scenarios run side by side: on the first real worker
// (the kubelet: the reference) and on kwok fake nodes under each stage set of
// manifests/kwok (faithful, kwok-v0.8-fast, kwok-v0.7-fast; the pod label
// termlab.dev/stage-set picks the set). Scenario "finalizer": an ordinary
// delete of a pod with a finalizer nobody removes, then a force delete, then
// the lab removes the finalizer. Scenario "plain": an ordinary delete of a pod
// without finalizers. Every pod's watch events are recorded; the claims and
// the fidelity table compare each fake node's sequence of deletion-relevant
// transitions with the kubelet's.
package kwoklab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/internal/report"
)

// Finalizer is the finalizer of scenario "finalizer" (kwok-finalizer.yaml).
const Finalizer = "lab.example.com/cleanup"

// Kubelet names the real worker among the targets.
const Kubelet = "kubelet"

// Targets are where each scenario runs: the real worker (the reference),
// then kwok's stage sets.
var Targets = append([]string{Kubelet}, kwok.StageSets...)

// Scenario is one deletion the lab plays on every target.
type Scenario struct {
	Name     string // pod name prefix and claim id part
	Manifest string // in manifests/pods
	Title    string
	// Finalizer: the pod carries Finalizer; after the ordinary delete has
	// played out the lab force-deletes it, then removes the finalizer.
	Finalizer bool
}

// Scenarios are the lab's deletions, in report order.
var Scenarios = []Scenario{
	{Name: "finalizer", Manifest: "kwok-finalizer.yaml", Finalizer: true,
		Title: "ordinary delete with a finalizer, then force delete, then finalizer removal"},
	{Name: "plain", Manifest: "kwok-plain.yaml",
		Title: "ordinary delete without finalizers"},
}

// PodName is the pod of a scenario on a target, e.g. finalizer-kwok-v08-fast.
func PodName(scenario, target string) string {
	return scenario + "-" + strings.ReplaceAll(target, ".", "")
}

// Bounds of the waits, long enough to record what happens even when a claim
// rejects it; the claims' own bounds are in claims.go.
const (
	readyWithin   = 90 * time.Second       // pod Ready after create
	playOutWithin = 45 * time.Second       // after the ordinary delete: the pod's 30 s grace + 15 s
	quietFor      = 3 * time.Second        // no new event for this long: the stages (or the kubelet) are done
	quietWithin   = 20 * time.Second       // bound of a quiet wait
	deletedWithin = 10 * time.Second       // DELETED after the finalizer is removed
	probeEvery    = 250 * time.Millisecond // crictl probes on the real worker
)

// StageSetsFile is where the run records kwok's state and the Stage objects it found.
const (
	StageSetsFile = "kwok/status.json"
	StagesFile    = "kwok/stages.yaml"
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "kwok",
	Question:  "Do kwok fake nodes delete pods the way a kubelet does? The same deletions — with a finalizer (ordinary, then force, then finalizer removal) and without — on a real worker and on fake nodes under three stage sets side by side: which sets match the kubelet transition for transition, and where do the others part from it?",
	Summary:   "which kwok stage sets delete pods transition for transition like a real kubelet",
	Predict:   "The same deletions on a real kubelet and on a kwok fake node: which kwok stage sets give the same transitions as the kubelet (deletionTimestamp, grace, finalizers, terminated container, phase, DELETED)?",
	Uses:      lab.Uses{Worker: 0, FakeNode: true},
	Manifests: []string{"kwok-finalizer.yaml", "kwok-plain.yaml"},
	ByHand: []lab.HandStep{
		{Title: "create the pods on a real worker and on fake nodes (label termlab.dev/stage-set picks the kwok stages)",
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/kwok-finalizer.yaml  # once per node kind and stage set; the lab sets name, node, labels and image"},
			See: []string{"kubectl get pods -n {ns} -o wide -L termlab.dev/stage-set"}},
		{Title: "ordinary delete of every pod", Do: []string{"kubectl delete pods --all -n {ns} --wait=false"},
			See: []string{"kubectl get pods -n {ns} -w -o custom-columns=POD:.metadata.name,DELETION:.metadata.deletionTimestamp,GRACE:.metadata.deletionGracePeriodSeconds,FINALIZERS:.metadata.finalizers,PHASE:.status.phase"}},
		{Title: "force delete the pods a finalizer holds", Do: []string{"kubectl delete pods --all -n {ns} --force --grace-period=0 --wait=false"},
			See: []string{"kubectl get pods -n {ns} -o wide"}},
		{Title: "remove the finalizers", Do: []string{"for p in $(kubectl get pods -n {ns} -o name); do kubectl patch $p -n {ns} --type=merge -p '{\"metadata\":{\"finalizers\":null}}'; done"},
			See: []string{"kubectl get pods -n {ns}"}},
	},
	Steps:  steps,
	Claims: Claims,
	Answer: Answer,
	Report: Report,
}

// Run runs lab:kwok on the cluster.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

// pod is one scenario on one target.
type pod struct {
	name     string
	scenario Scenario
	target   string
	node     recorder.Node // the real worker; nil on a fake node
}

func (p pod) fake() bool { return p.node == nil }

func steps(ctx context.Context, r *lab.Run) error {
	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	if len(r.Env.FakeNodes) == 0 {
		return errors.New("lab:kwok needs kwok fake nodes, the cluster has none (" + invocation.Command("cluster:up") + " makes them)")
	}
	var pods []pod
	for _, sc := range Scenarios {
		for _, t := range Targets {
			p := pod{name: PodName(sc.Name, t), scenario: sc, target: t}
			if t == Kubelet {
				p.node = worker
			}
			pods = append(pods, p)
		}
	}

	err = r.Step(ctx, "check kwok: a Ready controller and fake nodes, and every stage set installed", func(ctx context.Context) error {
		return checkKwok(ctx, r)
	})
	if err != nil {
		return err
	}

	containers := make([]string, len(pods)) // the real pods' container IDs, by index
	err = r.Step(ctx, fmt.Sprintf("create %d pods side by side (%s on %s, the rest on fake nodes) and wait until each is Ready", len(pods), strings.Join(podNames(pods, func(p pod) bool { return !p.fake() }), ", "), worker), func(ctx context.Context) error {
		// Created one after the other (a few ms each), so the record lists
		// them in order, the reference first; then all wait at once.
		for _, p := range pods {
			place := lab.Placement{Node: worker.String()}
			if p.fake() {
				place = lab.Placement{Fake: true}
			}
			if _, err := r.CreatePodEdited(ctx, p.scenario.Manifest, place, func(o *corev1.Pod) error {
				o.Name = p.name
				if p.fake() {
					return kwok.PlaceOnFakeNode(o, p.target)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return each(ctx, pods, func(ctx context.Context, i int, p pod) error {
			e, err := r.WaitRunning(ctx, p.name, readyWithin)
			if err != nil {
				return err
			}
			if c, ok := e.Container(""); ok {
				containers[i] = c.ContainerID
			}
			return nil
		})
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, "ordinary delete of every pod at once (no grace period given: the pods' 30 s apply), and let each play out", func(ctx context.Context) error {
		return each(ctx, pods, func(ctx context.Context, i int, p pod) error {
			if err := r.Delete(ctx, p.name); err != nil {
				return err
			}
			wctx, cancel := lab.Within(ctx, playOutWithin)
			defer cancel()
			if !p.fake() && containers[i] != "" {
				// Node evidence no fake node has: the container itself stops.
				o, err := r.Rec.WaitContainer(wctx, p.node, p.name, containers[i], "stop", probeEvery, func(o evidence.ContainerObservation) bool {
					return o.Stopped()
				})
				if err == nil {
					r.Infof("crictl on %s: container of %s %s (exit %s)", p.node, p.name, o.State, exitOf(o.ExitCode))
				}
				if err := r.Unobserved(ctx, err); err != nil {
					return err
				}
			}
			if !p.scenario.Finalizer {
				_, err := r.Rec.WaitPod(wctx, p.name, "be deleted", isDeleted)
				if err := r.Unobserved(ctx, err); err != nil {
					return err
				}
			} else {
				// Played out: grace collapsed to 0 (the kubelet's own final
				// delete, or kwok's) or gone; then nothing more for a while.
				_, err := r.Rec.WaitPod(wctx, p.name, "reach deletionGracePeriodSeconds 0 or be deleted", func(e evidence.PodEvent) bool {
					return isDeleted(e) || (e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0)
				})
				if err := r.Unobserved(ctx, err); err != nil {
					return err
				}
				if err := r.Unobserved(ctx, quiet(ctx, r, p.name)); err != nil {
					return err
				}
			}
			return snapshotIfThere(ctx, r, p.name)
		})
	})
	if err != nil {
		return err
	}

	held := slices.DeleteFunc(slices.Clone(pods), func(p pod) bool { return !p.scenario.Finalizer })
	err = r.Step(ctx, fmt.Sprintf("force delete (gracePeriodSeconds 0) of the finalizer pods still there, then watch each until quiet for %s", quietFor), func(ctx context.Context) error {
		return each(ctx, held, func(ctx context.Context, _ int, p pod) error {
			if gone(r, p.name) {
				r.Rec.Notef("pod %s (%s) was already DELETED before the force delete, although the lab never removed its finalizer", p.name, p.target)
				r.Infof("%s: already DELETED, its finalizer never removed by the lab", p.name)
				return nil
			}
			if err := r.ForceDelete(ctx, p.name); err != nil {
				return err
			}
			if err := r.Unobserved(ctx, quiet(ctx, r, p.name)); err != nil {
				return err
			}
			return snapshotIfThere(ctx, r, p.name)
		})
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, "remove the finalizer of the finalizer pods still there, and wait for DELETED", func(ctx context.Context) error {
		return each(ctx, held, func(ctx context.Context, _ int, p pod) error {
			if gone(r, p.name) {
				return nil
			}
			if err := r.RemoveFinalizers(ctx, p.name); err != nil {
				return err
			}
			wctx, cancel := lab.Within(ctx, deletedWithin)
			_, err := r.Rec.WaitPod(wctx, p.name, "be deleted", isDeleted)
			cancel()
			if err := r.Unobserved(ctx, err); err != nil {
				return err
			}
			_, err = r.Rec.Snapshot(ctx, p.name)
			return err
		})
	})
}

func exitOf(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func isDeleted(e evidence.PodEvent) bool { return e.Type == "DELETED" }

func gone(r *lab.Run, name string) bool {
	_, ok := r.Rec.Record().Deleted(name)
	return ok
}

func snapshotIfThere(ctx context.Context, r *lab.Run, name string) error {
	if gone(r, name) {
		return nil
	}
	_, err := r.Rec.Snapshot(ctx, name)
	return err
}

// quiet waits on the watch until the pod has had no new event for quietFor
// (or is deleted): whatever the kubelet or kwok does to its current state has
// been done. It gives up after quietWithin with a deadline error.
func quiet(ctx context.Context, r *lab.Run, name string) error {
	bound, cancel := context.WithTimeout(ctx, quietWithin)
	defer cancel()
	last := time.Now()
	for {
		wctx, cancelWait := context.WithTimeout(bound, quietFor)
		e, err := r.Rec.WaitPod(wctx, name, "change", func(e evidence.PodEvent) bool { return e.ObservedAt.After(last) })
		cancelWait()
		switch {
		case err == nil && e.Type == "DELETED":
			return nil
		case err == nil:
			last = e.ObservedAt
		case bound.Err() != nil && ctx.Err() == nil:
			return fmt.Errorf("pod %s was still changing %s after the lab began to wait for it to be quiet: %w", name, quietWithin, context.DeadlineExceeded)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil // quiet for quietFor
		default:
			return err
		}
	}
}

// each runs fn for every pod at once and joins the errors.
func each(ctx context.Context, pods []pod, fn func(ctx context.Context, i int, p pod) error) error {
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() { errs[i] = fn(ctx, i, p) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func podNames(pods []pod, keep func(pod) bool) []string {
	var out []string
	for _, p := range pods {
		if keep(p) {
			out = append(out, p.name)
		}
	}
	return out
}

var stageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}

// checkKwok records kwok's state and the Stage objects of every set, and
// stops the run when a set is missing: its pods would never run.
func checkKwok(ctx context.Context, r *lab.Run) error {
	st, err := kwok.Status(ctx, r.Env.RESTConfig)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if _, err := r.Rec.WriteFile(StageSetsFile, append(b, '\n')); err != nil {
		return err
	}
	if dyn, err := dynamic.NewForConfig(r.Env.RESTConfig); err == nil {
		list, err := dyn.Resource(stageGVR).List(ctx, metav1.ListOptions{LabelSelector: kwok.StageSetLabel})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("listing kwok's Stage objects: %w", err)
		}
		if err == nil {
			for i := range list.Items {
				list.Items[i].SetManagedFields(nil)
			}
			y, err := yaml.Marshal(list.UnstructuredContent())
			if err != nil {
				return err
			}
			if _, err := r.Rec.WriteFile(StagesFile, y); err != nil {
				return err
			}
		}
	}
	sets, _ := json.Marshal(st.StageSets)
	r.Rec.Notef("%s%s", stageSetsNote, sets)
	var missing []string
	for _, set := range kwok.StageSets {
		if len(st.StageSets[set]) == 0 {
			missing = append(missing, set)
		}
	}
	if !st.Healthy() {
		return fmt.Errorf("kwok is not healthy: %s", strings.TrimSpace(st.String()))
	}
	if len(missing) > 0 {
		return fmt.Errorf("kwok stage sets %v are not installed (%s installs them)", missing, invocation.Command("cluster:up"))
	}
	r.Infof("kwok %s: %d fake nodes Ready, stage sets %v", st.Version, st.ReadyFakeNodes(), st.PodStageSets())
	return nil
}

// stageSetsNote begins the note that records the installed stage sets as
// JSON (set → Stage names); the claims read it back.
const stageSetsNote = "kwok stage sets installed (set → Stage objects): "

// installedStageSets reads the stage sets the run recorded.
func installedStageSets(rec *evidence.Record) map[string][]string {
	for _, n := range rec.Notes {
		if rest, ok := strings.CutPrefix(n.Text, stageSetsNote); ok {
			var m map[string][]string
			if json.Unmarshal([]byte(rest), &m) == nil {
				return m
			}
		}
	}
	return nil
}
