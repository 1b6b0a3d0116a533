// Package scale is lab:scale — what does deleting a namespace of thousands of
// pods, some held by finalizers, look like on kwok fake nodes, and does
// termlab's own record of it stay complete?
//
// The lab creates its own kwok fake nodes (labelled with the run id, removed
// on every exit path), creates the pods on them, waits until every one is
// Running, deletes the namespace, waits until every pod without a finalizer
// is gone and every finalizer pod is held (deletionGracePeriodSeconds 0),
// releases the finalizers and waits until the namespace is gone. LISTs of the
// pods before the delete and at the end are the API server's own word to
// check the watch's record against.
package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
)

// Finalizer is the finalizer the lab puts on every FinalizerEvery-th pod and
// removes itself once the namespace is being deleted.
const Finalizer = "lab.example.com/release-me"

// Manifest is the lab's pod (manifests/pods/scale.yaml).
const Manifest = "scale.yaml"

// Size is how big a run is.
type Size struct {
	FakeNodes int `json:"fake_nodes"`
	Pods      int `json:"pods"`
	// FinalizerPercent of the pods carry Finalizer (every (100/p)-th pod).
	FinalizerPercent int `json:"finalizer_percent"`
	// StageSet plays the pods (internal/kwok: faithful, kwok-v0.8-fast, …).
	StageSet string `json:"stage_set"`
	// Limits are the control plane's request limits asked for (-limits:
	// default or raised); the run records those it found (limitsNote).
	Limits string `json:"limits,omitempty"`
}

// Default is lab:scale's size: the one issue #14 asks for.
var Default = Size{FakeNodes: 100, Pods: 5000, FinalizerPercent: 20, StageSet: kwok.SetFaithful}

// Quick is the size lab:all, the workshop and the end-to-end tests run: the
// same experiment in well under a minute (see README.md).
var Quick = Size{FakeNodes: 10, Pods: 300, FinalizerPercent: 20, StageSet: kwok.SetFaithful}

var (
	sizeMu sync.Mutex
	size   = Quick
)

// Use sets the size of the next runs of the lab (lab:scale's flags); until
// it is called, runs use Quick.
func Use(s Size) error {
	if err := s.Validate(); err != nil {
		return err
	}
	sizeMu.Lock()
	defer sizeMu.Unlock()
	size = s
	return nil
}

func current() Size {
	sizeMu.Lock()
	defer sizeMu.Unlock()
	return size
}

// Validate says what is wrong with a size.
func (s Size) Validate() error {
	switch {
	case s.FakeNodes < 1 || s.FakeNodes > 1000:
		return fmt.Errorf("lab:scale: %d fake nodes: want 1–1000", s.FakeNodes)
	case s.Pods < 1 || s.Pods > 100000:
		return fmt.Errorf("lab:scale: %d pods: want 1–100000", s.Pods)
	case s.Pods > s.FakeNodes*podsPerNode:
		return fmt.Errorf("lab:scale: %d pods do not fit on %d fake nodes of %d pods each", s.Pods, s.FakeNodes, podsPerNode)
	case s.FinalizerPercent < 0 || s.FinalizerPercent > 100:
		return fmt.Errorf("lab:scale: %d %% with a finalizer: want 0–100", s.FinalizerPercent)
	case !slices.Contains(kwok.StageSets, s.StageSet):
		return fmt.Errorf("lab:scale: unknown stage set %q (have %v)", s.StageSet, kwok.StageSets)
	}
	if _, err := cluster.ParseLimits(s.Limits); err != nil {
		return fmt.Errorf("lab:scale: %w", err)
	}
	return nil
}

// HasFinalizer says whether pod i carries Finalizer: spread evenly, every
// (100/percent)-th pod, so the held pods sit on every node.
func (s Size) HasFinalizer(i int) bool {
	if s.FinalizerPercent <= 0 {
		return false
	}
	return (i*s.FinalizerPercent)%100 < s.FinalizerPercent
}

// Finalized is how many pods of the size carry the finalizer.
func (s Size) Finalized() int {
	n := 0
	for i := 0; i < s.Pods; i++ {
		if s.HasFinalizer(i) {
			n++
		}
	}
	return n
}

// podsPerNode is the pod capacity of a kwok fake node (internal/kwok.FakeNode).
const podsPerNode = 110

// PodName is the i-th pod.
func PodName(i int) string { return fmt.Sprintf("scale-%05d", i) }

// NodeName is the run's i-th fake node.
func NodeName(runID string, i int) string { return fmt.Sprintf("scale-%s-%03d", runID, i) }

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "scale",
	Question:  "What does deleting a namespace of thousands of pods on kwok fake nodes look like, some held by finalizers, under a chosen stage set — how fast is each stage, do the finalizer pods stay until released, how soon is the namespace gone after the last release — and does termlab's record hold every pod's ADDED and DELETED exactly once?",
	Summary:   "a namespace of thousands of kwok pods deleted, finalizers released, the record checked complete against LISTs",
	Uses:      lab.Uses{Worker: 0, FakeNode: true, ManyPods: true},
	Manifests: []string{Manifest},
	ByHand: []lab.HandStep{
		{Title: "create fake nodes for kwok (annotation kwok.x-k8s.io/node=fake, labelled with the run id)",
			Do:  []string{"for i in $(seq 0 99); do kubectl create -f - <<< \"$(go run ... )\"; done  # the lab sends internal/kwok.FakeNode with the run-id label"},
			See: []string{"kubectl get nodes -l termlab.dev/run-id"}},
		{Title: "create the pods, every fifth with a finalizer, and wait until all run",
			Do:  []string{"kubectl create -n {ns} -f manifests/pods/scale.yaml  # 5,000 times, named scale-00000…; the lab sets node selector, toleration, stage set and finalizer"},
			See: []string{"kubectl get pods -n {ns} --no-headers | awk '{print $3}' | sort | uniq -c"}},
		{Title: "delete the namespace", Do: []string{"kubectl delete namespace {ns} --wait=false"},
			See: []string{"kubectl get pods -n {ns} --no-headers | wc -l", "kubectl get namespace {ns} -o jsonpath='{.status.conditions}'"}},
		{Title: "release the finalizers", Do: []string{"for p in $(kubectl get pods -n {ns} -o name); do kubectl patch $p -n {ns} --type=merge -p '{\"metadata\":{\"finalizers\":null}}'; done"},
			See: []string{"kubectl get namespace {ns}"}},
	},
	Steps:      steps,
	StepsBound: func() lab.Bound { return stepsBound(current()) },
	Claims:     Claims,
	Answer:     Answer,
	Report:     Report,
	Moments:    Moments,
}

// Moments are the picture's marks besides the lab's actions: the namespace
// gone, as its watch saw it.
func Moments(rec *evidence.Record) []report.Marker {
	f := readKept(rec)
	if !f.goneOK || f.gone.AlreadyGone {
		return nil
	}
	return []report.Marker{{At: f.gone.ObservedAt, Label: "namespace gone (its DELETED)"}}
}

// Run runs lab:scale on the cluster at the size set by Use.
func Run(ctx context.Context, env *cluster.Env, opts lab.Options) (*report.Summary, error) {
	return lab.Execute(ctx, env, Definition, opts)
}

// Notes the run writes and the claims read back (JSON after the prefix).
const (
	sizeNote      = "lab:scale size: "
	namespaceNote = "namespace gone (watch DELETED): "
	usageNote     = "termlab process during the run: "
	limitsNote    = "control plane's limits: "
)

// orDefault names the limits asked for ("" is the default).
func orDefault(limits string) string {
	if limits == "" {
		return string(cluster.LimitsDefault)
	}
	return limits
}

// Usage is what the termlab process (the recorder and the lab's own
// requests) spent during the run, and what the recorder wrote.
type Usage struct {
	CPUSeconds   float64          `json:"cpu_seconds"`
	WallSeconds  float64          `json:"wall_seconds"`
	PeakRSSMiB   float64          `json:"peak_rss_mib"`
	BytesWritten int64            `json:"bytes_written"`
	Files        map[string]int64 `json:"files"`
	PodEvents    int              `json:"pod_events"`
}

// NamespaceGone is when the lab's namespace watch saw the namespace DELETED.
type NamespaceGone struct {
	Namespace       string    `json:"namespace"`
	ObservedAt      time.Time `json:"observed_at"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	// AlreadyGone: a GET answered NotFound before the watch began; ObservedAt
	// is then an upper bound.
	AlreadyGone bool `json:"already_gone,omitempty"`
}

// Bounds of the lab's waits: long enough to record what happens even when a
// claim rejects it, and growing with the size: a floor of 5 pods/s at each
// stage. Deletion ran at 17–25 pods/s at 20,000 pods on a quiet machine
// here, and at 10 pods/s at 5,000 with a compile beside it: 20 pods/s (the
// floor before) cut that run in the middle of its deletion.
func waitFor(pods int) time.Duration { return time.Minute + time.Duration(pods)*perPod }

// perPod is each wait's allowance per pod: 5 pods/s.
const perPod = 200 * time.Millisecond

// stallAfter ends a wait during which no pod event was recorded for that long,
// well before its bound: at 5 pods/s a stuck 20,000-pod run would otherwise
// wait over an hour to say so (see stalled for the quiet a healthy run has).
const stallAfter = 2 * time.Minute

// stalled counts any event of the run's pods as progress, not only the
// ones the wait is for: in the 20,000-pod run 20261205-084054-bbde no pod
// was DELETED for 70 s while the namespace controller's DeleteCollection
// ran into the API server's 60 s request timeout, but no two pod events
// were more than 4 s apart in the whole run.
func stalled(what string) lab.Stall {
	return lab.Stall{What: what, After: stallAfter, Why: "a healthy 20,000-pod run never went 4 s without a pod event (70 s without a DELETED, behind a 60 s request timeout): 2 min without any is not slowness"}
}

// stepsBound is the sum of the steps' own bounds at the size: the runner's
// fixed 10 minutes cut a 20,000-pod run in the middle of its deletion.
func stepsBound(sz Size) lab.Bound {
	send := func(n int) time.Duration { return time.Duration(n) * time.Second / requestRate }
	allow := waitFor(sz.FakeNodes) + // fake nodes Ready
		send(sz.Pods) + waitFor(sz.Pods) + // the creates, every pod Running
		listCaughtUpWithin + // the LIST and the record caught up
		waitFor(sz.Pods) + // every pod without a finalizer DELETED
		send(sz.Finalized()) + waitFor(sz.Pods) + // the releases, the rest DELETED and the namespace gone
		time.Minute // the final LIST
	return lab.Bound{
		What:  fmt.Sprintf("all of lab:scale's steps at %d pods on %d fake nodes", sz.Pods, sz.FakeNodes),
		Allow: allow,
		Why:   fmt.Sprintf("the sum of each step's bound: the requests at %d/s, and each wait 60 s + %s per pod (a floor of 5 pods/s)", requestRate, perPod),
	}
}

// aheadOfRunning is how many created pods may be not yet Running: beyond it
// the creates wait for the cluster. Unbounded, a 50,000-pod run on 500 fake
// nodes (20261205-210754-e4d0) created every pod in 9 min while kwok made
// them Running over 38: kwok's queue held pod states minutes old, it played
// stages again on them (141,813 status patches where 100,000 do) and sent
// no DELETE in 12 min of the namespace delete. 3,000 keeps the scheduler
// at its limit through the pace claim's first windows (30 s at 50/s is
// 1,500 pods) and holds kwok's queue to about 1.5 min of its work (~35/s).
const aheadOfRunning = 3000

// window holds the creates to a number of pods not yet Running: take before
// a create, give at a pod's first Running.
type window chan struct{}

func newWindow(n int) window { return make(window, n) }

// take waits for a place, or for ctx to end (its cause is the error). An
// ended ctx wins over a free place: select picks at random among ready cases,
// and no create may go out after the wait for Running has ended.
func (w window) take(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case w <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// give frees a place; it never blocks the record's reader. A pod's create
// took a place before the pod existed, so there is one to free.
func (w window) give() {
	select {
	case <-w:
	default:
	}
}

// listCaughtUpWithin bounds the wait for the record to hold every listed
// pod's state: the watch is at most a moment behind the LIST.
const listCaughtUpWithin = 30 * time.Second

// workers is how many requests the lab has in flight at once, and
// requestRate the most it sends per second. Twice what this machine runs
// pods at (≈50/s Running) keeps the API server fed without a storm: at 320
// creates/s the API server, on two cores, closed watches it could not serve
// in time (the recorder's among them: a gap).
const (
	workers     = 16
	requestRate = 100
)

func steps(ctx context.Context, r *lab.Run) (err error) {
	sz := current()
	if err := sz.Validate(); err != nil {
		return err
	}
	b, _ := json.Marshal(sz)
	r.Rec.Notef("%s%s", sizeNote, b)
	r.Infof("size: %d fake nodes, %d pods (%d with finalizer %s), stage set %s", sz.FakeNodes, sz.Pods, sz.Finalized(), Finalizer, sz.StageSet)
	// The limits the control plane runs with, from its own command lines:
	// the pace claim weighs each component's requests against them.
	if limits, lerr := cluster.ReadLimits(ctx, r.Env.Client); lerr != nil {
		r.Log.Warnf("%v: the pace claim will say so", lerr)
	} else {
		if p, perr := kwok.ParallelismOf(ctx, r.Env.Client); perr != nil {
			r.Log.Warnf("%v: the report will not say how many requests kwok sends at once", perr)
		} else {
			limits.KwokPodPlayParallelism, limits.KwokNodeLeaseParallelism = p.PodPlay, p.NodeLease
		}
		b, _ := json.Marshal(limits)
		r.Rec.Notef("%s%s", limitsNote, b)
		r.Infof("limits (%s): scheduler %g requests/s (burst %d), controller-manager %g/s (burst %d); API server in flight %d, mutating %d, priority and fairness %t, collection delete workers %d; kwok plays %d pod stages and renews %d node leases at once",
			orDefault(sz.Limits), limits.Scheduler.QPS, limits.Scheduler.Burst, limits.ControllerManager.QPS, limits.ControllerManager.Burst,
			limits.MaxRequestsInflight, limits.MaxMutatingRequestsInflight, limits.PriorityAndFairness, limits.DeleteCollectionWorkers, limits.KwokPodPlayParallelism, limits.KwokNodeLeaseParallelism)
	}

	// A raised run is compared with the latest default one of its size.
	if sz.Pods >= paceMinPods && orDefault(sz.Limits) == string(cluster.LimitsRaised) {
		if err := noteDefaultRun(r.Rec, filepath.Dir(filepath.Dir(r.Dir)), sz); err != nil {
			r.Log.Warnf("reading the default runs in results/scale: %v: the deletion pace claim will not be checked", err)
		}
	}

	// The lab's own client, at requestRate: termlab's (50/s) would make the
	// creates measure the limiter, not the cluster.
	cfg := rest.CopyConfig(r.Env.RESTConfig)
	cfg.QPS, cfg.Burst = requestRate, requestRate
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	env := *r.Env
	env.Client = fast
	r.Env = &env // this run's requests (finalizer removal, cleanup) go through it too

	cpu0 := selfUsage()
	began := time.Now()

	defer func() {
		// A failed or cut run: its pods go at once, not over minutes.
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forceDeleteWithin(sz))
			defer cancel()
			if ferr := forceDeletePods(cctx, r); ferr != nil {
				r.Log.Warnf("force-deleting the run's pods: %v", ferr)
			}
		}
		// Every exit path: the run's fake nodes go. A killed run's are
		// removed by the next run's repair (internal/lab.RepairLeftovers).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := deleteNodes(cctx, r); err != nil {
			r.Log.Warnf("deleting the run's fake nodes: %v", err)
		}
	}()

	err = r.Step(ctx, fmt.Sprintf("create %d kwok fake nodes labelled with the run id and wait until kwok has them Ready", sz.FakeNodes), func(ctx context.Context) error {
		return createNodes(ctx, r, sz)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("create %d pods (%d with a finalizer) under the %s stage set and wait until every one is Running", sz.Pods, sz.Finalized(), sz.StageSet), func(ctx context.Context) error {
		return createPods(ctx, r, sz)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, "LIST the pods before the delete and wait until the record holds each listed state", func(ctx context.Context) error {
		return listCaughtUp(ctx, r, sz)
	})
	if err != nil {
		return err
	}

	finalized := map[string]bool{}
	for i := 0; i < sz.Pods; i++ {
		if sz.HasFinalizer(i) {
			finalized[PodName(i)] = true
		}
	}
	err = r.Step(ctx, "delete the namespace; wait until every pod without a finalizer is DELETED and every finalizer pod is held (deletionGracePeriodSeconds 0)", func(ctx context.Context) error {
		return deleteNamespace(ctx, r, sz, finalized)
	})
	if err != nil {
		return err
	}

	err = r.Step(ctx, fmt.Sprintf("release the %d finalizers and wait until every pod is DELETED and the namespace is gone", len(finalized)), func(ctx context.Context) error {
		return release(ctx, r, sz, finalized)
	})
	if err != nil {
		return err
	}

	return r.Step(ctx, "the final LIST of the run's pods, and what the termlab process spent", func(ctx context.Context) error {
		l, err := r.Rec.ListPods(ctx, "final: after the namespace is gone")
		if err != nil {
			return err
		}
		r.Infof("final LIST: %d pods", len(l.Pods))
		u := usage(r, cpu0, began)
		b, _ := json.Marshal(u)
		r.Rec.Notef("%s%s", usageNote, b)
		r.Infof("termlab process: %.1f s CPU over %.1f s, peak RSS %.0f MiB; the recorder wrote %.1f MiB (%d pod events)", u.CPUSeconds, u.WallSeconds, u.PeakRSSMiB, float64(u.BytesWritten)/(1<<20), u.PodEvents)
		return nil
	})
}

func fakeNode(r *lab.Run, i int) *corev1.Node {
	n := kwok.FakeNode(NodeName(r.ID, i))
	n.Labels[corev1.LabelHostname] = n.Name
	// Not kwok-node-*: no other lab's pod (nodeSelector type=kwok) may land
	// here, and cluster:up's own fake nodes stay as they are.
	delete(n.Labels, kwok.FakeNodeTypeLabel)
	delete(n.Labels, "app.kubernetes.io/managed-by")
	n.Labels[lab.RunIDLabel] = r.ID
	n.Labels[lab.LabLabel] = r.Lab
	return n
}

func createNodes(ctx context.Context, r *lab.Run, sz Size) error {
	sample, _ := yaml.Marshal(fakeNode(r, 0))
	path, err := r.Rec.WriteFile("inputs/nodes/"+NodeName(r.ID, 0)+".sent.yaml", sample)
	if err != nil {
		return err
	}
	req := map[string]any{"verb": "POST", "path": "/api/v1/nodes", "count": sz.FakeNodes,
		"names": NodeName(r.ID, 0) + " … " + NodeName(r.ID, sz.FakeNodes-1), "body_of_the_first": fakeNode(r, 0)}
	err = r.Act("create-nodes", fmt.Sprintf("%d fake nodes", sz.FakeNodes), req,
		fmt.Sprintf("kubectl create -f %s  # %d times, named %s…", path, sz.FakeNodes, NodeName(r.ID, 0)), func() error {
			return parallel(ctx, sz.FakeNodes, func(ctx context.Context, i int) error {
				_, err := r.Env.Client.CoreV1().Nodes().Create(ctx, fakeNode(r, i), metav1.CreateOptions{FieldManager: kwok.FieldManager})
				return err
			})
		})
	if err != nil {
		return fmt.Errorf("creating the fake nodes: %w", err)
	}
	var ready int
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitFor(sz.FakeNodes), true, func(ctx context.Context) (bool, error) {
		l, err := r.Env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: lab.RunIDLabel + "=" + r.ID})
		if err != nil {
			return false, nil
		}
		ready = 0
		for i := range l.Items {
			if cluster.NodeReady(&l.Items[i]) {
				ready++
			}
		}
		return ready == sz.FakeNodes, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d fake nodes Ready (is kwok running? %s): %w", ready, sz.FakeNodes, invocation.Command("cluster:status"), err)
	}
	r.Infof("%d fake nodes Ready (%s … %s)", sz.FakeNodes, NodeName(r.ID, 0), NodeName(r.ID, sz.FakeNodes-1))
	return nil
}

// forceDeletePods removes what a failed or cut run left of its pods at once:
// every pod with grace period 0, then the finalizers of those held. They are kwok pods,
// with no container anywhere, so a force delete hides no process; left to
// the namespace controller and kwok, tens of thousands would drain for many
// minutes after the run ended (about 40 a second here).
func forceDeletePods(ctx context.Context, r *lab.Run) error {
	sel := lab.RunIDLabel + "=" + r.ID
	pods := r.Env.Client.CoreV1().Pods(r.Namespace)
	var held []string
	n, err := lab.EachPod(ctx, pods, metav1.ListOptions{LabelSelector: sel}, func(p *corev1.Pod) error {
		if len(p.Finalizers) > 0 {
			held = append(held, p.Name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing the run's pods: %w", err)
	}
	if n == 0 {
		return nil
	}
	r.Infof("cleanup: force-deleting the run's %d pods (%d with a finalizer): kwok pods, no container to outlive them", n, len(held))
	zero := int64(0)
	req := map[string]any{"verb": "DELETE", "path": "/api/v1/namespaces/" + r.Namespace + "/pods", "labelSelector": sel, "gracePeriodSeconds": 0,
		"then": fmt.Sprintf("PATCH {\"metadata\":{\"finalizers\":null}} on the %d pods with a finalizer", len(held))}
	return r.Act("cleanup-force-delete-pods", fmt.Sprintf("the run's %d pods", n), req,
		fmt.Sprintf("kubectl delete pods -n %[1]s -l %[2]s --grace-period=0 --force --wait=false; for p in $(kubectl get pods -n %[1]s -l %[2]s -o name); do kubectl patch $p -n %[1]s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'; done", r.Namespace, sel), func() error {
			// The delete first: one request, and every pod without a
			// finalizer is gone (an interrupted run has seconds); then each
			// held pod goes as its finalizer does.
			if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: sel}); err != nil {
				return err
			}
			err := parallel(ctx, len(held), func(ctx context.Context, i int) error {
				_, err := pods.Patch(ctx, held[i], types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("removing the finalizers: %w", err)
			}
			return nil
		})
}

// forceDeleteWithin bounds forceDeletePods: the releases at the lab's rate,
// and the API server deleting every pod in one request (a few ms each).
func forceDeleteWithin(sz Size) time.Duration {
	return time.Minute + time.Duration(sz.Finalized())*time.Second/requestRate + time.Duration(sz.Pods)*5*time.Millisecond
}

func deleteNodes(ctx context.Context, r *lab.Run) error {
	sel := lab.RunIDLabel + "=" + r.ID
	return r.Act("cleanup-fake-nodes", "the run's fake nodes", map[string]any{"verb": "DELETE", "path": "/api/v1/nodes", "labelSelector": sel},
		"kubectl delete nodes -l "+sel, func() error {
			return r.Env.Client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
		})
}

// pod is the i-th pod as sent.
func pod(r *lab.Run, base *corev1.Pod, sz Size, i int) *corev1.Pod {
	p := base.DeepCopy()
	p.Name = PodName(i)
	p.Namespace = r.Namespace
	p.Labels[lab.RunIDLabel], p.Labels[lab.LabLabel] = r.ID, r.Lab
	p.Labels[kwok.StageSetLabel] = sz.StageSet
	for c := range p.Spec.Containers {
		if r.Env.WorkloadImage != "" {
			p.Spec.Containers[c].Image = r.Env.WorkloadImage
		}
	}
	p.Spec.NodeSelector = map[string]string{lab.RunIDLabel: r.ID}
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: kwok.FakeNodeAnnotation, Operator: corev1.TolerationOpEqual, Value: kwok.FakeNodeAnnotationValue, Effect: corev1.TaintEffectNoSchedule})
	if sz.HasFinalizer(i) {
		p.Finalizers = append(p.Finalizers, Finalizer)
	}
	p.APIVersion, p.Kind = "v1", "Pod"
	return p
}

func createPods(ctx context.Context, r *lab.Run, sz Size) error {
	base, _, err := lab.LoadManifest(Manifest)
	if err != nil {
		return err
	}
	if base.Labels == nil {
		base.Labels = map[string]string{}
	}
	// Two pods as sent (one with the finalizer, one without) stand for all.
	var paths []string
	for i := 0; i < min(sz.Pods, 2); i++ {
		b, _ := yaml.Marshal(pod(r, base, sz, i))
		p, err := r.Rec.WriteFile("inputs/pods/"+PodName(i)+".sent.yaml", b)
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	// Wait on the watch while the creates go out: every pod Running. A
	// create takes a place among the aheadOfRunning first; the pod's first
	// Running gives it back.
	running := map[string]bool{}
	var nRunning, created atomic.Int64
	ahead := newWindow(aheadOfRunning)
	wctx, cancel := context.WithTimeout(ctx, waitFor(sz.Pods))
	defer cancel()
	wctx, watchStall, stopStall := lab.UnlessStalled(wctx, stalled("pod events (pods created, bound, Running)"), func() int64 { return created.Load() + int64(r.Rec.PodEventCount()) })
	defer stopStall()
	allRunning := async(func() (struct{}, error) {
		return struct{}{}, r.Rec.WaitEvents(wctx, fmt.Sprintf("all %d pods Running", sz.Pods), func(e evidence.PodEvent) bool {
			if isRunning(e) && !running[e.Name] {
				running[e.Name] = true
				nRunning.Add(1)
				ahead.give()
			}
			return len(running) == sz.Pods
		})
	})
	defer every(r, func() string {
		return fmt.Sprintf("%d of %d pods created (at most %d ahead of Running), %d Running", created.Load(), sz.Pods, aheadOfRunning, nRunning.Load())
	})()
	req := map[string]any{"verb": "POST", "path": "/api/v1/namespaces/" + r.Namespace + "/pods", "count": sz.Pods,
		"names": PodName(0) + " … " + PodName(sz.Pods-1), "finalizer_on": fmt.Sprintf("every pod i with (i×%d) mod 100 < %d: %d pods", sz.FinalizerPercent, sz.FinalizerPercent, sz.Finalized()),
		"at_most_created_not_running": aheadOfRunning,
		"body_of_the_first":           pod(r, base, sz, 0)}
	err = r.Act("create-pods", fmt.Sprintf("%d pods", sz.Pods), req,
		fmt.Sprintf("kubectl create -f %s  # %d times, at most %d not yet Running (%s for one without the finalizer)", paths[0], sz.Pods, aheadOfRunning, strings.Join(paths[1:], "")), func() error {
			return parallel(ctx, sz.Pods, func(ctx context.Context, i int) error {
				if err := ahead.take(wctx); err != nil {
					return fmt.Errorf("waiting for pods to be Running before creating more: %w", err)
				}
				_, err := r.Env.Client.CoreV1().Pods(r.Namespace).Create(ctx, pod(r, base, sz, i), metav1.CreateOptions{})
				if err == nil {
					created.Add(1)
				}
				return err
			})
		})
	if err != nil {
		cancel()
		<-allRunning
		return fmt.Errorf("creating the pods (%d created): %w", created.Load(), err)
	}
	watchStall()
	r.Infof("%d pods created; waiting until every one is Running", created.Load())
	if err := (<-allRunning).err; err != nil {
		return r.Unobserved(ctx, fmt.Errorf("%d of %d pods Running: %w", nRunning.Load(), sz.Pods, err))
	}
	r.Infof("all %d pods Running", sz.Pods)
	return nil
}

func isRunning(e evidence.PodEvent) bool {
	c, ok := e.Container("")
	return e.Type != "DELETED" && e.DeletionTimestamp == nil && e.Phase == "Running" && e.Ready == "True" && ok && c.State == "running"
}

// listCaughtUp LISTs the pods and waits until the record's last event of
// every listed pod carries the resourceVersion the LIST gave it: the record
// is caught up with the API server at this moment.
func listCaughtUp(ctx context.Context, r *lab.Run, sz Size) error {
	l, err := r.Rec.ListPods(ctx, "before the namespace delete: every pod the run created, as the API server has it")
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, p := range l.Pods {
		want[p.Name] = p.ResourceVersion
	}
	r.Infof("LIST at resourceVersion %s: %d pods", l.ResourceVersion, len(l.Pods))
	wctx, cancel := context.WithTimeout(ctx, listCaughtUpWithin)
	defer cancel()
	if missing, err := r.Rec.WaitVersions(wctx, "the record to hold every listed pod's state", want); err != nil {
		return r.Unobserved(ctx, fmt.Errorf("%d listed pods' states not in the record: %w", missing, err))
	}
	return nil
}

func deleteNamespace(ctx context.Context, r *lab.Run, sz Size, finalized map[string]bool) error {
	plainLeft := sz.Pods - len(finalized)
	settled := map[string]bool{} // finalizer pods held at grace 0, or (wrongly) already DELETED
	gone := map[string]bool{}
	marked := map[string]bool{} // a deletionTimestamp seen: the namespace controller got to it
	var nMarked, nGone, nHeld atomic.Int64
	// The bound starts once the delete is done (by script: confirmed from
	// the audit log), not before it.
	wctx, started, cancel := lab.BoundAfter(ctx, lab.Bound{
		What:  "every pod without a finalizer DELETED and every finalizer pod held",
		Allow: waitFor(sz.Pods),
		Why:   fmt.Sprintf("60 s + %s per pod for %d pods: a floor of 5 pods/s", perPod, sz.Pods),
	})
	defer cancel()
	wctx, watchStall, stopStall := lab.UnlessStalled(wctx, stalled("pod events (pods marked, DELETED, held)"), func() int64 { return int64(r.Rec.PodEventCount()) })
	defer stopStall()
	if err := r.DeleteNamespace(ctx); err != nil {
		return err
	}
	started("the namespace delete (by " + r.ActedBy() + ")")
	watchStall()
	defer every(r, func() string {
		return fmt.Sprintf("%d of %d pods marked (deletionTimestamp), %d of %d pods without a finalizer DELETED, %d of %d finalizer pods held", nMarked.Load(), sz.Pods, nGone.Load(), sz.Pods-len(finalized), nHeld.Load(), len(finalized))
	})()
	// Events from before the delete match neither case: no pod was DELETED
	// or had a deletionTimestamp then.
	waitErr := r.Rec.WaitEvents(wctx, "every pod without a finalizer DELETED and every finalizer pod held", func(e evidence.PodEvent) bool {
		if e.DeletionTimestamp != nil && !marked[e.Name] {
			marked[e.Name] = true
			nMarked.Add(1)
		}
		switch {
		case finalized[e.Name]:
			if !settled[e.Name] && (e.Type == "DELETED" || (e.DeletionTimestamp != nil && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0)) {
				settled[e.Name] = true // a DELETED one: the claims will say it went before its release
				nHeld.Add(1)
			}
		case e.Type == "DELETED" && !gone[e.Name]:
			gone[e.Name] = true
			plainLeft--
			nGone.Add(1)
		}
		return plainLeft == 0 && len(settled) == len(finalized)
	})
	held := settled
	if err := waitErr; err != nil {
		return fmt.Errorf("%d of %d pods marked, %d pods without a finalizer left, %d of %d finalizer pods held: %w", len(marked), sz.Pods, plainLeft, len(held), len(finalized), err)
	}
	r.Infof("every pod without a finalizer DELETED; %d finalizer pods held at deletionGracePeriodSeconds 0", len(held))
	return nil
}

func release(ctx context.Context, r *lab.Run, sz Size, finalized map[string]bool) error {
	names := make([]string, 0, len(finalized))
	for i := 0; i < sz.Pods; i++ {
		if finalized[PodName(i)] {
			names = append(names, PodName(i))
		}
	}
	// The waits begin now, so they miss nothing, but their bound starts once
	// the last release is done: by script each release is a kubectl call
	// confirmed from the audit log, seconds where termlab takes milliseconds.
	wctx, started, cancel := lab.BoundAfter(ctx, releaseBound(sz))
	defer cancel()

	// Watch the namespace from now: its DELETED is the end of the experiment.
	var gone <-chan outcome[NamespaceGone]
	ns, err := r.Env.Client.CoreV1().Namespaces().Get(ctx, r.Namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		gone = async(func() (NamespaceGone, error) {
			return NamespaceGone{Namespace: r.Namespace, ObservedAt: time.Now().UTC(), AlreadyGone: true}, nil
		})
	case err != nil:
		return fmt.Errorf("reading namespace %s: %w", r.Namespace, err)
	default:
		gone = async(func() (NamespaceGone, error) { return watchNamespaceGone(wctx, r, ns.ResourceVersion) })
	}

	deleted := map[string]bool{}
	var nDeleted atomic.Int64
	podsDeleted := async(func() (struct{}, error) {
		err := r.Rec.WaitEvents(wctx, "every finalizer pod DELETED", func(e evidence.PodEvent) bool {
			if e.Type == "DELETED" && finalized[e.Name] && !deleted[e.Name] {
				deleted[e.Name] = true
				nDeleted.Add(1)
			}
			return len(deleted) == len(finalized)
		})
		if err != nil {
			err = fmt.Errorf("%d of %d finalizer pods DELETED: %w", len(deleted), len(finalized), err)
		}
		return struct{}{}, err
	})
	var released atomic.Int64
	defer every(r, func() string {
		return fmt.Sprintf("%d of %d finalizers released, %d of those pods DELETED", released.Load(), len(finalized), nDeleted.Load())
	})()
	began := time.Now()
	err = parallel(ctx, len(names), func(ctx context.Context, i int) error {
		if err := r.RemoveFinalizers(ctx, names[i]); err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) {
			return err
		}
		released.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	took := time.Since(began)
	each := (took / time.Duration(max(len(names), 1))).Round(time.Millisecond)
	pace := fmt.Sprintf("%d finalizer releases by %s in %.1f s (%s each, %d at once)", len(names), r.ActedBy(), took.Seconds(), each, min(workers, len(names)))
	started("the last of " + pace)
	r.Rec.Notef("%s", pace)
	r.Infof("%s", pace)
	g, err := settle(podsDeleted, gone)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(g)
	r.Rec.Notef("%s%s", namespaceNote, b)
	r.Infof("namespace %s gone", r.Namespace)
	return nil
}

// settle reads the release step's two waits, each one result, in a fixed
// order: the finalizer pods' DELETED, then the namespace's. No select: when
// both have ended, which one is read first decides nothing.
func settle(podsDeleted <-chan outcome[struct{}], gone <-chan outcome[NamespaceGone]) (NamespaceGone, error) {
	if p := <-podsDeleted; p.err != nil {
		return NamespaceGone{}, p.err
	}
	g := <-gone
	return g.val, g.err
}

// outcome is the one value a goroutine reports: its result or its error.
type outcome[T any] struct {
	val T
	err error
}

// async runs fn in a goroutine and returns the channel its outcome comes on
// (buffered: the goroutine never waits for a reader).
func async[T any](fn func() (T, error)) <-chan outcome[T] {
	ch := make(chan outcome[T], 1)
	go func() {
		v, err := fn()
		ch <- outcome[T]{v, err}
	}()
	return ch
}

// releaseBound is the cluster's share of the release step: from the last
// release until every finalizer pod is DELETED and the namespace is gone.
// It covers the claim's own bound (GoneWithin, at most one Killing Event per
// pod) with room, so a run the claim rejects is still recorded to its end.
func releaseBound(sz Size) lab.Bound {
	return lab.Bound{
		What:  "every finalizer pod DELETED and the namespace gone",
		Allow: waitFor(sz.Pods),
		Why:   fmt.Sprintf("60 s + %s per pod for %d pods: a floor of 5 pods/s, above %s, the claim's bound with one Event per pod", perPod, sz.Pods, GoneWithin(sz.Pods)),
	}
}

// watchNamespaceGone watches the namespace from rv until its DELETED event.
func watchNamespaceGone(ctx context.Context, r *lab.Run, rv string) (NamespaceGone, error) {
	sel := fields.OneTermEqualSelector("metadata.name", r.Namespace).String()
	for {
		w, err := r.Env.Client.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
		if err != nil {
			if ctx.Err() != nil {
				return NamespaceGone{}, fmt.Errorf("waiting for namespace %s to be gone: %w", r.Namespace, context.Cause(ctx))
			}
			return NamespaceGone{}, fmt.Errorf("watching namespace %s: %w", r.Namespace, err)
		}
		for ev := range w.ResultChan() {
			if m, ok := ev.Object.(*corev1.Namespace); ok {
				rv = m.ResourceVersion
				if ev.Type == watch.Deleted {
					w.Stop()
					return NamespaceGone{Namespace: r.Namespace, ObservedAt: time.Now().UTC().Round(0), ResourceVersion: rv}, nil
				}
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return NamespaceGone{}, fmt.Errorf("waiting for namespace %s to be gone: %w", r.Namespace, context.Cause(ctx))
		}
		// The stream ended (a server timeout): watch again from the last version.
	}
}

// progressEvery is how often a long step says how far it has got.
const progressEvery = 10 * time.Second

// every logs say() every progressEvery until the returned stop is called.
func every(r *lab.Run, say func() string) (stop func()) {
	return r.Log.Every(progressEvery, func() string { return "  " + say() })
}

// parallel runs fn for 0…n-1 with at most workers at once and returns the
// first error (the others still finish).
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// usage reads what the process spent since cpu0 and sizes the recorder's files.
func usage(r *lab.Run, cpu0 processUsage, began time.Time) Usage {
	now := selfUsage()
	u := Usage{
		CPUSeconds:  round3(now.cpuSeconds - cpu0.cpuSeconds),
		WallSeconds: round3(time.Since(began).Seconds()),
		PeakRSSMiB:  round3(now.peakRSSMiB),
		Files:       map[string]int64{},
		PodEvents:   r.Rec.PodEventCount(),
	}
	// Every JSONL file the recorder appends to as things happen.
	jsonl, _ := filepath.Glob(filepath.Join(r.Dir, "*.jsonl"))
	for _, path := range jsonl {
		if st, err := os.Stat(path); err == nil {
			u.Files[filepath.Base(path)] = st.Size()
			u.BytesWritten += st.Size()
		}
	}
	return u
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// Flags is lab:scale's size from its mage flags: Default, with each flag
// given replacing its part.
func Flags(nodes, pods, finalizerPercent *int, stageSet *string) Size {
	s := Default
	if nodes != nil {
		s.FakeNodes = *nodes
	}
	if pods != nil {
		s.Pods = *pods
	}
	if finalizerPercent != nil {
		s.FinalizerPercent = *finalizerPercent
	}
	if stageSet != nil {
		s.StageSet = *stageSet
	}
	return s
}
