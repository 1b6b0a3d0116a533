package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
)

func (r *Run) createNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   r.Namespace,
		Labels: map[string]string{RunIDLabel: r.ID, LabLabel: r.Lab},
	}}
	if _, err := r.Env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", r.Namespace, err)
	}
	return cluster.WaitNamespaceReady(ctx, r.Env.Client, r.Namespace, time.Minute)
}

// namespaceSelector selects the run's namespaces, for a lab that makes its own.
func namespaceSelector(def Definition, id string) string {
	if !def.Uses.Namespaces {
		return ""
	}
	return RunIDLabel + "=" + id
}

func (r *Run) markKept(ctx context.Context) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, KeepLabel)
	_, err := r.Env.Client.CoreV1().Namespaces().Patch(ctx, r.Namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("marking namespace %s as kept: %w", r.Namespace, err)
	}
	return nil
}

func (r *Run) deleteNamespace(ctx context.Context) error {
	err := r.Env.Client.CoreV1().Namespaces().Delete(ctx, r.Namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", r.Namespace, err)
	}
	return nil
}

// ReleaseFinalizers removes every finalizer of a pod termlab created (the
// same merge patch a lab's remove-finalizers step sends). A pod that is
// already gone is not an error.
func ReleaseFinalizers(ctx context.Context, client kubernetes.Interface, namespace, pod string) error {
	_, err := client.CoreV1().Pods(namespace).Patch(ctx, pod, types.MergePatchType, []byte(finalizersPatch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizers of pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// removeLeftoverNodes deletes the nodes an earlier run created (a lab's own
// kwok fake nodes, labelled with its run id): that run did not finish.
func removeLeftoverNodes(ctx context.Context, client kubernetes.Interface, currentRunID string) ([]string, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		return nil, fmt.Errorf("listing nodes of earlier runs: %w", err)
	}
	byRun := map[string][]string{}
	var runs []string
	var errs []error
	for _, n := range list.Items {
		run := n.Labels[RunIDLabel]
		if run == currentRunID {
			continue
		}
		if err := client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting node %s of run %s: %w", n.Name, run, err))
			continue
		}
		if byRun[run] == nil {
			runs = append(runs, run)
		}
		byRun[run] = append(byRun[run], n.Name)
	}
	var repairs []string
	for _, run := range runs {
		repairs = append(repairs, fmt.Sprintf("%d node(s) of run %s were still there (it did not finish): deleted them (%s)", len(byRun[run]), run, strings.Join(byRun[run], ", ")))
	}
	return repairs, errors.Join(errs...)
}

// listedInFull is how many names a repair line lists: an interrupted
// lab:scale leaves a thousand, and one line per thousand names is noise.
const listedInFull = 5

// firstFew joins the first names and counts the rest.
func firstFew(names []string) string {
	if len(names) <= listedInFull {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:listedInFull], ", "), len(names)-listedInFull)
}

// releaseCustomResources removes the finalizers of every resource of the
// CRD, in every namespace, and returns how many it released.
func releaseCustomResources(ctx context.Context, dyn dynamic.Interface, crd unstructured.Unstructured) (int, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	n := 0
	var errs []error
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served || name == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: group, Version: name, Resource: plural}
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing %s: %w", crd.GetName(), err))
			}
			continue
		}
		for _, o := range l.Items {
			if len(o.GetFinalizers()) == 0 {
				continue
			}
			_, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.MergePatchType, []byte(finalizersPatch), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("removing the finalizers of %s %s/%s: %w", crd.GetName(), o.GetNamespace(), o.GetName(), err))
				continue
			}
			n++
		}
		break // one served version lists them all
	}
	return n, errors.Join(errs...)
}
