package diagnose

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
)

// failingDiscovery answers like FakeDiscovery, except that one group
// version fails, as an APIService whose backend is down does.
type failingDiscovery struct {
	*fakediscovery.FakeDiscovery
	fail string
}

var errUnavailable = errors.New("the server is currently unable to handle the request")

func (f failingDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return f.ServerResourcesForGroupVersionWithContext(context.Background(), gv)
}

func (f failingDiscovery) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	if gv == f.fail {
		return nil, errUnavailable
	}
	return f.FakeDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
}

// withDiscovery is a fake clientset whose Discovery is replaced.
type withDiscovery struct {
	*fake.Clientset
	d discovery.DiscoveryInterfaces
}

func (c withDiscovery) Discovery() discovery.DiscoveryInterfaces { return c.d }

// CollectNamespace keeps discovery's partial results and its failed groups
// both, lists what the discovered types hold, reads the APIServices'
// Available condition and who added each finalizer. The fakes know nothing
// of deletion; only reading is tested here.
func TestCollectNamespaceKeepsPartialDiscovery(t *testing.T) {
	deleted := metav1.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", DeletionTimestamp: &deleted},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	client := fake.NewSimpleClientset(ns)
	list := func(gv string, names ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for _, n := range names {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: n, Namespaced: true, Verbs: metav1.Verbs{"list", "get", "delete"}})
		}
		return l
	}
	client.Resources = []*metav1.APIResourceList{list("v1", "pods", "pods/log", "secrets"), list("example.com/v1", "widgets"), list("metrics.k8s.io/v1beta1", "pods")}
	disco := failingDiscovery{FakeDiscovery: client.Discovery().(*fakediscovery.FakeDiscovery), fail: "metrics.k8s.io/v1beta1"}

	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	w.SetName("w1")
	w.SetNamespace("ns")
	w.SetFinalizers([]string{widgetFinalizer})
	w.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "widget-operator", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:finalizers":{".":{},"v:\"` + widgetFinalizer + `\"":{}}}}`)}}})
	apiService := func(name, group, version, status, reason string, svc map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"spec":   map[string]any{"group": group, "version": version},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": status, "reason": reason, "message": reason + " message"}}}}}
		if svc != nil {
			u.Object["spec"].(map[string]any)["service"] = svc
		}
		u.SetName(name)
		return u
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		podsGVR: "PodList", widgetsGVR: "WidgetList", apiServicesGVR: "APIServiceList",
		{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}: "PodMetricsList",
	}, w,
		apiService("v1.", "", "v1", "True", "Local", nil),
		apiService("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1", "False", "MissingEndpoints", map[string]any{"namespace": "kube-system", "name": "metrics-server"}))

	// The leftovers as the metadata client sees them: metadata only. A
	// Secret with a finalizer is among them; its data must never be asked for.
	partial := func(apiVersion, kind, name string, finalizers []string, managed []metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Finalizers: finalizers, ManagedFields: managed}}
	}
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme,
		partial("example.com/v1", "Widget", "w1", w.GetFinalizers(), w.GetManagedFields()),
		partial("v1", "Secret", "token", []string{"example.com/keep"}, nil))

	c, raw, err := CollectNamespace(context.Background(), Source{Client: withDiscovery{client, disco}, Dynamic: dyn, Metadata: meta}, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Discovery.Failed["metrics.k8s.io/v1beta1"]; !strings.Contains(got, errUnavailable.Error()) {
		t.Errorf("failed groups %v: the metrics group's failure was not kept", c.Discovery.Failed)
	}
	if c.Discovery.Types != 3 {
		t.Errorf("discovered %d types, want 3 (pods, secrets, widgets.example.com; no subresource): the partial result was not kept", c.Discovery.Types)
	}
	if len(c.Types) != 2 || c.Types[0].Resource != "secrets" || c.Types[1].Resource != widgets || len(c.Types[1].Objects) != 1 {
		t.Fatalf("remaining %+v, want secret token and widget w1", c.Types)
	}
	// No request ever carried a Secret's body: neither the typed nor the
	// dynamic client touched secrets; the metadata client did (LIST, dry-run PATCH).
	for _, a := range append(client.Actions(), dyn.Actions()...) {
		if a.GetResource().Resource == "secrets" {
			t.Errorf("%s secrets through a client that returns bodies", a.GetVerb())
		}
	}
	verbs := map[string]bool{}
	for _, a := range meta.Actions() {
		if a.GetResource().Resource == "secrets" {
			verbs[a.GetVerb()] = true
		}
	}
	if !verbs["list"] || !verbs["patch"] {
		t.Errorf("metadata client's secrets requests %v, want list and the dry-run patch", verbs)
	}
	c.Types = c.Types[1:]
	if m := c.Types[0].Objects[0].Managers[widgetFinalizer]; m != "widget-operator" {
		t.Errorf("manager of %s: %q", widgetFinalizer, m)
	}
	if ctl := c.Controllers[widgetFinalizer]; ctl.Present != Absent || ctl.Manager != "widget-operator" {
		t.Errorf("controller %+v, want widget-operator absent", ctl)
	}
	var bad APIServiceState
	for _, s := range c.APIServices {
		if s.Name == "v1beta1.metrics.k8s.io" {
			bad = s
		}
	}
	if bad.Available != "False" || bad.Reason != "MissingEndpoints" || bad.Service != "kube-system/metrics-server" || bad.Group != "metrics.k8s.io" {
		t.Errorf("APIService %+v", bad)
	}
	for _, f := range []string{NamespaceFile, DiscoveryFile, APIServicesFile, TypeFile(widgets)} {
		if len(raw[f]) == 0 {
			t.Errorf("no raw %s", f)
		}
	}
	r := DecideNamespace(c)
	contains(t, "answer", r.Answer, "1 widgets.example.com (w1) remains, held by finalizer "+widgetFinalizer+", added by widget-operator",
		"Discovery failed for metrics.k8s.io/v1beta1", "APIService v1beta1.metrics.k8s.io is unavailable (MissingEndpoints)")
}
