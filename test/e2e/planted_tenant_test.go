//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/redact"
)

// plantedTenantWithin bounds planting: a namespace, two Secrets, a pod per
// worker started and inspected.
const plantedTenantWithin = 3 * time.Minute

// plantTenantSecrets runs, on every real worker, a pod of another tenant
// (its own namespace, no termlab label) holding values no file could hold
// by chance the three ways a workload gets secrets (a Secret's key, a whole
// Secret by envFrom, a literal) and in kubectl's last-applied annotation,
// and returns the values once crictl on each node shows them (the test
// plants something). The labs that run meanwhile record the same nodes'
// runtimes, the API's events and the audit log: none of it may carry them.
// The namespace goes at the end of the test.
func plantTenantSecrets(t *testing.T, env *cluster.Env) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), plantedTenantWithin)
	defer cancel()
	apiKey, githubToken, dbPassword := plant(t, "ak"), plant(t, "ghp_"), plant(t, "pw")
	planted := []string{apiKey, githubToken, dbPassword}
	core := env.Client.CoreV1()
	ns := "tenant-planted-" + rand.String(5)
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), plantedCleanupWithin)
		defer cancel()
		deleteNamespaceAndWait(ctx, t, core, ns)
	})
	for secret, data := range map[string]map[string]string{"planted-ref": {"API_KEY": apiKey}, "planted-from": {"GITHUB_TOKEN": githubToken}} {
		if _, err := core.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}, StringData: data}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	container := corev1.Container{
		Name: "app", Image: env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Args: []string{"--interval=1s"},
		Env: []corev1.EnvVar{
			{Name: "DB_PASSWORD", Value: dbPassword},
			{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planted-ref"}, Key: "API_KEY"}}},
		},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "planted-from"}}}},
	}
	one := int64(1)
	for _, w := range env.Workers {
		name := "app-" + w.String()
		applied, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"containers": []corev1.Container{container}}})
		if err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{redact.LastApplied: string(applied)}},
			Spec: corev1.PodSpec{
				NodeSelector:                  map[string]string{corev1.LabelHostname: w.String()},
				TerminationGracePeriodSeconds: &one,
				Containers:                    []corev1.Container{container},
			},
		}
		if _, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range env.Workers {
		running := waitRunning(ctx, t, env, ns, "app-"+w.String())
		id := strings.TrimPrefix(running.Status.ContainerStatuses[0].ContainerID, "containerd://")
		var inspect bytes.Buffer
		cmd := w.CommandContext(ctx, "crictl", "inspect", id)
		cmd.SetStdout(&inspect)
		if err := cmd.Run(); err != nil {
			t.Fatalf("crictl inspect %s on %s: %v", id, w, err)
		}
		for _, v := range planted {
			if !bytes.Contains(inspect.Bytes(), []byte(v)) {
				t.Fatalf("crictl inspect on %s does not hold a planted value: the test plants nothing", w)
			}
		}
	}
	return planted
}

// checkNoPlanted reads every file of a run's folder for the planted values.
func checkNoPlanted(t *testing.T, dir string, planted []string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		for _, v := range holds(t, path, planted) {
			t.Errorf("%s holds a value planted in another tenant's pod (%s…)", path, v[:4])
		}
		return nil
	})
	if err != nil {
		t.Errorf("reading %s for planted values: %v", dir, err)
	}
	if files == 0 {
		t.Errorf("no file in %s to read for planted values", dir)
	}
}
