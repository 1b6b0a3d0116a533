package redact_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/redact"
)

// planted are the secret values in testdata's crictl output: the env of
// the container (from a secretKeyRef, an envFrom and a literal), which
// containerd 1.7's CRI returns twice (info.config.envs and
// info.runtimeSpec.process.env), and what else the runtime's answer holds
// that no reader needs (args, a preStop command, a termination message,
// the Secret volume's host path).
var planted = []string{
	"planted-api-key-3f9a", "ghp_plantedGithubToken7b2c", "planted-db-password-91d4",
	"planted-arg-token", "planted-prestop-key", "planted-termination-message", "kubernetes.io~secret",
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertNoneOf(t *testing.T, what string, b []byte, values []string) {
	t.Helper()
	for _, v := range values {
		if bytes.Contains(b, []byte(v)) {
			t.Errorf("%s still holds %q:\n%s", what, v, b)
		}
	}
}

// crictl inspect, redacted, holds none of the planted values, reads the
// same through evidence.ParseInspect, and keeps the fields that say which
// container it was; the raw output trips the credential scan, the
// redacted one does not.
func TestInspect(t *testing.T) {
	raw := readTestdata(t, "crictl-inspect.json")
	if len(credscan.Bytes("crictl-inspect.json", raw)) == 0 {
		t.Fatal("the raw output does not trip the credential scan: the test's planted values are not what it looks for")
	}
	got, err := redact.Inspect(raw)
	if err != nil {
		t.Fatal(err)
	}
	assertNoneOf(t, "redacted crictl inspect", got, planted)
	for _, field := range []string{`"env`, `"mounts"`, `"runtimeSpec"`, `"config"`, `"args"`, `"annotations"`, `"message"`} {
		if bytes.Contains(got, []byte(field)) {
			t.Errorf("redacted crictl inspect keeps %s:\n%s", field, got)
		}
	}
	if l := credscan.Bytes("crictl-inspect.json", got); len(l) > 0 {
		t.Errorf("redacted crictl inspect trips the credential scan: %v", l)
	}
	want, err := evidence.ParseInspect(raw)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := evidence.ParseInspect(got)
	if err != nil {
		t.Fatalf("the redacted output does not parse: %v\n%s", err, got)
	}
	if !reflect.DeepEqual(parsed, want) || want.PID != 4242 || want.ExitCode != 137 || want.FinishedAt == nil {
		t.Errorf("parsed redacted %+v, raw %+v", parsed, want)
	}
	var doc struct {
		Status struct {
			CreatedAt string `json:"createdAt"`
			Image     struct {
				Image string `json:"image"`
			} `json:"image"`
			ImageRef string            `json:"imageRef"`
			Metadata map[string]any    `json:"metadata"`
			Labels   map[string]string `json:"labels"`
		} `json:"status"`
		Info map[string]any `json:"info"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Status
	if s.CreatedAt != "2026-12-06T10:00:00.123456789Z" || s.Image.Image != "termlab.local/heartbeat:dev" || !strings.HasPrefix(s.ImageRef, "sha256:") ||
		s.Metadata["name"] != "app" || s.Labels["io.kubernetes.pod.uid"] != "7c9e6679-7425-40de-944b-e07fc1f90ae7" || doc.Info["pid"] != 4242.0 {
		t.Errorf("kept fields lost:\n%s", got)
	}
	if len(doc.Info) != 2 {
		t.Errorf("info keeps %v, want sandboxID and pid alone", doc.Info)
	}

	// An array of them, as crictl prints for several IDs.
	list, err := redact.Inspect(append(append([]byte("[\n"), raw...), "]\n"...))
	if err != nil {
		t.Fatal(err)
	}
	assertNoneOf(t, "redacted crictl inspect list", list, planted)
	if in, err := evidence.ParseInspect(list); err != nil || !reflect.DeepEqual(in, want) {
		t.Errorf("parsed list %+v %v, want %+v", in, err, want)
	}
}

// What is not crictl's JSON (an error on stdout, a truncated answer) is an
// error: the caller saves the error, never the output.
func TestInspectRefusesWhatItCannotRead(t *testing.T) {
	raw := readTestdata(t, "crictl-inspect.json")
	for _, b := range [][]byte{[]byte("level=fatal msg=\"connect: no such file\"\nDB_PASSWORD=x"), raw[:len(raw)/2]} {
		if out, err := redact.Inspect(b); err == nil || out != nil {
			t.Errorf("Inspect(%.40q) = %s, %v; want an error and nothing", b, out, err)
		}
	}
}

// crictl ps, redacted, reads the same through diagnose.ParsePs and keeps
// only the kubelet's restart count and grace period of its annotations.
func TestPs(t *testing.T) {
	raw := readTestdata(t, "crictl-ps.json")
	got, err := redact.Ps(raw)
	if err != nil {
		t.Fatal(err)
	}
	assertNoneOf(t, "redacted crictl ps", got, planted)
	want, err := diagnose.ParsePs(raw)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := diagnose.ParsePs(got)
	if err != nil || !reflect.DeepEqual(parsed, want) || len(want) != 1 || want[0].PodUID == "" || want[0].CreatedAt.IsZero() {
		t.Errorf("parsed redacted %+v %v, raw %+v", parsed, err, want)
	}
	var doc struct {
		Containers []struct {
			ID          string            `json:"id"`
			State       string            `json:"state"`
			Annotations map[string]string `json:"annotations"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Containers) != 1 || !reflect.DeepEqual(doc.Containers[0].Annotations, map[string]string{
		"io.kubernetes.container.restartCount": "0", "io.kubernetes.pod.terminationGracePeriod": "30",
	}) {
		t.Errorf("annotations kept: %+v", doc.Containers)
	}
	empty, err := redact.Ps([]byte(`{"containers":[]}`))
	if err != nil || !bytes.Contains(empty, []byte(`"containers": []`)) {
		t.Errorf("an empty list: %s %v", empty, err)
	}
	if _, err := redact.Ps([]byte("FATA[0000] connect: connection refused")); err == nil {
		t.Error("crictl's error text must not be taken for its answer")
	}
}

// plantedPod is a pod with secret values in every container kind's env,
// references beside them, and kubectl's last-applied annotation holding
// the pod as applied, values included.
func plantedPod() *corev1.Pod {
	env := []corev1.EnvVar{
		{Name: "DB_PASSWORD", Value: "planted-db-password-91d4"},
		{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planted"}, Key: "API_KEY"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "EMPTY"},
	}
	envFrom := []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "planted"}}}}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: "ns", Annotations: map[string]string{
			redact.LastApplied:  `{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"planted-db-password-91d4"}]}]}}`,
			"termlab.dev/other": "kept",
		}},
		Spec: corev1.PodSpec{
			InitContainers:      []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "INIT_TOKEN", Value: "planted-init-token"}}}},
			Containers:          []corev1.Container{{Name: "app", Image: "termlab.local/heartbeat:dev", Env: env, EnvFrom: envFrom}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Env: []corev1.EnvVar{{Name: "DEBUG_SECRET", Value: "planted-debug-secret"}}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

var plantedInPod = []string{"planted-db-password-91d4", "planted-init-token", "planted-debug-secret", redact.LastApplied}

// A pod, redacted, holds no env value and no last-applied configuration,
// in JSON (events.jsonl, raw/pod.json) or YAML (a step's snapshot); it
// keeps every env name, each valueFrom and envFrom reference, the other
// annotations, and says what was taken out. The pod given is not changed.
func TestPod(t *testing.T) {
	p := plantedPod()
	before := p.DeepCopy()
	got := redact.Pod(p)
	if !reflect.DeepEqual(p, before) {
		t.Fatal("Pod changed the pod it was given")
	}
	j, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"JSON": j, "YAML": y} {
		assertNoneOf(t, "the redacted pod's "+what, b, plantedInPod)
		if l := credscan.Bytes("pod", b); len(l) > 0 {
			t.Errorf("the redacted pod's %s trips the credential scan: %v", what, l)
		}
	}
	if raw, _ := json.Marshal(p); len(credscan.Bytes("pod", raw)) == 0 {
		t.Error("the planted pod does not trip the credential scan")
	}
	c := got.Spec.Containers[0]
	if len(c.Env) != 4 || c.Env[0].Name != "DB_PASSWORD" || c.Env[0].Value != "" || c.Env[1].ValueFrom.SecretKeyRef.Key != "API_KEY" ||
		c.Env[2].ValueFrom.FieldRef.FieldPath != "metadata.name" || c.EnvFrom[0].SecretRef.Name != "planted" || c.Image != "termlab.local/heartbeat:dev" {
		t.Errorf("env after redaction: %+v %+v", c.Env, c.EnvFrom)
	}
	if got.Spec.InitContainers[0].Env[0].Name != "INIT_TOKEN" || got.Spec.EphemeralContainers[0].Env[0].Name != "DEBUG_SECRET" {
		t.Errorf("names lost: %+v %+v", got.Spec.InitContainers, got.Spec.EphemeralContainers)
	}
	if got.Annotations["termlab.dev/other"] != "kept" || got.Annotations[redact.Marker] != "env values, the last-applied-configuration annotation" {
		t.Errorf("annotations after redaction: %v", got.Annotations)
	}
	if !reflect.DeepEqual(evidence.StateOf(got), evidence.StateOf(p)) {
		t.Error("the redacted pod's state differs")
	}

	// Only the annotation, or only env values: the marker says which.
	onlyApplied := plantedPod()
	onlyApplied.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{}}}}}}
	if a := redact.Pod(onlyApplied).Annotations; a[redact.Marker] != "the last-applied-configuration annotation" || a[redact.LastApplied] != "" {
		t.Errorf("annotations %v", a)
	}
	onlyEnv := plantedPod()
	onlyEnv.Annotations = nil
	if a := redact.Pod(onlyEnv).Annotations; !reflect.DeepEqual(a, map[string]string{redact.Marker: "env values"}) {
		t.Errorf("annotations %v", a)
	}
}

// A pod with nothing to take out is the pod itself, not a copy: lab:scale
// records millions of events of such pods.
func TestPodWithNothingToTakeOutIsNotCopied(t *testing.T) {
	p := plantedPod()
	p.Annotations = map[string]string{"a": "b"}
	p.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{}}, {Name: "EMPTY"}}}}}
	if redact.Pod(p) != p {
		t.Error("a pod without env values or last-applied annotation was copied")
	}
	if redact.Pod(nil) != nil {
		t.Error("nil")
	}
	allocs := testing.AllocsPerRun(100, func() { redact.Pod(p) })
	if allocs != 0 {
		t.Errorf("Pod allocated %.0f times for a pod with nothing to take out", allocs)
	}
}

// Objects that carry a pod template have its env values dropped; any
// object loses the last-applied annotation; a list of pods each pod's.
func TestObject(t *testing.T) {
	p := plantedPod()
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ident", Annotations: map[string]string{redact.LastApplied: `{"planted-db-password-91d4":1}`}},
		Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ident"}},
			Spec:       p.Spec,
		}},
	}
	ssBefore := ss.DeepCopy()
	got := redact.Object(ss)
	if !reflect.DeepEqual(ss, ssBefore) {
		t.Fatal("Object changed the object it was given")
	}
	b, _ := json.Marshal(got)
	assertNoneOf(t, "the redacted StatefulSet", b, plantedInPod)
	if got.Annotations[redact.Marker] == "" || got.Spec.Template.Annotations[redact.Marker] != "env values" || got.Spec.Template.Spec.Containers[0].Env[0].Name != "DB_PASSWORD" {
		t.Errorf("redacted StatefulSet: %s", b)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{redact.LastApplied: "{}"}}}
	if got := redact.Object(ns); got == ns || got.Annotations[redact.LastApplied] != "" || ns.Annotations[redact.LastApplied] != "{}" {
		t.Errorf("namespace: %v, given %v", got.Annotations, ns.Annotations)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
	if redact.Object(node) != node {
		t.Error("a node with nothing to take out was copied")
	}

	clean := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "clean"}}
	list := &corev1.PodList{Items: []corev1.Pod{clean, *plantedPod()}}
	gotList := redact.Object(list)
	b, _ = json.Marshal(gotList)
	assertNoneOf(t, "the redacted pod list", b, plantedInPod)
	if len(gotList.Items) != 2 || gotList.Items[0].Name != "clean" || list.Items[1].Spec.Containers[0].Env[0].Value == "" {
		t.Errorf("pod list: %s", b)
	}
	cleanList := &corev1.PodList{Items: []corev1.Pod{clean}}
	if redact.Object(cleanList) != cleanList {
		t.Error("a list with nothing to take out was copied")
	}
	var none *corev1.Node
	if redact.Object(none) != nil {
		t.Error("a nil node")
	}
}

// Every crictl answer a committed reference run saved (containerd 2's CRI,
// crictl 1.3x) reads the same once redacted, through the readers of the
// saved files: evidence.ParseInspect (the recorder's, the claims', the e2e
// tests') and diagnose.ParsePs; and keeps no environment.
func TestReferenceRunsCrictlReadTheSame(t *testing.T) {
	var inspects, pss int
	err := filepath.WalkDir("../../results/reference", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		base := filepath.Base(path)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(base, "-crictl-inspect"):
			inspects++
			want, werr := evidence.ParseInspect(raw)
			got, err := redact.Inspect(raw)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return nil
			}
			parsed, perr := evidence.ParseInspect(got)
			if !reflect.DeepEqual(parsed, want) || (perr == nil) != (werr == nil) {
				t.Errorf("%s: redacted reads %+v (%v), raw %+v (%v)", path, parsed, perr, want, werr)
			}
			for _, field := range []string{`"envs"`, `"env"`, `"runtimeSpec"`, `"mounts"`} {
				if bytes.Contains(got, []byte(field)) {
					t.Errorf("%s: redacted keeps %s", path, field)
				}
			}
		case strings.Contains(base, "-crictl-ps"):
			pss++
			want, werr := diagnose.ParsePs(raw)
			got, err := redact.Ps(raw)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return nil
			}
			parsed, perr := diagnose.ParsePs(got)
			if !reflect.DeepEqual(parsed, want) || (perr == nil) != (werr == nil) {
				t.Errorf("%s: redacted reads %+v (%v), raw %+v (%v)", path, parsed, perr, want, werr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inspects < 10 || pss < 10 {
		t.Errorf("read %d inspect and %d ps answers of the reference runs; want the committed ones", inspects, pss)
	}
}

// What redacting costs the recorder per pod event: nothing to take out (a
// lab:scale pod), and env values with the last-applied annotation.
//
//	go test -run=^$ -bench=Pod ./internal/redact/
func BenchmarkPod(b *testing.B) {
	clean := plantedPod()
	clean.Annotations = nil
	clean.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "heartbeat", Args: []string{"--interval=1s"}}}}
	for name, p := range map[string]*corev1.Pod{"nothing": clean, "env-and-last-applied": plantedPod()} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				redact.Pod(p)
			}
		})
	}
}
