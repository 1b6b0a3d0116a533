package workshop

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/lab"
)

// The fake clientset only lists namespaces here; no deletion behaviour is tested with it.
func TestActiveRuns(t *testing.T) {
	now := time.Now()
	ns := func(name string, age time.Duration, labels map[string]string, deleting bool) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
		if deleting {
			ts := metav1.NewTime(now)
			n.DeletionTimestamp = &ts
		}
		return n
	}
	run := func(id, l string) map[string]string { return map[string]string{lab.RunIDLabel: id, lab.LabLabel: l} }
	kept := run("k", "force")
	kept[lab.KeepLabel] = "true"
	client := fake.NewSimpleClientset(
		ns("termlab-orphan-a", 40*time.Second, run("a", "orphan"), false),  // in progress
		ns("termlab-force-b", 5*time.Second, run("b", "force"), true),      // being deleted: its run ended
		ns("termlab-force-k", time.Minute, kept, false),                    // kept on purpose
		ns("termlab-finalizer-c", time.Hour, run("c", "finalizer"), false), // a leftover of a killed run
		ns("default", time.Hour, nil, false),
	)
	runs, err := ActiveRuns(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Namespace != "termlab-orphan-a" || runs[0].Lab != "orphan" {
		t.Fatalf("active runs = %v, want only termlab-orphan-a", runs)
	}
	err = refuseActiveRuns(context.Background(), quiet(), client)
	if err == nil || !strings.Contains(err.Error(), "termlab-orphan-a (lab:orphan, started 40s ago)") || !strings.Contains(err.Error(), ForceEnv+"=1") {
		t.Errorf("refuseActiveRuns: %v", err)
	}
	t.Setenv(ForceEnv, "1")
	if err := refuseActiveRuns(context.Background(), quiet(), client); err != nil {
		t.Errorf("with %s set: %v", ForceEnv, err)
	}
}
