package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	widgetFinalizer = "example.com/cleanup"
	widgets         = "widgets.example.com"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// heldNamespace is namespace "ns", deleted 3 minutes before now, whose only
// leftover is widget w1 with a finalizer added by manager, whose controller
// is absent; the namespace controller reports it in its conditions. Each
// test turns one thing around.
func heldNamespace() NamespaceCollected {
	deleted := metav1.NewTime(now.Add(-3 * time.Minute))
	since := metav1.NewTime(now.Add(-170 * time.Second))
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "ns", DeletionTimestamp: &deleted},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{
			{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionFalse, Reason: "ResourcesDiscovered", LastTransitionTime: since},
			{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, Reason: "ContentDeleted", LastTransitionTime: since},
			{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, Reason: "SomeResourcesRemain", LastTransitionTime: since,
				Message: "Some resources are remaining: widgets.example.com has 1 resource instances"},
			{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, Reason: "SomeFinalizersRemain", LastTransitionTime: since,
				Message: "Some content in the namespace has finalizers remaining: example.com/cleanup in 1 resource instances"},
		}},
	}
	return NamespaceCollected{
		At: now, Name: "ns", Namespace: ns,
		Discovery:   DiscoveryCheck{Types: 30},
		APIServices: []APIServiceState{{Name: "v1.", Version: "v1", Available: "True", Reason: "Local"}},
		Types: []TypeRemains{{Resource: widgets, GVR: widgetsGVR, Kind: "Widget", Objects: []RemainingObject{{
			Name: "w1", UID: "uid-w1", DeletionTimestamp: &deleted, Finalizers: []string{widgetFinalizer},
			Managers: map[string]string{widgetFinalizer: manager},
		}}}},
		Controllers: map[string]ControllerCheck{widgetFinalizer: {Manager: manager, Present: Absent, Evidence: "no running pod and no leader Lease named after " + manager}},
		DryRuns:     map[string]DryRun{ObjectRef(widgets, "w1"): {Patch: FinalizersPatch}},
	}
}

func mustFindNS(t *testing.T, r NamespaceReport, id string) Finding {
	t.Helper()
	f, ok := r.Finding(id)
	if !ok {
		t.Fatalf("no finding %s in %+v", id, r.Findings)
	}
	return f
}

func TestNamespaceHeldByFinalizer(t *testing.T) {
	r := DecideNamespace(heldNamespace())
	t.Logf("answer: %s\nadvice:\n%s", r.Answer, strings.Join(r.Advice, "\n"))
	contains(t, "answer", r.Answer,
		"Namespace ns is Terminating for 3m0s: 1 widgets.example.com (w1) remains, held by finalizer example.com/cleanup, added by e2e.test, whose controller is not running",
		"kubernetes finalizer stays")
	if f := mustFindNS(t, r, FindRemaining(widgets)); f.Level != Blocking || f.Verdict != "held" {
		t.Errorf("remaining: %+v, want blocking held", f)
	}
	f := mustFindNS(t, r, FindFinalizer(widgetFinalizer))
	if f.Level != Blocking || !strings.Contains(f.Text, "added by e2e.test") || !strings.Contains(f.Text, "No controller") {
		t.Errorf("finalizer: %+v", f)
	}
	if len(f.Evidence) != 1 || !strings.HasPrefix(f.Evidence[0], TypeFile(widgets)) {
		t.Errorf("finalizer evidence %v, want %s", f.Evidence, TypeFile(widgets))
	}
	for ct, want := range map[corev1.NamespaceConditionType]Level{
		corev1.NamespaceFinalizersRemaining: Blocking, corev1.NamespaceContentRemaining: Blocking,
		corev1.NamespaceDeletionDiscoveryFailure: Info, corev1.NamespaceDeletionContentFailure: Info,
	} {
		if f := mustFindNS(t, r, FindNSCondition(ct)); f.Level != want {
			t.Errorf("%s: %+v, want %s", ct, f, want)
		}
	}
	if f := mustFindNS(t, r, FindDryRun); f.Verdict != "accepted" {
		t.Errorf("dry run: %+v", f)
	}
	if f := mustFindNS(t, r, FindAPIServices); f.Verdict != "available" {
		t.Errorf("apiservices: %+v", f)
	}
	advice := strings.Join(r.Advice, "\n")
	contains(t, "advice", advice,
		"Safe: bring back the controller that owns example.com/cleanup (added by e2e.test)",
		`Risky: remove the finalizers of widgets.example.com w1 by hand (`+"`"+`kubectl patch widgets.example.com w1 -n ns --type=merge -p '{"metadata":{"finalizers":null}}'`+"`",
		"Never remove the namespace's own kubernetes finalizer", "here 1 object remains")
	if !strings.HasPrefix(r.Advice[0], "Safe:") {
		t.Errorf("advice does not start with the safe step: %q", r.Advice[0])
	}
}

// The contradicting case: the only leftover carries no finalizer.
func TestNamespaceLeftoverWithoutFinalizer(t *testing.T) {
	c := heldNamespace()
	c.Types[0].Objects[0].Finalizers, c.Types[0].Objects[0].Managers = nil, nil
	c.Controllers, c.DryRuns = map[string]ControllerCheck{}, nil
	r := DecideNamespace(c)
	if f := mustFindNS(t, r, FindRemaining(widgets)); f.Level != Warning || f.Verdict != "no finalizer" {
		t.Errorf("remaining: %+v, want warning no finalizer", f)
	}
	if _, ok := r.Finding(FindFinalizer(widgetFinalizer)); ok {
		t.Errorf("a finalizer finding without a finalizer: %+v", r.Findings)
	}
	contains(t, "answer", r.Answer, "1 widgets.example.com (w1) remains without a finalizer")
	lacks(t, "answer", r.Answer, "held by", "whose controller")
	lacks(t, "advice", strings.Join(r.Advice, "\n"), "Risky", "bring back")
}

func TestNamespaceControllerPresent(t *testing.T) {
	c := heldNamespace()
	c.Controllers[widgetFinalizer] = ControllerCheck{Manager: manager, Present: Present, Evidence: "pod ops/widget-controller-1 runs"}
	r := DecideNamespace(c)
	contains(t, "answer", r.Answer, "whose controller runs (pod ops/widget-controller-1 runs)")
	advice := strings.Join(r.Advice, "\n")
	contains(t, "advice", advice, "Wait: then look at the controller")
	lacks(t, "advice", advice, "bring back")
}

func TestNamespaceAPIServiceUnavailable(t *testing.T) {
	c := heldNamespace()
	c.Types = nil
	c.Controllers, c.DryRuns = map[string]ControllerCheck{}, nil
	c.Discovery.Failed = map[string]string{"metrics.k8s.io/v1beta1": "the server is currently unable to handle the request"}
	c.APIServices = append(c.APIServices, APIServiceState{Name: "v1beta1.metrics.k8s.io", Group: "metrics.k8s.io", Version: "v1beta1",
		Service: "kube-system/metrics-server", Available: "False", Reason: "MissingEndpoints", Message: "endpoints for service/metrics-server in kube-system have no addresses"})
	r := DecideNamespace(c)
	f := mustFindNS(t, r, FindAPIService("v1beta1.metrics.k8s.io"))
	if f.Level != Blocking || !strings.Contains(f.Text, "Discovery did fail for it here") {
		t.Errorf("apiservice: %+v", f)
	}
	if f := mustFindNS(t, r, FindDiscovery); f.Level != Blocking || f.Verdict != "failed" {
		t.Errorf("discovery: %+v", f)
	}
	if _, ok := r.Finding(FindAPIServices); ok {
		t.Errorf("an all-available finding beside an unavailable APIService")
	}
	contains(t, "answer", r.Answer, "nothing remains among the types that could be listed", "Discovery failed for metrics.k8s.io/v1beta1",
		"APIService v1beta1.metrics.k8s.io is unavailable (MissingEndpoints)")
	advice := strings.Join(r.Advice, "\n")
	contains(t, "advice", advice, "Safe: fix APIService v1beta1.metrics.k8s.io", "service kube-system/metrics-server", "discovery failed, so what is left")
	lacks(t, "advice", advice, "Wait:")

	// Available again: no finding blocks, and the advice is to wait.
	c.APIServices[1].Available, c.Discovery.Failed = "True", nil
	r = DecideNamespace(c)
	if _, ok := r.Finding(FindAPIService("v1beta1.metrics.k8s.io")); ok {
		t.Errorf("an available APIService has a finding")
	}
	contains(t, "answer", r.Answer, "nothing remains in it that could be listed", "namespace controller removes on its next pass")
	contains(t, "advice", strings.Join(r.Advice, "\n"), "Wait: nothing holds the namespace")
}

func TestNamespaceNotBeingDeleted(t *testing.T) {
	c := heldNamespace()
	c.Namespace.DeletionTimestamp = nil
	c.Namespace.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	c.Types[0].Objects[0].DeletionTimestamp = nil
	r := DecideNamespace(c)
	if f := mustFindNS(t, r, FindNSDeletion); f.Verdict != "not requested" {
		t.Errorf("deletion: %+v", f)
	}
	for _, id := range []string{FindRemaining(widgets), FindFinalizer(widgetFinalizer)} {
		if f := mustFindNS(t, r, id); f.Level != Info {
			t.Errorf("%s: %+v, want info on a namespace not being deleted", id, f)
		}
	}
	contains(t, "answer", r.Answer, "Namespace ns is not being deleted (phase Active", "holds 1 object, 1 of them with finalizers")
	lacks(t, "answer", r.Answer, "Terminating")
	if strings.Join(r.Advice, "\n") != "Nothing to do: the namespace is not being deleted." {
		t.Errorf("advice %q", r.Advice)
	}
}

func TestNamespaceMissing(t *testing.T) {
	r := DecideNamespace(NamespaceCollected{At: now, Name: "gone"})
	contains(t, "answer", r.Answer, "Namespace gone does not exist")
	if len(r.Findings) != 0 {
		t.Errorf("findings about a missing namespace: %+v", r.Findings)
	}
}

func TestNamespaceDryRunRejected(t *testing.T) {
	c := heldNamespace()
	c.DryRuns[ObjectRef(widgets, "w1")] = DryRun{Patch: FinalizersPatch, Code: 400,
		Err: `admission webhook "deny.example.com" denied the request: finalizers are managed`}
	r := DecideNamespace(c)
	f := mustFindNS(t, r, FindDryRun)
	if f.Level != Blocking || !strings.Contains(f.Text, `admission webhook "deny.example.com"`) {
		t.Errorf("dry run: %+v", f)
	}
	contains(t, "answer", r.Answer, "would be rejected")
	contains(t, "advice", strings.Join(r.Advice, "\n"), "would be refused today")
}

// A remaining pod is diagnosed as a pod; its answer and first advice are
// part of the namespace's.
func TestNamespaceRemainingPod(t *testing.T) {
	c := heldNamespace()
	pc := withFinalizer(exited(terminating()), Absent)
	pod := Decide(pc)
	c.Types = append(c.Types, TypeRemains{Resource: "pods", GVR: podsGVR, Kind: "Pod", Objects: []RemainingObject{{
		Name: "held", Finalizers: []string{finalizer}, Managers: map[string]string{finalizer: manager}}}})
	c.Controllers[finalizer] = ControllerCheck{Manager: manager, Present: Absent, Evidence: "evidence"}
	c.Pods = []PodDiagnosis{{Name: "held", Report: pod}}
	r := DecideNamespace(c)
	f := mustFindNS(t, r, FindPod("held"))
	if f.Level != Blocking || f.Text != pod.Answer || f.Evidence[0] != "pods/held/"+MarkdownFile {
		t.Errorf("pod finding: %+v", f)
	}
	contains(t, "answer", r.Answer, "1 pods (held) remains, held by finalizer "+finalizer, pod.Answer)
	advice := strings.Join(r.Advice, "\n")
	contains(t, "advice", advice, "Pod held: "+pod.Advice[0])
	lacks(t, "advice", advice, "kubectl patch pods held") // the pod's own advice has its patch
	if len(r.Pods) != 1 || r.Pods[0].Dir != "pods/held" {
		t.Errorf("pods %+v", r.Pods)
	}

	if _, ok := r.Finding(FindNSOrdered); ok {
		t.Errorf("w1 has a deletionTimestamp, yet a finding says it waits on pods")
	}

	// w1 was never asked to go: the namespace controller waits on the pod first.
	c.Types[0].Objects[0].DeletionTimestamp = nil
	r = DecideNamespace(c)
	if f := mustFindNS(t, r, FindNSOrdered); f.Level != Blocking || !strings.Contains(f.Text, "widgets.example.com/w1 has no deletionTimestamp") {
		t.Errorf("pods-first finding: %+v", f)
	}
	contains(t, "answer", r.Answer, "Nothing else is being deleted yet: the namespace controller deletes pods first and waits until every pod is gone, so pod held holds everything.",
		"Waiting behind it: 1 widgets.example.com (w1) remains, held by finalizer example.com/cleanup")
	lacks(t, "answer", r.Answer, "without finalizers")
	c.Types = append(c.Types, TypeRemains{Resource: "configmaps", GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Objects: []RemainingObject{{Name: "kube-root-ca.crt"}}})
	contains(t, "answer", DecideNamespace(c).Answer, "; 1 object without finalizers (configmaps).")

	// A pod that could not be read is "not checked", never a guess.
	c.Pods = []PodDiagnosis{{Name: "held", Err: "reading pod ns/held: timeout"}}
	if f := mustFindNS(t, DecideNamespace(c), FindPod("held")); f.Level != NotChecked {
		t.Errorf("pod finding: %+v, want not-checked", f)
	}
}

// remainingObject keeps metadata only and finds each finalizer's manager.
func TestRemainingObject(t *testing.T) {
	u := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "w1", Finalizers: []string{widgetFinalizer, "other.example.com/x"},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "widget-controller", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:finalizers":{".":{},"v:\"` + widgetFinalizer + `\"":{}}}}`)}},
		}}}
	o := remainingObject(u)
	if o.Managers[widgetFinalizer] != "widget-controller" {
		t.Errorf("managers %v", o.Managers)
	}
	if _, ok := o.Managers["other.example.com/x"]; ok {
		t.Errorf("a manager for a finalizer nobody's fieldsV1 owns: %v", o.Managers)
	}
}

func TestWriteNamespace(t *testing.T) {
	c := heldNamespace()
	pc := withFinalizer(exited(terminating()), Absent)
	c.Pods = []PodDiagnosis{{Name: "held", Report: Decide(pc), Raw: Raw{PodFile: []byte(`{"kind":"Pod"}`)}}}
	r := DecideNamespace(c)
	dir := t.TempDir()
	raw := Raw{NamespaceFile: []byte(`{"kind":"Namespace"}`), TypeFile(widgets): []byte(`{"token": "abcdefghijklmnop"}`)}
	s, err := WriteNamespace(dir, r, raw, c.Pods)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Dropped) != 1 || !strings.HasPrefix(s.Dropped[0], TypeFile(widgets)) {
		t.Errorf("dropped %v, want %s", s.Dropped, TypeFile(widgets))
	}
	for _, f := range []string{SummaryFile, MarkdownFile, NamespaceFile, "pods/held/" + MarkdownFile, "pods/held/" + PodFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, TypeFile(widgets))); err == nil {
		t.Errorf("%s was written though it held a credential", TypeFile(widgets))
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	text := string(md)
	if a, f := strings.Index(text, "## Answer"), strings.Index(text, "## Findings"); a < 0 || f < a {
		t.Errorf("report.md does not put the answer first:\n%s", text)
	}
	contains(t, "report.md", text, "# diagnose namespace ns", r.Answer, "## What to do, and its risk", "Left out because")
}

// A PVC held by the PVC protection finalizer names the pods that still use
// it, and the advice is to let them go, never to strip the finalizer.
func TestPVCInUseNamesItsPods(t *testing.T) {
	c := heldNamespace()
	deleted := c.Namespace.DeletionTimestamp
	c.Types = []TypeRemains{{Resource: "persistentvolumeclaims", GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Kind: "PersistentVolumeClaim",
		Objects: []RemainingObject{{Name: "data", UID: "uid-data", DeletionTimestamp: deleted, Finalizers: []string{PVCProtection}}}}}
	c.Controllers = map[string]ControllerCheck{PVCProtection: {Manager: "kube-controller-manager", Present: Present, Evidence: "Lease kube-system/kube-controller-manager was renewed 1s ago"}}
	c.DryRuns = nil
	c.ClaimUsers = map[string][]string{"data": {"db-0 (Running)"}}
	r := DecideNamespace(c)
	f := mustFindNS(t, r, FindFinalizer(PVCProtection))
	contains(t, "the finding", f.Text, "persistentvolumeclaims/data is in use by db-0 (Running)")
	contains(t, "the answer", r.Answer, "in use by db-0 (Running)")
	found := false
	for _, a := range r.Advice {
		if strings.Contains(a, "pods that still use the claims: db-0 (Running)") {
			found = true
		}
		lacks(t, "advice", a, "kubectl patch")
	}
	if !found {
		t.Errorf("advice does not name the pod using the claim: %v", r.Advice)
	}

	// The contradiction: no pod uses it; then nothing is named as its user.
	c.ClaimUsers = map[string][]string{"data": nil}
	r = DecideNamespace(c)
	lacks(t, "the answer", r.Answer, "in use by")
	contains(t, "the answer", r.Answer, "No pod uses persistentvolumeclaims/data now")
}

// The claims a pod keeps, as the PVC protection controller counts them.
func TestClaimUsedBy(t *testing.T) {
	zero := int64(0)
	gone := metav1.NewTime(now)
	pvc := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}
	eph := corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}
	pod := func(node string, phase corev1.PodPhase, forceDeleted bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0"}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
		if forceDeleted {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &gone, &zero
		}
		return p
	}
	for _, tc := range []struct {
		what string
		p    *corev1.Pod
		v    corev1.Volume
		want string
	}{
		{"running", pod("w1", corev1.PodRunning, false), pvc, "data"},
		{"stopped by the kubelet, kept by a finalizer", pod("w1", corev1.PodSucceeded, true), pvc, "data"},
		{"never scheduled", pod("", corev1.PodPending, false), pvc, ""},
		{"ephemeral, running", pod("w1", corev1.PodRunning, false), eph, "db-0-scratch"},
		{"ephemeral, shut down", pod("w1", corev1.PodSucceeded, true), eph, ""},
	} {
		if got := claimUsedBy(tc.p, tc.v); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.want)
		}
	}
}
