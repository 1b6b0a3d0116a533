//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/stack"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// widgetOperator is the field manager that adds the finalizers: a name that
// looks like a controller, of which no pod and no Lease exists.
const widgetOperator = "widget-operator"

// TestDiagnoseNamespace builds the stuck namespace of issue #10 and
// diagnoses it. "custom-resource": a custom resource with a finalizer nobody
// will remove, in a namespace that is then deleted; once the namespace
// controller reports NamespaceFinalizersRemaining, RunNamespace must name
// the resource, its finalizer and who added it. "pods-first": the same with
// a pod held by a finalizer beside it; the namespace controller deletes pods
// first, so the custom resource is never even asked to go, and the answer
// must say so and diagnose the pod in its own folder. Diagnose must change
// nothing. Cleanup removes the finalizers, waits for the namespace to go,
// deletes the CRD and checks nothing is left.
func TestDiagnoseNamespace(t *testing.T) {
	t.Run("custom-resource", func(t *testing.T) { diagnoseNamespaceCase(t, false) })
	t.Run("pods-first", func(t *testing.T) { diagnoseNamespaceCase(t, true) })
}

func diagnoseNamespaceCase(t *testing.T, withPod bool) {
	env := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Workers) == 0 {
		t.Fatal("the cluster has no real worker")
	}
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	runID := lab.NewRunID(time.Now())
	labels := map[string]string{lab.RunIDLabel: runID}
	// A group per run: a CRD left by a failed run never collides with this one.
	group := "r" + strings.ReplaceAll(runID, "-", "") + ".diagnose.termlab.dev"
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	resource := "widgets." + group
	crdFinalizer := group + "/cleanup"
	podFinalizer := group + "/pod-cleanup"
	ns := "diagnose-ns-" + runID

	// The run lock keeps labs from running beside this test: each lab's
	// repair releases the finalizers of pods labelled by another run.
	release, err := runlock.Acquire(context.Background(), progress.Default(), env.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release) // runs last: cleanups run in reverse order

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Cleanup on every exit path, registered before anything is created.
	t.Cleanup(func() { cleanupNamespaceCase(t, env.Client, dyn, ns, widgets, runID) })

	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": resource, "labels": map[string]any{lab.RunIDLabel: runID}},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD %s: %v", resource, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(crdGVR).Get(ctx, resource, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("CRD %s never became Established: %v", resource, err)
	}

	// The namespace controller finds a namespace's types through discovery:
	// a CRD it cannot discover yet is skipped on its first pass.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lists, _ := discovery.ServerPreferredNamespacedResources(env.Client.Discovery())
		for _, l := range lists {
			if l.GroupVersion == group+"/v1" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("CRD %s never appeared in discovery: %v", resource, err)
	}

	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "labels": map[string]any{lab.RunIDLabel: runID}, "finalizers": []any{crdFinalizer}},
		"spec":     map[string]any{"size": 1},
	}}
	// The finalizer is added by widget-operator, as a controller would.
	if _, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{FieldManager: widgetOperator}); err != nil {
		t.Fatalf("creating widget w1: %v", err)
	}
	if withPod {
		grace := int64(2)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "held", Labels: labels, Finalizers: []string{podFinalizer}},
			Spec: corev1.PodSpec{
				NodeName: env.Workers[0].String(), RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
				AutomountServiceAccountToken: new(bool), EnableServiceLinks: new(bool),
				Containers: []corev1.Container{{Name: "heartbeat", Image: env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
					Args: []string{"--interval=1s", "--term-delay=0s"}}},
			},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{FieldManager: widgetOperator}); err != nil {
			t.Fatalf("creating pod held: %v", err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := env.Client.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, nil
		}); err != nil {
			t.Fatalf("pod held never ran: %v", err)
		}
	}

	if err := env.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// Reaching a state, not recording history: poll until the namespace
	// controller reports the widget's finalizer (NamespaceFinalizersRemaining)
	// or, with a pod, until the kubelet has stopped the pod (the controller
	// then waits on the pod and reports nothing of the widget). On a busy
	// cluster the controller's retries back off: a metadata change requeues
	// the namespace at once (an annotation of the test's own namespace; the
	// diagnosis does not depend on it, only this wait does).
	var last string
	nudged := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if !withPod && time.Since(nudged) > 15*time.Second {
			nudged = time.Now()
			t.Logf("the namespace controller has not reported the widget after %s: requeueing the namespace", time.Since(deleted).Round(time.Second))
			p := fmt.Sprintf(`{"metadata":{"annotations":{"termlab.dev/requeue":"%d"}}}`, nudged.Unix())
			_, _ = env.Client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		}
		held := false
		last = "phase " + string(n.Status.Phase) + ", conditions:"
		for _, c := range n.Status.Conditions {
			last += fmt.Sprintf(" %s=%s (%s)", c.Type, c.Status, c.Message)
			if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, crdFinalizer) {
				held = true
			}
		}
		if !withPod {
			return held, nil
		}
		// With a pod the controller waits on it and never gets to the widget.
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			last += "; pod: " + err.Error()
			return false, nil
		}
		last += "; pod phase " + string(p.Status.Phase)
		return p.DeletionTimestamp != nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed), nil
	}); err != nil {
		t.Fatalf("namespace %s never reached the stuck state (NamespaceFinalizersRemaining with %s, or with a pod: the pod stopped) (%v); last seen: %s", ns, crdFinalizer, err, last)
	}
	t.Logf("stuck state %s after the delete: %s", time.Since(deleted).Round(time.Millisecond), last)

	src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cleanup(context.Background()); err != nil {
			t.Errorf("diagnose's cleanup: %v", err)
		}
	}()
	res, err := diagnose.RunNamespace(ctx, src, ns, project.ResultsDir(root))
	if err != nil {
		t.Fatalf("RunNamespace: %v", err)
	}
	checkReplay(t, res.Dir)
	answer := res.Summary.Answer
	t.Logf("diagnose namespace %s in %s: %s\n%s", ns, res.Took.Round(time.Millisecond), res.Dir, answer)

	wants := []string{
		"Namespace " + ns + " is Terminating for ",
		"1 " + resource + " (w1) remains, held by finalizer " + crdFinalizer + ", added by " + widgetOperator + ", whose controller is not running",
	}
	verdicts := map[string]string{
		diagnose.FindNSDeletion:              "requested",
		diagnose.FindRemaining(resource):     "held",
		diagnose.FindFinalizer(crdFinalizer): "holds the namespace",
		diagnose.FindDryRun:                  "accepted",
		diagnose.FindDiscovery:               "ok",
		diagnose.FindAPIServices:             "available",
	}
	if withPod {
		wants = append(wants, "1 pods (held) remains, held by finalizer "+podFinalizer,
			"Nothing else is being deleted yet: the namespace controller deletes pods first and waits until every pod is gone, so pod held holds everything",
			"Waiting behind it: 1 "+resource+" (w1) remains, held by finalizer "+crdFinalizer, "Pod "+ns+"/held is Terminating", "already exited")
		verdicts[diagnose.FindPod("held")] = "held"
		verdicts[diagnose.FindNSOrdered] = "waiting on pods"
	} else {
		verdicts[diagnose.FindNSCondition(corev1.NamespaceFinalizersRemaining)] = "True"
		verdicts[diagnose.FindNSCondition(corev1.NamespaceContentRemaining)] = "True"
	}
	for _, want := range wants {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}
	r := res.Namespace
	if r == nil {
		t.Fatal("RunNamespace returned no namespace summary")
	}
	for id, verdict := range verdicts {
		if f, ok := r.Finding(id); !ok || f.Verdict != verdict {
			t.Errorf("%s: %+v (found %v), want %s", id, f, ok, verdict)
		}
	}
	if _, ok := r.Finding(diagnose.FindNSOrdered); ok && !withPod {
		t.Errorf("no pod remains, yet a finding says the namespace waits on pods")
	}
	advice := strings.Join(res.Summary.Advice, "\n")
	for _, want := range []string{
		"Safe: bring back the controller that owns " + crdFinalizer,
		"kubectl patch " + resource + " w1 -n " + ns + " --type=merge",
		"Never remove the namespace's own kubernetes finalizer",
	} {
		if !strings.Contains(advice, want) {
			t.Errorf("the advice lacks %q:\n%s", want, advice)
		}
	}
	files := []string{diagnose.MarkdownFile, diagnose.SummaryFile, diagnose.NamespaceFile, diagnose.DiscoveryFile,
		diagnose.APIServicesFile, diagnose.TypeFile(resource), diagnose.NSDryRunFile}
	if withPod {
		files = append(files, diagnose.PodDir("held")+"/"+diagnose.MarkdownFile, diagnose.PodDir("held")+"/"+diagnose.PodFile)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(res.Dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("the diagnosis folder lacks %s: %v", f, err)
		}
	}
	if leaks, err := credscan.Dir(res.Dir); err != nil || len(leaks) > 0 {
		t.Errorf("the diagnosis folder holds credentials %v (%v)", leaks, err)
	}
	// Read-only: the dry runs left every finalizer where it was.
	if u, err := dyn.Resource(widgets).Namespace(ns).Get(ctx, "w1", metav1.GetOptions{}); err != nil || len(u.GetFinalizers()) != 1 {
		t.Errorf("after diagnose widget w1 is %v (%v), want its finalizer %s", u, err, crdFinalizer)
	}
	if p, err := env.Client.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{}); withPod && (err != nil || len(p.Finalizers) != 1) {
		t.Errorf("after diagnose pod held is %v (%v), want its finalizer %s", p, err, podFinalizer)
	}
	if res.Took > 20*time.Second {
		t.Errorf("diagnose took %s", res.Took)
	}
}

// cleanupNamespaceCase removes the finalizers the test added, waits for the
// namespace to go, deletes the CRD and fails the test if anything of the
// run is left. It tolerates a test that stopped before creating everything.
func cleanupNamespaceCase(t *testing.T, client kubernetes.Interface, dyn dynamic.Interface, ns string, widgets schema.GroupVersionResource, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := dyn.Resource(widgets).Namespace(ns).Patch(ctx, "w1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: removing widget w1's finalizer: %v", err)
	}
	if _, err := client.CoreV1().Pods(ns).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: removing pod held's finalizer: %v", err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: deleting namespace %s: %v", ns, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("cleanup: namespace %s is still there: %v", ns, err)
	}
	crd := widgets.Resource + "." + widgets.Group
	if err := dyn.Resource(crdGVR).Delete(ctx, crd, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: deleting CRD %s: %v", crd, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(crdGVR).Get(ctx, crd, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("cleanup: CRD %s is still there: %v", crd, err)
	}
	sel := metav1.ListOptions{LabelSelector: lab.RunIDLabel + "=" + runID}
	if l, err := client.CoreV1().Namespaces().List(ctx, sel); err != nil || len(l.Items) > 0 {
		t.Errorf("cleanup: namespaces of run %s left: %v (%v)", runID, l, err)
	}
	if l, err := dyn.Resource(crdGVR).List(ctx, sel); err != nil || len(l.Items) > 0 {
		t.Errorf("cleanup: CRDs of run %s left: %v (%v)", runID, l, err)
	}
}
