package kwok

// End-to-end tests on a real termlab cluster. They run only when
// TERMLAB_KUBECONFIG names the cluster's kubeconfig; the controller image is
// TERMLAB_KWOK_IMAGE, else the one line of .termlab/kwok-image, else the
// official image. TestKubeletReference also needs TERMLAB_WORKLOAD_IMAGE (the
// heartbeat image, loaded on the real workers).
//
//	TERMLAB_KUBECONFIG=$PWD/.termlab/kubeconfig go test ./internal/kwok -run E2E -v

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
)

func e2eConfig(t *testing.T) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	path := os.Getenv("TERMLAB_KUBECONFIG")
	if path == "" {
		t.Skip("TERMLAB_KUBECONFIG is not set: no real cluster to test on")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, kubernetes.NewForConfigOrDie(cfg)
}

func e2eImage() string {
	if img := os.Getenv("TERMLAB_KWOK_IMAGE"); img != "" {
		return img
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", ".termlab", "kwok-image")); err == nil {
		if img := strings.TrimSpace(string(b)); img != "" {
			return img
		}
	}
	return OfficialImage
}

// TestInstallE2E installs kwok, checks the fake nodes and a pod on one, then
// installs again and checks that nothing changed and it was quick.
func TestInstallE2E(t *testing.T) {
	cfg, kube := e2eConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	opts := Options{Image: e2eImage(), Timeout: 3 * time.Minute}

	start := time.Now()
	if err := Install(ctx, cfg, opts); err != nil {
		t.Fatal(err)
	}
	t.Logf("first Install: %s", time.Since(start).Round(time.Millisecond))
	st, err := Status(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(st)
	if !st.Healthy() || st.ReadyFakeNodes() != DefaultFakeNodes || st.Image != opts.Image || st.DefaultStageSet != SetFaithful {
		t.Fatalf("after Install: %+v", st)
	}
	if got := st.PodStageSets(); !slices.Equal(got, []string{SetFaithful, SetKwokV07Fast, SetKwokV08Fast}) {
		t.Errorf("stage sets %v", got)
	}

	before := controllerIdentity(t, ctx, kube)
	start = time.Now()
	if err := Install(ctx, cfg, opts); err != nil {
		t.Fatal(err)
	}
	again := time.Since(start)
	t.Logf("second Install: %s", again.Round(time.Millisecond))
	if after := controllerIdentity(t, ctx, kube); after != before {
		t.Errorf("second Install changed the controller: %s -> %s", before, after)
	}

	ns := e2eNamespace(t, ctx, kube)
	pod := newPod("on-fake-node", "")
	if err := PlaceOnFakeNode(pod, ""); err != nil {
		t.Fatal(err)
	}
	rec := startRecording(t, ctx, kube, ns, pod.Name)
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := rec.waitFor(t, "Running on a fake node", 30*time.Second, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, FakeNodePrefix)
	})
	t.Logf("pod %s Running on %s, podIP %s", pod.Name, running.Spec.NodeName, running.Status.PodIP)
}

func controllerIdentity(t *testing.T, ctx context.Context, kube kubernetes.Interface) string {
	t.Helper()
	d, err := kube.AppsV1().Deployments(Namespace).Get(ctx, ControllerName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: ControllerLabel})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return fmt.Sprintf("generation %d pods %v", d.Generation, names)
}

// scenario is a deletion to run on one pod.
type scenario struct {
	name      string
	finalizer bool
	// force deletes with grace 0 right away; else an ordinary delete, and, with a
	// finalizer, a force delete once the first delete has played out.
	force bool
	// grace is the pod's terminationGracePeriodSeconds (0: 30) and termDelay how
	// long its workload takes to exit after SIGTERM.
	grace, termDelay int64
}

var scenarios = []scenario{
	{name: "delete", finalizer: false},
	{name: "delete-finalizer-force-release", finalizer: true},
	{name: "force-finalizer-release", finalizer: true, force: true},
	{name: "delete-sigterm-too-slow", grace: 3, termDelay: 10},
}

const testFinalizer = "termlab.dev/e2e-hold"

// TestStageSetsE2E runs each scenario under each stage set side by side on the
// fake nodes and records the normalised watch sequence.
func TestStageSetsE2E(t *testing.T) {
	cfg, kube := e2eConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests
	if err := Install(ctx, cfg, Options{Image: e2eImage()}); err != nil {
		t.Fatal(err)
	}
	ns := e2eNamespace(t, ctx, kube)
	results := map[string][]string{}
	var mu sync.Mutex
	for _, set := range StageSets {
		for _, sc := range scenarios {
			t.Run(set+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				pod := newPod(strings.ReplaceAll(set, ".", "")+"-"+sc.name, set)
				if err := PlaceOnFakeNode(pod, set); err != nil {
					t.Fatal(err)
				}
				seq := runScenario(t, ctx, kube, ns, pod, sc)
				mu.Lock()
				results[set+"/"+sc.name] = seq
				mu.Unlock()
				t.Logf("%s %s:\n  %s", set, sc.name, strings.Join(seq, "\n  "))
				checkSet(t, set, sc, seq)
			})
		}
	}
}

// checkSet asserts what each set is for, on the normalised sequence.
func checkSet(t *testing.T, set string, sc scenario, seq []string) {
	t.Helper()
	has := func(sub string) bool {
		return slices.ContainsFunc(seq, func(s string) bool { return strings.Contains(s, sub) })
	}
	last := seq[len(seq)-1]
	if !strings.HasPrefix(last, "DELETED") {
		t.Errorf("%s: last event %q, want DELETED", set, last)
	}
	switch set {
	case SetFaithful:
		if sc.termDelay <= max(sc.grace, 2) && (!has("phase=Succeeded") || !has("app=terminated(0,Completed)")) {
			t.Errorf("faithful: the pod was never shown terminated (Succeeded, exit 0)")
		}
		if sc.termDelay > max(sc.grace, 2) && (!has("phase=Failed") || !has("app=terminated(137,Error)")) {
			t.Errorf("faithful: the pod was never shown killed (Failed, exit 137)")
		}
		if sc.finalizer && !has("> remove finalizer") {
			t.Errorf("faithful: the pod did not wait for its finalizer")
		}
	case SetKwokV07Fast:
		// The finalizer nobody (but this test) removes is stripped: the pod is
		// gone before the test removes it.
		if sc.finalizer && has("> remove finalizer") {
			t.Errorf("kwok-v0.7-fast: the pod waited for its finalizer")
		}
	case SetKwokV08Fast:
		if sc.finalizer && !has("> remove finalizer") {
			t.Errorf("kwok-v0.8-fast: the pod did not wait for its finalizer")
		}
		if has("phase=Succeeded") || has("terminated") {
			t.Errorf("kwok-v0.8-fast: unexpectedly terminated")
		}
	}
}

// TestKubeletReference runs the same scenarios on a real worker and on the
// faithful set, and requires the same normalised sequences.
func TestKubeletReference(t *testing.T) {
	cfg, kube := e2eConfig(t)
	image := os.Getenv("TERMLAB_WORKLOAD_IMAGE")
	if image == "" {
		t.Skip("TERMLAB_WORKLOAD_IMAGE is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests
	if err := Install(ctx, cfg, Options{Image: e2eImage()}); err != nil {
		t.Fatal(err)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var worker string
	for _, n := range nodes.Items {
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		if !cp && n.Labels[FakeNodeTypeLabel] != FakeNodeTypeValue {
			worker = n.Name
			break
		}
	}
	if worker == "" {
		t.Fatal("no real worker")
	}
	ns := e2eNamespace(t, ctx, kube)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			var real, fake []string
			t.Run("both", func(t *testing.T) {
				t.Run("kubelet", func(t *testing.T) {
					t.Parallel()
					p := newPod("kubelet-"+sc.name, "")
					p.Spec.Containers[0].Image = image
					p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": worker}
					real = runScenario(t, ctx, kube, ns, p, sc)
				})
				t.Run("faithful", func(t *testing.T) {
					t.Parallel()
					p := newPod("faithful-"+sc.name, SetFaithful)
					if err := PlaceOnFakeNode(p, SetFaithful); err != nil {
						t.Fatal(err)
					}
					fake = runScenario(t, ctx, kube, ns, p, sc)
				})
			})
			t.Logf("kubelet on %s:\n  %s", worker, strings.Join(real, "\n  "))
			t.Logf("faithful:\n  %s", strings.Join(fake, "\n  "))
			if !slices.Equal(real, fake) {
				t.Errorf("faithful differs from the kubelet")
			}
		})
	}
}

func newPod(name, set string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "kwok-e2e"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64(30)),
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  new(false),
			EnableServiceLinks:            new(false),
			Containers: []corev1.Container{{
				Name: "app", Image: "termlab.local/heartbeat:e2e", ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--interval=1s", "--term-delay=0s"},
			}},
		},
	}
	if set != "" {
		p.Labels[StageSetLabel] = set
	}
	return p
}

// runScenario creates pod, waits for it to run, plays the scenario and returns
// the normalised watch sequence, ending with DELETED.
func runScenario(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns string, pod *corev1.Pod, sc scenario) []string {
	t.Helper()
	if sc.finalizer {
		pod.Finalizers = []string{testFinalizer}
	}
	if sc.grace > 0 {
		pod.Spec.TerminationGracePeriodSeconds = new(sc.grace)
	}
	// The workload's exit time after SIGTERM: what the heartbeat image does on a
	// real node, what the faithful stages read from the annotation.
	pod.Spec.Containers[0].Args = []string{"--interval=1s", fmt.Sprintf("--term-delay=%ds", sc.termDelay)}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[SigtermExitAfterAnnotation] = fmt.Sprint(sc.termDelay)
	pods := kube.CoreV1().Pods(ns)
	rec := startRecording(t, ctx, kube, ns, pod.Name)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(context.Background(), kube, ns, pod.Name) })
	rec.waitFor(t, "Running", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && podReady(p) })
	settled := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed ||
			(p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0)
	}
	var grace *int64
	if sc.force {
		grace = new(int64(0))
	}
	if sc.force {
		rec.mark("delete --grace-period=0")
	} else {
		rec.mark("delete")
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		t.Fatal(err)
	}
	if sc.finalizer {
		// Let the delete play out: terminal, or grace collapsed to 0, or gone;
		// then until nothing more happens.
		rec.waitFor(t, "the delete to play out", 60*time.Second, func(p *corev1.Pod) bool { return p == nil || settled(p) })
		rec.quiet(3 * time.Second)
		if !sc.force && !rec.deleted() {
			rec.mark("delete --grace-period=0")
			if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
				t.Fatal(err)
			}
			rec.quiet(3 * time.Second)
		}
		if !rec.deleted() {
			rec.mark("remove finalizer")
			release(ctx, kube, ns, pod.Name)
		}
	}
	rec.waitFor(t, "DELETED", 60*time.Second, func(p *corev1.Pod) bool { return p == nil })
	return normalise(rec.events())
}

// release removes the test finalizer (if the pod still exists).
func release(ctx context.Context, kube kubernetes.Interface, ns, name string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, _ = kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
}

func e2eNamespace(t *testing.T, ctx context.Context, kube kubernetes.Interface) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "termlab-kwok-e2e-"}}
	got, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), got.Name, metav1.DeleteOptions{})
	})
	return got.Name
}

// recording is every watch event of one pod, in order, from before its creation.
type recording struct {
	mu     sync.Mutex
	evs    []watch.Event
	at     []time.Time
	notify chan struct{}
}

func startRecording(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, name string) *recording {
	t.Helper()
	list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		return kube.CoreV1().Pods(ns).Watch(ctx, o)
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	if err != nil {
		t.Fatal(err)
	}
	r := &recording{notify: make(chan struct{}, 1)}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Bookmark || ev.Type == watch.Error {
				continue
			}
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.at = append(r.at, time.Now())
			r.mu.Unlock()
			select {
			case r.notify <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(w.Stop)
	return r
}

// mark records an action of the test between the pod's events.
func (r *recording) mark(action string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, watch.Event{Type: watch.EventType("> " + action)})
	r.at = append(r.at, time.Now())
}

// lastPod is the last pod event (marks skipped).
func lastPod(evs []watch.Event) (watch.Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Object != nil {
			return evs[i], true
		}
	}
	return watch.Event{}, false
}

func (r *recording) events() []watch.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

func (r *recording) deleted() bool {
	last, ok := lastPod(r.events())
	return ok && last.Type == watch.Deleted
}

// waitFor waits until the last recorded state satisfies cond (nil: deleted).
func (r *recording) waitFor(t *testing.T, what string, timeout time.Duration, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.After(timeout)
	for {
		evs := r.events()
		if last, ok := lastPod(evs); ok {
			var p *corev1.Pod
			if last.Type != watch.Deleted {
				p, _ = last.Object.(*corev1.Pod)
			}
			if cond(p) {
				return p
			}
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("pod did not reach %q in %s; events:\n  %s", what, timeout, strings.Join(normalise(evs), "\n  "))
			return nil
		}
	}
}

// quiet waits until no event has arrived for d: the stages (or the kubelet)
// have done what they do for the current state.
func (r *recording) quiet(d time.Duration) {
	for {
		select {
		case <-r.notify:
		case <-time.After(d):
			return
		}
	}
}

// normalise keeps, of each event, what deletion is about (event type,
// deletionTimestamp set, deletionGracePeriodSeconds, finalizers, phase, Ready,
// container states), and drops events that change none of it.
func normalise(evs []watch.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Object == nil {
			out = append(out, string(ev.Type))
			continue
		}
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		s := fmt.Sprintf("phase=%s ready=%s", p.Status.Phase, readyOf(p))
		if p.DeletionTimestamp != nil {
			g := "nil"
			if p.DeletionGracePeriodSeconds != nil {
				g = fmt.Sprint(*p.DeletionGracePeriodSeconds)
			}
			s += " deleting grace=" + g
		}
		s += fmt.Sprintf(" finalizers=%v", p.Finalizers)
		for _, c := range p.Status.ContainerStatuses {
			s += " " + c.Name + "=" + shortState(c.State)
		}
		if ev.Type == watch.Deleted {
			s = "DELETED " + s
		}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func readyOf(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return string(c.Status)
		}
	}
	return "-"
}

func shortState(s corev1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		return fmt.Sprintf("terminated(%d,%s)", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return "waiting(" + s.Waiting.Reason + ")"
	}
	return "none"
}
