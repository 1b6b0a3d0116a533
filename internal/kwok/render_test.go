package kwok

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRender(t *testing.T) {
	const image = "termlab.local/kwok:v0.8.0"
	objs, err := Render(Options{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	if kinds["CustomResourceDefinition"] != 12 || kinds["Deployment"] != 1 || kinds["ConfigMap"] != 1 || kinds["Service"] != 1 ||
		kinds["ServiceAccount"] != 1 || kinds["ClusterRole"] != 1 || kinds["ClusterRoleBinding"] != 1 || kinds["FlowSchema"] != 1 {
		t.Errorf("kinds = %v", kinds)
	}
	if objs[0].GetKind() != "CustomResourceDefinition" || objs[len(objs)-1].GetKind() != "Deployment" {
		t.Errorf("apply order: first %s, last %s", objs[0].GetKind(), objs[len(objs)-1].GetKind())
	}
	var stageCRD bool
	for _, o := range objs {
		stageCRD = stageCRD || o.GetName() == "stages.kwok.x-k8s.io"
	}
	if !stageCRD {
		t.Error("no Stage CRD")
	}

	d := objs[len(objs)-1]
	get := func(path ...string) any {
		v, _, err := unstructured.NestedFieldNoCopy(d.Object, path...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if n := get("spec", "replicas"); n != int64(1) {
		t.Errorf("replicas = %v", n)
	}
	if s := get("spec", "strategy", "type"); s != "Recreate" {
		t.Errorf("strategy = %v", s)
	}
	if ns := d.GetNamespace(); ns != Namespace {
		t.Errorf("namespace = %q", ns)
	}
	if sel := get("spec", "template", "spec", "nodeSelector"); !reflect.DeepEqual(sel, map[string]any{"node-role.kubernetes.io/control-plane": ""}) {
		t.Errorf("nodeSelector = %v", sel)
	}
	tols, _ := get("spec", "template", "spec", "tolerations").([]any)
	if len(tols) != 2 || tols[0].(map[string]any)["key"] != "node-role.kubernetes.io/control-plane" ||
		tols[1].(map[string]any)["key"] != "node.kubernetes.io/not-ready" {
		t.Errorf("tolerations = %v", tols)
	}
	// Starting before the control plane's pod network is Ready needs both.
	if hn := get("spec", "template", "spec", "hostNetwork"); hn != true {
		t.Errorf("hostNetwork = %v", hn)
	}
	cs, _ := get("spec", "template", "spec", "containers").([]any)
	if len(cs) != 1 {
		t.Fatalf("containers = %v", cs)
	}
	c := cs[0].(map[string]any)
	if c["image"] != image || c["imagePullPolicy"] != "IfNotPresent" {
		t.Errorf("container image %v pull %v", c["image"], c["imagePullPolicy"])
	}
	if a := d.GetAnnotations()[ModuleAnnotation]; !strings.HasPrefix(a, ModulePath+"@v") {
		t.Errorf("annotation %s = %q", ModuleAnnotation, a)
	}
	if sel := d.GetLabels()["app"]; sel != ControllerName {
		t.Errorf("label app = %q", sel)
	}
	var cm *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" {
			cm = o
		}
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "kwok.yaml")
	if !strings.Contains(data, "podPlayStageParallelism: 16\n") || !strings.Contains(data, "nodeLeaseParallelism: 32\n") || !strings.Contains(data, "manageNodesWithAnnotationSelector: kwok.x-k8s.io/node=fake") {
		t.Errorf("kwok.yaml:\n%s", data)
	}
	// Another configuration rolls the controller: its pod template changes.
	hash, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", ConfigAnnotation)
	other, err := withParallelism(cm, 4)
	if err != nil || hash == "" {
		t.Fatalf("hash %q, %v", hash, err)
	}
	sum := sha256.Sum256([]byte(other))
	if hash == hex.EncodeToString(sum[:8]) {
		t.Error("the configuration with parallelism 4 hashes as the rendered one")
	}
}

// Options.PodPlayParallelism (a raised cluster's) goes into kwok.yaml and
// rolls the controller.
func TestRenderPodPlayParallelism(t *testing.T) {
	configOf := func(n int) (data, hash string) {
		t.Helper()
		objs, err := Render(Options{Image: "x", PodPlayParallelism: n})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			switch o.GetKind() {
			case "ConfigMap":
				data, _, _ = unstructured.NestedString(o.Object, "data", "kwok.yaml")
			case "Deployment":
				hash, _, _ = unstructured.NestedString(o.Object, "spec", "template", "metadata", "annotations", ConfigAnnotation)
			}
		}
		return data, hash
	}
	raised, raisedHash := configOf(RaisedPodPlayParallelism)
	if !strings.Contains(raised, "podPlayStageParallelism: 64\n") {
		t.Errorf("kwok.yaml with %d:\n%s", RaisedPodPlayParallelism, raised)
	}
	if _, hash := configOf(0); hash == raisedHash {
		t.Error("the default and the raised configuration hash alike: the controller would not roll")
	}
	if _, err := Render(Options{Image: "x", PodPlayParallelism: -1}); err == nil {
		t.Error("parallelism -1: want an error")
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render(Options{}); err == nil || !strings.Contains(err.Error(), "Image is required") {
		t.Errorf("no image: %v", err)
	}
	_, err := Render(Options{Image: "x", ModuleDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "not the kwok module directory") {
		t.Errorf("bad module dir: %v", err)
	}
}

// TestStageSetsShape checks what the sets promise beyond behaviour: every
// Stage is labelled with its set, every pod stage selects only its set's pods,
// and kwok-v0.8-fast is kwok's fast pod stages as shipped, only with the name
// prefix, the label and the set selector added.
func TestStageSetsShape(t *testing.T) {
	stages, err := RenderStages(Options{})
	if err != nil {
		t.Fatal(err)
	}
	bySet := map[string][]*unstructured.Unstructured{}
	for _, s := range stages {
		set := s.GetLabels()[StageSetLabel]
		bySet[set] = append(bySet[set], s)
		if set == NodeStageSet {
			if k, _, _ := unstructured.NestedString(s.Object, "spec", "resourceRef", "kind"); k != "Node" {
				t.Errorf("%s: node stage set holds a %s stage", s.GetName(), k)
			}
			continue
		}
		if !strings.HasPrefix(s.GetName(), set+"-") {
			t.Errorf("%s: name does not start with its set %q", s.GetName(), set)
		}
		ml, _, _ := unstructured.NestedStringMap(s.Object, "spec", "selector", "matchLabels")
		exprs, _, _ := unstructured.NestedSlice(s.Object, "spec", "selector", "matchExpressions")
		first, _ := exprs[0].(map[string]any)
		switch set {
		case SetFaithful:
			if first["key"] != `.metadata.labels["termlab.dev/stage-set"] // "faithful"` {
				t.Errorf("%s: first expression %v, want the set selector", s.GetName(), first)
			}
		default:
			if ml[StageSetLabel] != set {
				t.Errorf("%s: matchLabels %v, want %s=%s", s.GetName(), ml, StageSetLabel, set)
			}
		}
	}
	for _, set := range append([]string{NodeStageSet}, StageSets...) {
		if len(bySet[set]) == 0 {
			t.Errorf("set %s has no stages", set)
		}
	}

	upstream, _, err := build("", "upstream/stage/pod/fast")
	if err != nil {
		t.Fatal(err)
	}
	if len(upstream) != len(bySet[SetKwokV08Fast]) {
		t.Fatalf("kwok-v0.8-fast has %d stages, upstream fast %d", len(bySet[SetKwokV08Fast]), len(upstream))
	}
	for i, up := range upstream {
		ours := bySet[SetKwokV08Fast][i].DeepCopy()
		if ours.GetName() != SetKwokV08Fast+"-"+up.GetName() {
			t.Errorf("stage %d: %s, upstream %s", i, ours.GetName(), up.GetName())
		}
		unstructured.RemoveNestedField(ours.Object, "spec", "selector", "matchLabels")
		if !reflect.DeepEqual(ours.Object["spec"], up.Object["spec"]) {
			t.Errorf("%s differs from upstream %s beyond the set selector", ours.GetName(), up.GetName())
		}
	}
}

// locateModule looks in the module cache for ModuleVersion before asking go:
// it must be the version go.mod requires.
func TestModuleVersionIsGoMods(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := ModulePath + " " + ModuleVersion
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == ModulePath {
			if got := f[0] + " " + f[1]; got != want {
				t.Fatalf("go.mod requires %s, ModuleVersion says %s", got, want)
			}
			return
		}
	}
	t.Fatalf("go.mod does not require %s", ModulePath)
}

// What Render writes into kwok.yaml is what lab:scale reads back and
// prints; an option kwok.yaml does not set is kwok's own default.
func TestParallelismReadBack(t *testing.T) {
	objs, err := Render(Options{Image: "x", PodPlayParallelism: RaisedPodPlayParallelism})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" {
			continue
		}
		data, _, _ := unstructured.NestedString(o.Object, "data", "kwok.yaml")
		got, err := parallelismIn(data)
		if want := (Parallelism{PodPlay: RaisedPodPlayParallelism, NodeLease: NodeLeaseParallelism}); err != nil || got != want {
			t.Errorf("read back %+v, %v; want %+v", got, err, want)
		}
	}
	got, err := parallelismIn("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n")
	if want := (Parallelism{PodPlay: 4, NodeLease: 4}); err != nil || got != want {
		t.Errorf("unset: %+v, %v; want kwok's defaults %+v", got, err, want)
	}
	if _, err := parallelismIn("options: [\n"); err == nil {
		t.Error("broken kwok.yaml read without an error")
	}
}
