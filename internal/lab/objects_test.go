package lab

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/recorder"
)

// The fake clientset only stores what is created: enough to check what
// CreateObject sends and records (no deletion behaviour is tested here).
func TestCreateObjectLabelsTheWorkloadsPodsAndRecordsTheRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := fake.NewClientset()
	dir := t.TempDir()
	rec, err := recorder.Start(ctx, recorder.Config{Client: client, Lab: "statefulset", RunID: "r1", Namespace: "ns", PodSelector: RunIDLabel + "=r1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	r := &Run{ID: "r1", Lab: "statefulset", Namespace: "ns", Rec: rec, Log: progress.New(os.Stderr),
		Env: &cluster.Env{Client: client, WorkloadImage: "termlab.local/heartbeat:v1"}}

	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "ident"}, Spec: appsv1.StatefulSetSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "placeholder"}}}},
	}}
	if err := r.CreateObject(ctx, set); err != nil {
		t.Fatal(err)
	}
	got, err := client.AppsV1().StatefulSets("ns").Get(ctx, "ident", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[RunIDLabel] != "r1" || got.Spec.Template.Labels[RunIDLabel] != "r1" || got.Spec.Template.Labels[LabLabel] != "statefulset" {
		t.Errorf("labels %v, template labels %v: the recorder would not see its pods", got.Labels, got.Spec.Template.Labels)
	}
	if img := got.Spec.Template.Spec.Containers[0].Image; img != "termlab.local/heartbeat:v1" {
		t.Errorf("image %s, want the cluster's workload image", img)
	}
	if err := r.CreateObject(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); err == nil {
		t.Error("a ConfigMap was accepted")
	}

	a, ok := rec.Record().Action("create-statefulset", "ident")
	if !ok || !a.Succeeded() {
		t.Fatalf("no successful create-statefulset action: %+v", rec.Record().Actions)
	}
	var req apiRequest
	if err := json.Unmarshal(a.Request, &req); err != nil {
		t.Fatal(err)
	}
	if req.Verb != "POST" || req.Path != "/apis/apps/v1/namespaces/ns/statefulsets" || !strings.HasPrefix(a.Equivalent, "kubectl create -f inputs/objects/statefulset-ident.sent.yaml") {
		t.Errorf("recorded %s %s, equivalent %q", req.Verb, req.Path, a.Equivalent)
	}
	if _, err := os.Stat(filepath.Join(dir, "inputs/objects/statefulset-ident.sent.yaml")); err != nil {
		t.Errorf("the object as sent was not saved: %v", err)
	}
}
