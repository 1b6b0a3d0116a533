package lab

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/manifests/pods"
)

func TestRunIDMakesValidNamespaces(t *testing.T) {
	id := NewRunID(time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC))
	if !regexp.MustCompile(`^20261202-103000-[0-9a-f]{4}$`).MatchString(id) {
		t.Fatalf("run id %q", id)
	}
	for _, name := range []string{"finalizer", "force", "orphan"} {
		ns := "termlab-" + name + "-" + id
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			t.Errorf("namespace %s: %v", ns, errs)
		}
		if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
			t.Errorf("label value %s: %v", id, errs)
		}
	}
}

func TestManifestsParseAndUseTheWorkloadSafely(t *testing.T) {
	entries, err := pods.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		n++
		pod, _, err := LoadManifest(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false (no token in the evidence)", e.Name())
		}
		if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never", e.Name(), pod.Spec.RestartPolicy)
		}
		for _, c := range pod.Spec.Containers {
			if c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("%s: imagePullPolicy %q, want IfNotPresent", e.Name(), c.ImagePullPolicy)
			}
		}
	}
	if n == 0 {
		t.Fatal("no manifests (labs/registry_test.go checks each belongs to a lab)")
	}
}

func TestScanForCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What evidence normally holds must not trip the check.
	pod, _, _ := LoadManifest("held.yaml")
	y, _ := recorder.KubectlYAML(pod)
	write("steps/01/held.yaml", string(y))
	write("events.jsonl", `{"object":{"spec":{"serviceAccountName":"default","volumes":[{"projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}]}}]}}}`+"\n")
	write("steps/01/held-crictl-logs.txt", "heartbeat seq=1 time=2026-12-02T10:00:01Z\n")
	leaks, err := ScanForCredentials(dir)
	if err != nil || len(leaks) > 0 {
		t.Fatalf("false alarm: %v %v", leaks, err)
	}
	for name, content := range map[string]string{
		"a.yaml": "users:\n- user:\n    client-key-data: LS0t\n",
		"b.pem":  "-----BEGIN CERTIFICATE-----\nMIIB\n",
		"c.json": `{"token": "abcdefghijklmnop"}`,
		"d.txt":  "-----BEGIN RSA PRIVATE KEY-----\n",
		"e.txt":  "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig",
	} {
		write(name, content)
	}
	leaks, err = ScanForCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range leaks {
		files[l.File] = true
	}
	for _, f := range []string{"a.yaml", "b.pem", "c.json", "d.txt", "e.txt"} {
		if !files[f] {
			t.Errorf("%s not reported (leaks %v)", f, leaks)
		}
	}
}

func TestPointLatest(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"20261202-100000-aaaa", "20261202-110000-bbbb"} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := pointLatest(dir, id); err != nil {
			t.Fatal(err)
		}
	}
	target, err := os.Readlink(filepath.Join(dir, "latest"))
	if err != nil || target != "20261202-110000-bbbb" {
		t.Fatalf("latest -> %q (%v)", target, err)
	}
}
