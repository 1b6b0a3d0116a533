package lab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/manifests/pods"
)

// Run is what a lab's steps work with: the cluster, the recorder and the
// run's identity, plus the actions a lab takes, each recorded exactly.
type Run struct {
	ID        string
	Lab       string
	Namespace string
	Dir       string
	Env       *cluster.Env
	Rec       *recorder.Recorder
	Log       *progress.Logger

	opts Options

	mu                 sync.Mutex
	restoring          sync.Mutex
	noNodeNoted        bool // the run was told once that it cannot reach the nodes
	stoppedKubelet     map[string]cluster.Node
	heldMounts         map[string]cluster.Node // nodes where a process of the run keeps a mount busy
	taintedNodes       map[string]corev1.Taint
	apiServices        []string // the APIServices the run armed a switch for
	restartedInCleanup []cluster.Node
	// changes are what the run may change: the lab's declared changes and
	// its namespace, in the order cleanup undoes them (runChanges).
	changes []Change
	// lockHolder is the run lock's holder identity, which the cluster
	// switches watch; switches are those armed (switch.go).
	lockHolder string
	switches   []armedSwitch
	// actor does the actions while the steps run, when Options.By is not termlab (by.go).
	actor actor
}

// Step runs one named step of the experiment: it is announced, timed and
// recorded; files saved during it go to its folder.
func (r *Run) Step(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	end := r.Rec.BeginStep(name)
	done := r.Log.Step(name)
	r.emit(Event{Kind: StepStarted, Step: name})
	err := fn(ctx)
	end(err)
	done(err)
	finished := Event{Kind: StepFinished, Step: name}
	if err != nil {
		finished.Err = err.Error()
	}
	r.emit(finished)
	return err
}

// Infof tells the user what the lab sees.
func (r *Run) Infof(format string, args ...any) { r.Log.Infof("  "+format, args...) }

// Worker returns the i-th real worker (0-based, in name order).
func (r *Run) Worker(i int) (cluster.Node, error) {
	if i >= len(r.Env.Workers) {
		return nil, fmt.Errorf("the lab needs %d real workers, the cluster has %d", i+1, len(r.Env.Workers))
	}
	return r.Env.Workers[i], nil
}

// Placement says where a pod goes.
type Placement struct {
	// Node is a real node's name: the pod gets nodeSelector kubernetes.io/hostname=<Node>.
	Node string
	// Fake keeps the manifest's own kwok nodeSelector and toleration.
	Fake bool
}

// LoadManifest reads a pod manifest from manifests/pods.
func LoadManifest(name string) (*corev1.Pod, []byte, error) {
	raw, err := pods.FS.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("reading pod manifest %s: %w", name, err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &pod); err != nil {
		return nil, nil, fmt.Errorf("parsing pod manifest %s: %w", name, err)
	}
	return &pod, raw, nil
}

// CreatePod creates the pod of the manifest in the run's namespace with the
// run's labels, the cluster's workload image and the placement, saving the
// pod exactly as sent under inputs/pods/.
func (r *Run) CreatePod(ctx context.Context, manifest string, place Placement) (*corev1.Pod, error) {
	return r.CreatePodEdited(ctx, manifest, place, nil)
}

// apiRequest is how an API request is recorded.
type apiRequest struct {
	Verb string `json:"verb"`
	Path string `json:"path"`
	// PatchType is the Content-Type of a PATCH body.
	PatchType string `json:"patchType,omitempty"`
	Body      any    `json:"body,omitempty"`
}

func (r *Run) podsPath(name string) string {
	p := "/api/v1/namespaces/" + r.Namespace + "/pods"
	if name != "" {
		p += "/" + name
	}
	return p
}

// WaitRunning waits on the watch until the pod is Ready with its container
// running, and returns that event. Pods on fake nodes have no container ID.
func (r *Run) WaitRunning(ctx context.Context, pod string, timeout time.Duration) (evidence.PodEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := r.Rec.WaitPod(ctx, pod, fmt.Sprintf("be Ready with its container running (within %s)", timeout), func(e evidence.PodEvent) bool {
		c, ok := e.Container("")
		return e.Type != "DELETED" && e.Ready == "True" && ok && c.State == "running"
	})
	if err == nil {
		c, _ := e.Container("")
		r.Infof("pod %s Ready on %s, container %s", pod, e.NodeName, shortID(c.ContainerID))
		// From now on its log is streamed, whatever the lab looks at later.
		if node := r.Env.Worker(e.NodeName); node != nil && c.ContainerID != "" {
			r.Rec.FollowLogs(node, pod, c.ContainerID)
		}
	}
	return e, err
}

// Delete sends an ordinary delete (no grace period given: the pod's own
// terminationGracePeriodSeconds applies), like `kubectl delete --wait=false`.
func (r *Run) Delete(ctx context.Context, pod string) error {
	return r.delete(ctx, evidence.ActionDelete, pod, metav1.DeleteOptions{},
		fmt.Sprintf("kubectl delete pod %s -n %s --wait=false", pod, r.Namespace))
}

// ForceDelete sends what `kubectl delete --force --grace-period=0` sends:
// DeleteOptions with gracePeriodSeconds 0.
func (r *Run) ForceDelete(ctx context.Context, pod string) error {
	zero := int64(0)
	return r.delete(ctx, evidence.ActionForceDelete, pod, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		fmt.Sprintf("kubectl delete pod %s -n %s --force --grace-period=0 --wait=false", pod, r.Namespace))
}

func (r *Run) delete(ctx context.Context, kind evidence.ActionKind, pod string, opts metav1.DeleteOptions, equivalent string) error {
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}
	seen := deleteExpect(opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds == 0)
	return r.perform(ctx, action{kind: kind, target: pod, equivalent: equivalent, doing: fmt.Sprintf("%s of pod %s", kind, pod),
		request: apiRequest{Verb: "DELETE", Path: r.podsPath(pod), Body: opts},
		send:    func(ctx context.Context) error { return r.Env.Client.CoreV1().Pods(r.Namespace).Delete(ctx, pod, opts) },
		audit:   &seen,
	})
}

// finalizersPatch removes every finalizer.
const finalizersPatch = `{"metadata":{"finalizers":null}}`

// RemoveFinalizers clears the pod's finalizers with a merge patch.
func (r *Run) RemoveFinalizers(ctx context.Context, pod string) error {
	return r.removeFinalizers(ctx, evidence.ActionRemoveFinalizers, pod)
}

func (r *Run) removeFinalizers(ctx context.Context, kind evidence.ActionKind, pod string) error {
	return r.perform(ctx, action{kind: kind, target: pod, doing: "removing the finalizers of pod " + pod,
		equivalent: fmt.Sprintf("kubectl patch pod %s -n %s --type=merge -p '%s'", pod, r.Namespace, finalizersPatch),
		request:    apiRequest{Verb: "PATCH", Path: r.podsPath(pod), PatchType: string(types.MergePatchType), Body: rawJSON(finalizersPatch)},
		send: func(ctx context.Context) error {
			_, err := r.Env.Client.CoreV1().Pods(r.Namespace).Patch(ctx, pod, types.MergePatchType, []byte(finalizersPatch), metav1.PatchOptions{})
			return err
		},
		audit: &removeFinalizersExpect,
	})
}

// DeleteNamespace deletes the run's namespace (an ordinary delete, which
// returns at once; the namespace controller does the rest). With -by it is
// the actor's action, read back from the audit log.
func (r *Run) DeleteNamespace(ctx context.Context) error {
	return r.perform(ctx, action{kind: evidence.ActionDeleteNamespace, target: r.Namespace, doing: "deleting namespace " + r.Namespace,
		equivalent: fmt.Sprintf("kubectl delete namespace %s --wait=false", r.Namespace),
		request:    apiRequest{Verb: "DELETE", Path: "/api/v1/namespaces/" + r.Namespace},
		send: func(ctx context.Context) error {
			return r.Env.Client.CoreV1().Namespaces().Delete(ctx, r.Namespace, metav1.DeleteOptions{})
		},
		audit: &deleteNamespaceExpect,
	})
}

type rawJSON string

func (j rawJSON) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// remember notes a node in one of the run's lists of what to undo.
func (r *Run) remember(list *map[string]cluster.Node, node cluster.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *list == nil {
		*list = map[string]cluster.Node{}
	}
	(*list)[node.String()] = node
}

// forget drops a node from one of those lists once the run undid its change.
func (r *Run) forget(list map[string]cluster.Node, node string) {
	r.mu.Lock()
	delete(list, node)
	r.mu.Unlock()
}

// nodeRequest is how commands on a node are recorded.
type nodeRequest struct {
	Node     string     `json:"node"`
	Commands [][]string `json:"commands"`
}

// dockerExec is what a person would type for the commands.
func dockerExec(node cluster.Node, cmds [][]string) string {
	var lines []string
	for _, argv := range cmds {
		lines = append(lines, "docker exec "+node.String()+" "+shellJoin(argv))
	}
	return strings.Join(lines, " && ")
}

// shellJoin quotes the arguments that a shell would split or expand.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, " '\"$*") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// WaitNodeReady polls the node until its Ready condition is True (polling
// to reach a state; the node's history is in the recorder's watch).
func WaitNodeReady(ctx context.Context, env *cluster.Env, node string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := env.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return cluster.NodeReady(n), nil
	})
	if err != nil {
		return fmt.Errorf("waiting up to %s for node %s to be Ready: %w", timeout, node, err)
	}
	return nil
}

// nodesOf is the nodes of one of the run's lists (stopped kubelets, held
// mounts), by name.
func (r *Run) nodesOf(list map[string]cluster.Node) []cluster.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]cluster.Node, 0, len(list))
	for _, n := range list {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// cleanup undoes the run's changes, each kind's undo in changeKinds' order:
// what is on the nodes first (every kubelet the run stopped started again),
// then, once the API server answers, the taints, the APIServices and the
// namespace (unless Keep: the finalizers of the run's pods removed, the
// namespace deleted), and the cluster switches last.
func (r *Run) cleanup(ctx context.Context) error {
	var errs []error
	if r.Rec != nil {
		end := r.Rec.BeginStep("cleanup")
		defer end(nil)
	}
	for _, c := range r.changes {
		if c.NodeSide() {
			errs = append(errs, c.Undo(ctx, r))
		}
	}
	// The rest is API requests: a restarting API server is waited for, not
	// given up on, so the run's objects do not outlive it.
	if err := r.waitAPIServer(ctx); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, c := range r.changes {
		if !c.NodeSide() {
			errs = append(errs, c.Undo(ctx, r))
		}
	}
	// Last: a switch goes only once what it guards is undone (the lab's own
	// cleanup of its cluster-wide objects ran with its steps).
	errs = append(errs, r.disarmSwitches(ctx))
	return errors.Join(errs...)
}

// apiServerEvery is how often cleanup asks an API server that did not
// answer whether it is ready. engineGoneFor is how long the Docker engine
// whose containers are the nodes may not answer before cleanup stops
// waiting: a restarted engine answers again in seconds (its containers
// stop first, about 15 s here), a stopped one does not come back by itself.
const (
	apiServerEvery = time.Second
	engineGoneFor  = 30 * time.Second
)

// engineDownHelp is what to do when the engine took the cluster's nodes with it.
func engineDownHelp() string {
	return "the cluster's nodes are its containers and stopped with it: `" + invocation.Command("cluster:up") + "` starts the engine and them again and removes what this run left"
}

// waitAPIServer returns once the API server says it is ready (/readyz), or
// with an error naming the last answer when ctx ends first, or once the
// Docker engine under the nodes has not answered for engineGoneFor.
func (r *Run) waitAPIServer(ctx context.Context) error {
	ready := func() error {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return r.Env.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(rctx).Error()
	}
	err := ready()
	if err == nil {
		return nil
	}
	begin := time.Now()
	deadline, _ := ctx.Deadline()
	r.Log.Warnf("cleanup: the API server is not ready (%v); waiting for it until %s", err, deadline.Format("15:04:05"))
	var engineDownSince time.Time
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the API server to clean up: it was not ready for %s (last: %v)", time.Since(begin).Round(time.Second), err)
		case <-time.After(apiServerEvery):
		}
		if err = ready(); err == nil {
			r.Log.Infof("cleanup: the API server answers again after %s", time.Since(begin).Round(time.Second))
			if r.Rec != nil {
				r.Rec.Notef("cleanup waited %s for the API server to be ready", time.Since(begin).Round(time.Second))
			}
			return nil
		}
		switch down := cluster.EngineDown(ctx, r.Env); {
		case down == "":
			engineDownSince = time.Time{}
		case engineDownSince.IsZero():
			engineDownSince = time.Now()
			r.Log.Warnf("cleanup: %s; waiting at most %s for it to come back", down, engineGoneFor)
		case time.Since(engineDownSince) >= engineGoneFor:
			return fmt.Errorf("waiting for the API server to clean up: gave up after %s, as the engine under the nodes did not answer", time.Since(engineDownSince).Round(time.Second))
		}
	}
}

// copyInputs saves the lab's pod manifests, the kind config and the kwok
// stage files under inputs/, so the run can be understood from its folder.
func (r *Run) copyInputs(def Definition) error {
	var errs []error
	for _, m := range def.Manifests {
		_, raw, err := LoadManifest(m)
		if err == nil {
			_, err = r.Rec.WriteFile("inputs/pods/"+m, raw)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if r.opts.RepoRoot == "" {
		r.Rec.Notef("the kind config and kwok stages were not copied: the repository root is unknown")
		return errors.Join(errs...)
	}
	for _, dir := range []string{"kind", "kwok"} {
		src := filepath.Join(r.opts.RepoRoot, "manifests", dir)
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return nil
			}
			rel, _ := filepath.Rel(src, path)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = r.Rec.WriteFile("inputs/"+dir+"/"+filepath.ToSlash(rel), b)
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("copying manifests/%s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	if id == "" {
		return "(none: fake node)"
	}
	return id
}

// Unobserved handles the error of a bounded wait: when the wait's own bound
// ran out (the run itself goes on), it says so, notes it in the record (the
// claims that needed the observation will fail on their own) and returns
// nil, so the experiment continues. So does a node the run has no access to
// (those claims are then not checked). Any other error is returned as is.
func (r *Run) Unobserved(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, evidence.ErrNoNodeAccess) {
		if !r.noNodeNoted {
			r.noNodeNoted = true
			r.Log.Warnf("not checked: %v; the claims resting on the node are reported as not checked", err)
		}
		r.Rec.Notef("not checked: %v", err)
		return nil
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		r.Log.Warnf("not observed: %v", err)
		r.Rec.Notef("not observed: %v", err)
		return nil
	}
	return err
}

// Within returns ctx bounded by d, for one wait.
func Within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// StartPod creates the manifest's pod on a real worker, waits until it runs,
// snapshots it and records its container as crictl sees it on the node. It
// returns the container ID (without the runtime prefix).
func (r *Run) StartPod(ctx context.Context, manifest, pod string, worker cluster.Node, within time.Duration) (string, error) {
	if _, err := r.CreatePod(ctx, manifest, Placement{Node: worker.String()}); err != nil {
		return "", err
	}
	e, err := r.WaitRunning(ctx, pod, within)
	if err != nil {
		return "", err
	}
	c, _ := e.Container("")
	if _, err := r.Rec.Snapshot(ctx, pod); err != nil {
		return "", err
	}
	_, err = r.Rec.ObserveContainer(ctx, worker, pod, c.ContainerID)
	return c.ContainerID, r.Unobserved(ctx, err)
}
