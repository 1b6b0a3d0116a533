package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/runlock"
)

// runNamespace is the run's namespace, which every run makes (no lab
// declares it), and what else a run labels with its id: a lab's own
// namespaces and cluster-scoped objects (Uses.Namespaces), kwok fake nodes.
// Nothing undoes it if termlab is killed: the next run's repair, or
// cluster:up, does.
type runNamespace struct{}

func (runNamespace) Name() string                 { return "makes a namespace of its own" }
func (runNamespace) Scope() Scope                 { return RunScope }
func (runNamespace) NodeSide() bool               { return false }
func (runNamespace) Guard(env *cluster.Env) error { return nil }
func (runNamespace) Switch() DeadMansSwitch {
	return DeadMansSwitch{What: "none: the next run's repair, or cluster:up, deletes it"}
}
func (runNamespace) Undo(ctx context.Context, r *Run) error { return r.removeNamespace(ctx) }

// Repair deletes what earlier runs labelled with their id: fake nodes,
// CRDs (their custom resources' finalizers first) and PersistentVolumes,
// then pods' finalizers and namespaces (keeping those kept on purpose or in
// use by a live termlab).
func (runNamespace) Repair(ctx context.Context, p *Repairs) error {
	return errors.Join(removeLeftoverNodes(ctx, p), removeLeftoverObjects(ctx, p), removeLeftoverNamespaces(ctx, p))
}

// removeLeftoverNamespaces removes the finalizers of earlier runs' pods and
// deletes their namespaces, and gives the deletions a bounded moment.
func removeLeftoverNamespaces(ctx context.Context, p *Repairs) error {
	var errs []error
	core := p.Env.Client.CoreV1()
	nsList, err := core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("listing namespaces of earlier runs: %w", err))...)
	}
	kept := map[string]bool{}
	var stale []string
	for _, ns := range nsList.Items {
		if ns.Labels[RunIDLabel] == p.CurrentRunID || slices.Contains(p.Env.InUse, ns.Name) {
			continue
		}
		if ns.DeletionTimestamp != nil {
			continue // already being deleted (a run's cleanup does not wait for it); stuck pods are handled below
		}
		if holder, err := runlock.AliveHolder(ctx, p.Env.Client, ns.Name); err != nil {
			errs = append(errs, err)
			continue
		} else if holder != "" {
			kept[ns.Name] = true
			p.Log.Infof("namespace %s is in use by %s: left alone", ns.Name, holder)
			continue
		}
		if ns.Labels[KeepLabel] == "true" {
			kept[ns.Name] = true
			p.Log.Infof("namespace %s was kept by an earlier run (delete it with: kubectl delete namespace %s)", ns.Name, ns.Name)
			continue
		}
		stale = append(stale, ns.Name)
	}

	stuck := map[string][]string{}
	_, err = EachPod(ctx, core.Pods(metav1.NamespaceAll), metav1.ListOptions{LabelSelector: RunIDLabel}, func(pod *corev1.Pod) error {
		if pod.Labels[RunIDLabel] == p.CurrentRunID || kept[pod.Namespace] || len(pod.Finalizers) == 0 {
			return nil
		}
		if err := ReleaseFinalizers(ctx, p.Env.Client, pod.Namespace, pod.Name); err != nil {
			errs = append(errs, fmt.Errorf("leftover pod %s/%s with finalizers %v: %w", pod.Namespace, pod.Name, pod.Finalizers, err))
			return nil
		}
		stuck[pod.Namespace] = append(stuck[pod.Namespace], fmt.Sprintf("%s %v", pod.Name, pod.Finalizers))
		return nil
	})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("listing pods of earlier runs: %w", err))...)
	}
	nsNames := make([]string, 0, len(stuck))
	for ns := range stuck {
		nsNames = append(nsNames, ns)
	}
	sort.Strings(nsNames)
	for _, ns := range nsNames {
		p.Say("pods of an earlier run in %s still had finalizers: removed them from %s", ns, firstFew(stuck[ns]))
	}

	zero := int64(0)
	for _, ns := range stale {
		// Pods played by kwok (its stage-set label) have no container
		// anywhere: force-deleted, thousands of them (a killed lab:scale)
		// go at once, instead of draining through kwok for minutes.
		err := core.Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: kwok.StageSetLabel})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("force-deleting the kwok pods of namespace %s of an earlier run: %w", ns, err))
		}
		err = core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting namespace %s of an earlier run: %w", ns, err))
			continue
		}
		p.Say("namespace %s of an earlier run was still there: deleted it", ns)
	}
	if len(stale) > 0 {
		// Give the deletions a bounded moment, so the new run starts on a quiet cluster.
		_ = wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			for _, ns := range stale {
				if _, err := core.Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, nil
				}
			}
			return true, nil
		})
	}
	return errors.Join(errs...)
}

// removeNamespace removes the run's namespace (the finalizers of its pods
// first), or marks it kept (Options.Keep).
func (r *Run) removeNamespace(ctx context.Context) error {
	var errs []error
	if r.opts.Keep {
		if err := r.markKept(ctx); err != nil {
			errs = append(errs, err)
		}
		r.Log.Infof("cleanup: keeping namespace %s and its pods (finalizers included): kubectl get pods -n %s", r.Namespace, r.Namespace)
		return errors.Join(errs...)
	}
	var held []string
	_, err := EachPod(ctx, r.Env.Client.CoreV1().Pods(r.Namespace), metav1.ListOptions{LabelSelector: RunIDLabel + "=" + r.ID}, func(p *corev1.Pod) error {
		if len(p.Finalizers) > 0 {
			held = append(held, p.Name)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the run's pods: %w", err))
	}
	for _, name := range held {
		if err := r.removeFinalizers(ctx, evidence.ActionCleanupRemoveFinalizers, name); err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) {
			errs = append(errs, err)
		}
	}
	if err := r.deleteNamespace(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Cluster-scoped objects a lab may make (Uses.Namespaces), labelled with
// its run id, that a killed run leaves behind.
var (
	CRDsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	pvsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
)

// removeLeftoverObjects removes the CRDs of earlier runs, each CRD's custom
// resources' finalizers first (nothing else would ever remove them: a CRD
// is deleted only once its resources are), then their PersistentVolumes.
func removeLeftoverObjects(ctx context.Context, p *Repairs) error {
	objs, err := newLeftoverObjects(p.Env, p.CurrentRunID, p.Say)
	if objs == nil {
		return err
	}
	for _, crd := range objs.list(ctx, CRDsGVR) {
		released, err := releaseCustomResources(ctx, objs.dyn, crd)
		if err != nil {
			objs.errs = append(objs.errs, err)
		}
		if released > 0 {
			p.Say("%d %s of run %s still had finalizers: removed them", released, crd.GetName(), crd.GetLabels()[RunIDLabel])
		}
		objs.remove(ctx, CRDsGVR, crd)
	}
	for _, o := range objs.list(ctx, pvsGVR) {
		objs.remove(ctx, pvsGVR, o)
	}
	return objs.err()
}

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
func removeLeftoverNodes(ctx context.Context, p *Repairs) error {
	client := p.Env.Client
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		return fmt.Errorf("listing nodes of earlier runs: %w", err)
	}
	byRun := map[string][]string{}
	var runs []string
	var errs []error
	for _, n := range list.Items {
		run := n.Labels[RunIDLabel]
		if run == p.CurrentRunID {
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
	for _, run := range runs {
		p.Say("%d node(s) of run %s were still there (it did not finish): deleted them (%s)", len(byRun[run]), run, strings.Join(byRun[run], ", "))
	}
	return errors.Join(errs...)
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
