// Package namespace is lab:namespace — what keeps a deleted namespace
// Terminating when no pod of it is stuck, how does the namespace itself say
// so, and what is the right way to release it?
//
// One cause per step, each in a namespace of its own (named and labelled
// with the run's id):
//
//  1. an APIService of the run's own group whose Service has no endpoints:
//     discovery fails for that group, and the namespace controller, which
//     must know every resource type before it may finalize a namespace,
//     reports NamespaceDeletionDiscoveryFailure and retries; deleting the
//     APIService releases it.
//  2. a custom resource with a finalizer whose controller does not run: the
//     namespace controller deletes it and waits, reporting
//     NamespaceContentRemaining and NamespaceFinalizersRemaining; removing
//     the finalizer, as its controller would, releases it.
//  3. a claim in use: the claim is deleted while a pod uses it (it stays,
//     held by kubernetes.io/pvc-protection), then the namespace: the
//     namespace controller deletes the pod first and the claim only after
//     the pod is gone, when the PVC protection controller lets it go.
//
// Nothing strips the namespaces' own finalizers: each goes when the
// namespace controller finalizes it. Everything the lab makes outside its
// namespaces (the APIService, the CRD, the PersistentVolume) carries the
// run's labels; cleanup deletes it on every exit path (the APIService at
// once on an interrupt: while it exists discovery fails cluster-wide), and
// the next run's repair deletes what a killed run left.
package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
)

// The lab's objects.
const (
	// Manifest is the pod that uses the claim (manifests/pods/namespace-user.yaml).
	Manifest = "namespace-user.yaml"
	// Pod and Claim are its name and its claim's.
	Pod   = "user"
	Claim = "data"
	// Service is the APIService's backend: a Service no pod matches.
	Service = "nobody"
	// Finalizer is the custom resource's finalizer, whose controller never runs.
	Finalizer = "lab.example.com/cleanup"
	// Resource is the custom resource's name, Plural its type's.
	Resource = "orphan"
	Plural   = "widgets"
	// PVCProtection is the PVC protection controller's finalizer.
	PVCProtection = "kubernetes.io/pvc-protection"
	// Users of the controllers, as the audit log names them
	// (kube-controller-manager --use-service-account-credentials).
	NamespaceController = "system:serviceaccount:kube-system:namespace-controller"
	PVCController       = "system:serviceaccount:kube-system:pvc-protection-controller"
)

// The namespace controller's condition types (k8s.io/api/core/v1).
const (
	DiscoveryFailure    = string(corev1.NamespaceDeletionDiscoveryFailure)
	ContentRemaining    = string(corev1.NamespaceContentRemaining)
	FinalizersRemaining = string(corev1.NamespaceFinalizersRemaining)
)

// Names of a run's objects, all holding the run's id.
func APIServiceNamespace(runNS string) string { return runNS + "-apiservice" }
func OrphanNamespace(runNS string) string     { return runNS + "-orphan" }
func APIGroup(runID string) string            { return runID + ".unavailable.termlab.dev" }
func APIServiceName(runID string) string      { return "v1." + APIGroup(runID) }
func CRDGroup(runID string) string            { return runID + ".orphaned.termlab.dev" }
func CRDName(runID string) string             { return Plural + "." + CRDGroup(runID) }
func PVName(runID string) string              { return "termlab-namespace-" + runID }

// Steps' names, as the claims find them.
const (
	stepSetup        = "create the three holds: an unavailable APIService, an orphaned custom resource, a claim in use"
	stepAPIDelete    = "apiservice: delete its namespace while the APIService is unavailable"
	stepAPIRelease   = "apiservice: delete the APIService"
	stepOrphanDelete = "orphan: delete its namespace while the custom resource has a finalizer no controller removes"
	stepOrphanFree   = "orphan: remove the finalizer, as its controller would"
	stepPVCDelete    = "pvc: delete the claim while the pod uses it"
	stepPVCNS        = "pvc: delete the namespace while its pod uses the claim"
	stepPVCGone      = "pvc: the pod goes first, the claim after it, then the namespace"
)

// Definition is the lab.
var Definition = lab.Definition{
	Name:      "namespace",
	Question:  "What keeps a deleted namespace Terminating when no pod in it is stuck — an unavailable APIService, a custom resource whose controller is gone, a claim in use — how does the namespace's own status say which, and does the right release (not stripping the namespace's finalizers) let it go, and how soon?",
	Summary:   "namespaces held by an unavailable APIService, an orphaned custom resource and a claim in use, each found from the namespace's conditions and released the right way",
	Predict:   "Three namespaces are deleted: one while an APIService has no backend, one holding a custom resource with a finalizer nobody removes, one whose pod uses a claim. Which ones stay Terminating, what do their conditions say, and what frees each?",
	Uses:      lab.Uses{Worker: 0, Namespaces: true, Changes: []lab.Change{lab.UnavailableAPIService{}}},
	Manifests: []string{Manifest},
	ByHand: []lab.HandStep{
		{Title: "an APIService with no backend holds a namespace",
			Do:  []string{"kubectl delete namespace {ns}-apiservice --wait=false"},
			See: []string{"kubectl get namespace {ns}-apiservice -o jsonpath='{.status.conditions}'", "kubectl get apiservices | grep False"}},
		{Title: "release it: delete (or fix) the APIService, never the namespace's finalizers",
			Do: []string{"kubectl delete apiservice v1.<run id>.unavailable.termlab.dev"}, See: []string{"kubectl get namespace {ns}-apiservice"}},
		{Title: "a custom resource with a finalizer whose controller is gone holds a namespace",
			Do:  []string{"kubectl delete namespace {ns}-orphan --wait=false"},
			See: []string{"kubectl get namespace {ns}-orphan -o jsonpath='{.status.conditions}'", "kubectl get widgets -n {ns}-orphan -o yaml"}},
		{Title: "release it: remove the finalizer as its controller would",
			Do: []string{"kubectl patch widgets orphan -n {ns}-orphan --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]'"}, See: []string{"kubectl get namespace {ns}-orphan"}},
		{Title: "a claim in use: delete it, then the namespace", Pod: Pod,
			Do:  []string{"kubectl delete pvc data -n {ns} --wait=false", "kubectl delete namespace {ns} --wait=false"},
			See: []string{"kubectl get pvc data -n {ns} -o jsonpath='{.metadata.finalizers}'", "kubectl get pods,pvc -n {ns}"}},
	},
	Steps:   steps,
	Claims:  Claims,
	Answer:  Answer,
	Moments: Moments,
}

// Bounds of the lab's waits: long enough to record what happens even when
// a claim rejects it (the claims' own bounds are tighter, claims.go).
const (
	// waitHeld: the namespace controller takes a deleted namespace 5 s
	// after its update (namespaceDeletionGracePeriod), then one pass.
	waitHeld = 30 * time.Second
	// goneWithin: the namespace controller retries a failing namespace at
	// least every 60 s (its rate limiter's cap); one pass more.
	goneWithin = 75 * time.Second
	// readyWithin bounds setting up: the CRD Established, the APIService
	// found unavailable, the claim Bound, the pod Running.
	readyWithin = 60 * time.Second
)

// Notes the run writes and the claims read back (JSON after the prefix).
const claimNote = "pvc: the claim at the namespace delete: "

// ClaimState is the claim as read right before its namespace is deleted.
type ClaimState struct {
	At                time.Time  `json:"at"`
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	Finalizers        []string   `json:"finalizers,omitempty"`
	Phase             string     `json:"phase,omitempty"`
}

type held struct {
	r   *lab.Run
	dyn dynamic.Interface
}

func (h *held) crGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: CRDGroup(h.r.ID), Version: "v1", Resource: Plural}
}

func steps(ctx context.Context, r *lab.Run) error {
	if r.Env.RESTConfig == nil {
		return errors.New("lab:namespace needs a REST config for APIServices and custom resources")
	}
	dyn, err := dynamic.NewForConfig(r.Env.RESTConfig)
	if err != nil {
		return err
	}
	h := &held{r: r, dyn: dyn}
	// Every exit path: what the lab made outside its namespaces goes, and
	// its other namespaces. The APIService goes at once on an interrupt:
	// while it is unavailable, discovery fails for the whole cluster.
	stop := context.AfterFunc(ctx, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		h.deleteAPIService(cctx)
	})
	defer stop()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := h.cleanup(cctx); err != nil {
			r.Log.Warnf("cleaning up lab:namespace's objects: %v", err)
		}
	}()

	worker, err := r.Worker(0)
	if err != nil {
		return err
	}
	if err := r.Step(ctx, stepSetup, func(ctx context.Context) error { return h.setup(ctx, worker) }); err != nil {
		return err
	}

	// 1. The unavailable APIService.
	apiNS, group := APIServiceNamespace(r.Namespace), APIGroup(r.ID)
	err = r.Step(ctx, stepAPIDelete, func(ctx context.Context) error {
		return h.deleteAndWait(ctx, apiNS, "report NamespaceDeletionDiscoveryFailure naming group "+group, func(e evidence.NamespaceEvent) bool {
			return e.True(DiscoveryFailure, group)
		})
	})
	if err != nil {
		return err
	}
	err = r.Step(ctx, stepAPIRelease, func(ctx context.Context) error {
		return h.releaseAndWait(ctx, apiNS, lab.APIAction{
			Kind: "delete-apiservice", Target: APIServiceName(r.ID), Resource: "apiservices", Verbs: []string{"delete"},
			Method: "DELETE", Path: "/apis/apiregistration.k8s.io/v1/apiservices/" + APIServiceName(r.ID),
			Equivalent: "kubectl delete apiservice " + APIServiceName(r.ID) + " --wait=false",
			Do: func(ctx context.Context) error {
				return h.dyn.Resource(lab.APIServicesGVR).Delete(ctx, APIServiceName(r.ID), metav1.DeleteOptions{})
			},
		})
	})
	if err != nil {
		return err
	}

	// 2. The orphaned custom resource.
	orphanNS := OrphanNamespace(r.Namespace)
	err = r.Step(ctx, stepOrphanDelete, func(ctx context.Context) error {
		return h.deleteAndWait(ctx, orphanNS, "report the custom resource and its finalizer remaining", func(e evidence.NamespaceEvent) bool {
			return e.True(ContentRemaining, CRDName(r.ID)) && e.True(FinalizersRemaining, Finalizer)
		})
	})
	if err != nil {
		return err
	}
	err = r.Step(ctx, stepOrphanFree, func(ctx context.Context) error {
		// A JSON patch that removes the one finalizer, as a controller's
		// Update would: a merge patch of finalizers null would take every
		// finalizer, others' too.
		patch := `[{"op":"test","path":"/metadata/finalizers/0","value":"` + Finalizer + `"},{"op":"remove","path":"/metadata/finalizers/0"}]`
		return h.releaseAndWait(ctx, orphanNS, lab.APIAction{
			Kind: "remove-finalizer", Target: Resource, Resource: Plural, Verbs: []string{"patch", "update"},
			Method: "PATCH", Path: "/apis/" + CRDGroup(r.ID) + "/v1/namespaces/" + orphanNS + "/" + Plural + "/" + Resource,
			PatchType: string(types.JSONPatchType), Body: json.RawMessage(patch),
			Equivalent: fmt.Sprintf("kubectl patch %s.%s %s -n %s --type=json -p '%s'", Plural, CRDGroup(r.ID), Resource, orphanNS, patch),
			Do: func(ctx context.Context) error {
				_, err := h.dyn.Resource(h.crGVR()).Namespace(orphanNS).Patch(ctx, Resource, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
				return err
			},
		})
	})
	if err != nil {
		return err
	}

	// 3. The claim in use.
	err = r.Step(ctx, stepPVCDelete, func(ctx context.Context) error {
		return r.Perform(ctx, lab.APIAction{
			Kind: "delete-pvc", Target: Claim, Resource: "persistentvolumeclaims", Verbs: []string{"delete"},
			Method: "DELETE", Path: "/api/v1/namespaces/" + r.Namespace + "/persistentvolumeclaims/" + Claim,
			Equivalent: fmt.Sprintf("kubectl delete pvc %s -n %s --wait=false", Claim, r.Namespace),
			Do: func(ctx context.Context) error {
				return r.Env.Client.CoreV1().PersistentVolumeClaims(r.Namespace).Delete(ctx, Claim, metav1.DeleteOptions{})
			},
		})
	})
	if err != nil {
		return err
	}
	// The pod's and the namespace's ends are the cluster's: the bound
	// starts at the namespace delete, and waits begin before it.
	wctx, started, cancel := lab.BoundAfter(ctx, lab.Bound{What: "the pod DELETED and namespace " + r.Namespace + " gone", Allow: goneWithin,
		Why: "the pod's 10 s grace period, then the namespace controller's next passes (at least every 60 s)"})
	defer cancel()
	err = r.Step(ctx, stepPVCNS, func(ctx context.Context) error {
		// The claim as the namespace delete finds it: deleted, and kept.
		if c, err := r.Env.Client.CoreV1().PersistentVolumeClaims(r.Namespace).Get(ctx, Claim, metav1.GetOptions{}); err == nil {
			s := ClaimState{At: time.Now().UTC(), Finalizers: c.Finalizers, Phase: string(c.Status.Phase)}
			if c.DeletionTimestamp != nil {
				t := c.DeletionTimestamp.UTC()
				s.DeletionTimestamp = &t
			}
			b, _ := json.Marshal(s)
			r.Rec.Notef("%s%s", claimNote, b)
			r.Infof("claim %s: deletionTimestamp %v, finalizers %v", Claim, c.DeletionTimestamp, c.Finalizers)
		} else {
			r.Rec.Notef("%s{} (GET: %v)", claimNote, err)
		}
		if err := h.deleteNamespace(ctx, r.Namespace); err != nil {
			return err
		}
		started("the namespace delete (by " + r.ActedBy() + ")")
		return nil
	})
	if err != nil {
		return err
	}
	return r.Step(ctx, stepPVCGone, func(ctx context.Context) error {
		if _, err := r.Rec.WaitPod(wctx, Pod, "be DELETED", func(e evidence.PodEvent) bool { return e.Type == "DELETED" }); err != nil {
			return r.Unobserved(ctx, err)
		}
		r.Infof("pod %s gone", Pod)
		return h.waitGone(wctx, ctx, r.Namespace)
	})
}

// setup creates the three holds and waits until each holds.
func (h *held) setup(ctx context.Context, worker cluster.Node) error {
	r := h.r
	ctx, cancel := context.WithTimeout(ctx, readyWithin)
	defer cancel()
	labels := map[string]string{lab.RunIDLabel: r.ID, lab.LabLabel: r.Lab}
	for _, ns := range []string{APIServiceNamespace(r.Namespace), OrphanNamespace(r.Namespace)} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
		n.APIVersion, n.Kind = "v1", "Namespace"
		if err := h.create(ctx, "create-namespace", "/api/v1/namespaces", n, func() error {
			_, err := r.Env.Client.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	// The APIService's backend: a Service in the run's namespace no pod matches.
	if err := r.CreateObject(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: Service},
		Spec: corev1.ServiceSpec{Selector: map[string]string{lab.RunIDLabel: r.ID, "termlab.dev/no-such-pod": "true"},
			Ports: []corev1.ServicePort{{Port: 443}}},
	}); err != nil {
		return err
	}
	if err := h.createAPIService(ctx, labels); err != nil {
		return err
	}
	if err := h.createCRD(ctx, labels); err != nil {
		return err
	}
	if err := h.createClaim(ctx, worker, labels); err != nil {
		return err
	}
	if _, err := r.CreatePodEdited(ctx, Manifest, lab.Placement{Node: worker.String()}, nil); err != nil {
		return err
	}
	if _, err := r.WaitRunning(ctx, Pod, readyWithin); err != nil {
		return err
	}
	// Reaching a state: the aggregator has found the Service without endpoints.
	return h.poll(ctx, "APIService "+APIServiceName(r.ID)+" Available=False", func(ctx context.Context) (bool, string) {
		u, err := h.dyn.Resource(lab.APIServicesGVR).Get(ctx, APIServiceName(r.ID), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Available" {
				s := fmt.Sprintf("Available=%v (%v: %v)", m["status"], m["reason"], m["message"])
				if m["status"] == "False" {
					r.Infof("APIService %s: %s", APIServiceName(r.ID), s)
				}
				return m["status"] == "False", s
			}
		}
		return false, "no Available condition yet"
	})
}

// create records the create of obj (saved under inputs/objects/) and sends it.
func (h *held) create(ctx context.Context, kind, path string, obj any, do func() error) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	name := kind
	if o, ok := obj.(metav1.Object); ok {
		name = o.GetName()
	} else if u, ok := obj.(*unstructured.Unstructured); ok {
		name = u.GetName()
	}
	file, err := h.r.Rec.WriteFile("inputs/objects/"+kind[len("create-"):]+"-"+name+".sent.yaml", b)
	if err != nil {
		return err
	}
	if err := h.r.Act(evidence.ActionKind(kind), name, map[string]any{"verb": "POST", "path": path, "body": obj}, "kubectl create -f "+file, do); err != nil {
		return fmt.Errorf("%s %s: %w", kind, name, err)
	}
	return nil
}

func (h *held) createAPIService(ctx context.Context, labels map[string]string) error {
	r := h.r
	// Its switch first: every tenant's namespace deletion waits while the
	// APIService exists, so it must go even if termlab is killed.
	if err := r.ArmAPIServiceSwitch(ctx, APIServiceName(r.ID)); err != nil {
		return err
	}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": APIServiceName(r.ID), "labels": toAny(labels)},
		"spec": map[string]any{
			"group": APIGroup(r.ID), "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": r.Namespace, "name": Service, "port": int64(443)},
		},
	}}
	return h.create(ctx, "create-apiservice", "/apis/apiregistration.k8s.io/v1/apiservices", svc, func() error {
		_, err := h.dyn.Resource(lab.APIServicesGVR).Create(ctx, svc, metav1.CreateOptions{})
		return err
	})
}

func (h *held) createCRD(ctx context.Context, labels map[string]string) error {
	r := h.r
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": CRDName(r.ID), "labels": toAny(labels)},
		"spec": map[string]any{
			"group": CRDGroup(r.ID), "scope": "Namespaced",
			"names": map[string]any{"plural": Plural, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if err := h.create(ctx, "create-customresourcedefinition", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, func() error {
		_, err := h.dyn.Resource(lab.CRDsGVR).Create(ctx, crd, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	// Reaching a state: the CRD is Established, so its resources may be created.
	err := h.poll(ctx, "CRD "+CRDName(r.ID)+" Established", func(ctx context.Context) (bool, string) {
		u, err := h.dyn.Resource(lab.CRDsGVR).Get(ctx, CRDName(r.ID), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, "Established"
			}
		}
		return false, "not Established yet"
	})
	if err != nil {
		return err
	}
	ns := OrphanNamespace(r.Namespace)
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": CRDGroup(r.ID) + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": Resource, "namespace": ns, "labels": toAny(labels), "finalizers": []any{Finalizer}},
	}}
	return h.create(ctx, "create-widget", "/apis/"+CRDGroup(r.ID)+"/v1/namespaces/"+ns+"/"+Plural, cr, func() error {
		_, err := h.dyn.Resource(h.crGVR()).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{})
		return err
	})
}

// createClaim makes a PersistentVolume pre-bound to the claim (there is no
// provisioner) and the claim, and waits until it is Bound. The volume is
// the node's /tmp, read only, of type Directory: nothing is made on the
// node, so nothing is left there.
func (h *held) createClaim(ctx context.Context, worker cluster.Node, labels map[string]string) error {
	r := h.r
	size := resource.MustParse("1Mi")
	dir := corev1.HostPathDirectory
	empty := ""
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: PVName(r.ID), Labels: labels},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &corev1.ObjectReference{Namespace: r.Namespace, Name: Claim},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp", Type: &dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{worker.String()}}},
			}}}},
		},
	}
	if err := h.create(ctx, "create-persistentvolume", "/api/v1/persistentvolumes", pv, func() error {
		_, err := r.Env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: Claim, Namespace: r.Namespace, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &empty, VolumeName: PVName(r.ID),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if err := h.create(ctx, "create-persistentvolumeclaim", "/api/v1/namespaces/"+r.Namespace+"/persistentvolumeclaims", pvc, func() error {
		_, err := r.Env.Client.CoreV1().PersistentVolumeClaims(r.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	return h.poll(ctx, "claim "+Claim+" Bound", func(ctx context.Context) (bool, string) {
		c, err := r.Env.Client.CoreV1().PersistentVolumeClaims(r.Namespace).Get(ctx, Claim, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return c.Status.Phase == corev1.ClaimBound, string(c.Status.Phase)
	})
}

// poll reaches a state (not history: the record has that), saying the last
// thing seen when it does not come.
func (h *held) poll(ctx context.Context, what string, cond func(ctx context.Context) (bool, string)) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, s := cond(ctx)
		last = s
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last: %s)", what, err, last)
	}
	return nil
}

// deleteNamespace deletes one of the run's namespaces (termlab or the actor).
func (h *held) deleteNamespace(ctx context.Context, ns string) error {
	return h.r.Perform(ctx, lab.APIAction{
		Kind: evidence.ActionDeleteNamespace, Target: ns, Resource: "namespaces", Verbs: []string{"delete"},
		Method: "DELETE", Path: "/api/v1/namespaces/" + ns,
		Equivalent: "kubectl delete namespace " + ns + " --wait=false",
		Do: func(ctx context.Context) error {
			return h.r.Env.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		},
	})
}

// deleteAndWait deletes the namespace and waits on its watch until cond
// holds: the hold, as the namespace itself says it.
func (h *held) deleteAndWait(ctx context.Context, ns, what string, cond func(evidence.NamespaceEvent) bool) error {
	wctx, started, cancel := lab.BoundAfter(ctx, lab.Bound{What: "namespace " + ns + " to " + what, Allow: waitHeld,
		Why: "the namespace controller takes a deleted namespace 5 s after the change, then one pass"})
	defer cancel()
	if err := h.deleteNamespace(ctx, ns); err != nil {
		return err
	}
	started("the namespace delete (by " + h.r.ActedBy() + ")")
	e, err := h.r.Rec.WaitNamespace(wctx, ns, what, func(e evidence.NamespaceEvent) bool {
		return e.Type != "DELETED" && cond(e)
	})
	if err != nil {
		return err
	}
	for _, c := range e.Conditions {
		if c.Status == "True" {
			h.r.Infof("namespace %s: %s=True: %s", ns, c.Type, c.Message)
		}
	}
	return nil
}

// releaseAndWait does the release and waits until the namespace is gone.
func (h *held) releaseAndWait(ctx context.Context, ns string, release lab.APIAction) error {
	wctx, started, cancel := lab.BoundAfter(ctx, lab.Bound{What: "namespace " + ns + " gone", Allow: goneWithin,
		Why: "the namespace controller retries a namespace at least every 60 s (its rate limiter's cap), then one pass"})
	defer cancel()
	if err := h.r.Perform(ctx, release); err != nil {
		return err
	}
	started(string(release.Kind) + " (by " + h.r.ActedBy() + ")")
	return h.waitGone(wctx, ctx, ns)
}

func (h *held) waitGone(wctx, ctx context.Context, ns string) error {
	if _, err := h.r.Rec.WaitNamespace(wctx, ns, "be gone (DELETED)", func(e evidence.NamespaceEvent) bool { return e.Type == "DELETED" }); err != nil {
		return err
	}
	h.r.Infof("namespace %s gone", ns)
	return nil
}

func (h *held) deleteAPIService(ctx context.Context) {
	err := h.dyn.Resource(lab.APIServicesGVR).Delete(ctx, APIServiceName(h.r.ID), metav1.DeleteOptions{})
	if err == nil {
		h.r.Log.Infof("cleanup: deleted APIService %s", APIServiceName(h.r.ID))
	} else if !apierrors.IsNotFound(err) {
		h.r.Log.Warnf("cleanup: deleting APIService %s: %v", APIServiceName(h.r.ID), err)
	}
}

// cleanup deletes what the run made outside its own namespace, whatever
// state the steps left it in: the APIService, the custom resource's
// finalizer and the CRD, the run's other namespaces, the PersistentVolume.
// The runner deletes the run's namespace (and its pod and claim) after it.
func (h *held) cleanup(ctx context.Context) error {
	r := h.r
	h.deleteAPIService(ctx)
	var errs []error
	gone := func(err error) error {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if _, err := h.dyn.Resource(h.crGVR()).Namespace(OrphanNamespace(r.Namespace)).Patch(ctx, Resource, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); gone(err) != nil {
		errs = append(errs, fmt.Errorf("removing the finalizer of %s: %w", Resource, err))
	}
	if err := h.dyn.Resource(lab.CRDsGVR).Delete(ctx, CRDName(r.ID), metav1.DeleteOptions{}); gone(err) != nil {
		errs = append(errs, fmt.Errorf("deleting CRD %s: %w", CRDName(r.ID), err))
	}
	for _, ns := range []string{APIServiceNamespace(r.Namespace), OrphanNamespace(r.Namespace)} {
		if err := r.Env.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); gone(err) != nil {
			errs = append(errs, fmt.Errorf("deleting namespace %s: %w", ns, err))
		}
	}
	if err := r.Env.Client.CoreV1().PersistentVolumes().Delete(ctx, PVName(r.ID), metav1.DeleteOptions{}); gone(err) != nil {
		errs = append(errs, fmt.Errorf("deleting PersistentVolume %s: %w", PVName(r.ID), err))
	}
	return errors.Join(errs...)
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
