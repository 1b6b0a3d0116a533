package lab

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/progress"
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

// A run folder file that holds a credential is removed, and the error names it.
func TestRemoveLeaks(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "events.jsonl")
	leak := filepath.Join(dir, "steps", "01", "held.yaml")
	if err := os.MkdirAll(filepath.Dir(leak), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte(`{"type":"ADDED"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leak, []byte("users:\n- user:\n    client-key-data: LS0t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := removeLeaks(dir)
	if err == nil || !strings.Contains(err.Error(), "steps/01/held.yaml") {
		t.Fatalf("removeLeaks = %v, want an error naming the file", err)
	}
	if _, err := os.Stat(leak); !os.IsNotExist(err) {
		t.Errorf("the leaking file is still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a clean file was removed: %v", err)
	}
	if err := removeLeaks(dir); err != nil {
		t.Errorf("a clean folder: %v", err)
	}
}

// A lab the cluster cannot carry is refused before anything is made.
func TestCanRun(t *testing.T) {
	own := &cluster.Env{Workers: []cluster.Node{cluster.NoAccess("w1"), cluster.NoAccess("w2")}, FakeNodes: []string{"kwok-0"}}
	remote := &cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod}
	for _, tc := range []struct {
		env  *cluster.Env
		uses Uses
		want string
	}{
		{own, Uses{Worker: 1, Changes: []Change{KubeletStop{}}, FakeNode: true}, ""},
		{remote, Uses{Worker: 0}, ""},
		{remote, Uses{Worker: 0, FakeNode: true}, "kwok fake nodes"},
		{remote, Uses{Worker: 1, Changes: []Change{KubeletStop{}}}, "the lab stops a kubelet: on a cluster reached through a kubeconfig it runs only with -allownodefaults"},
		{remote, Uses{Worker: 0, Changes: []Change{HeldMount{AtMost: time.Minute}}}, "the lab keeps a volume busy on a node: on a cluster reached through a kubeconfig it runs only with -allownodefaults"},
		{remote, Uses{Worker: 0, Changes: []Change{OutOfServiceTaint{}}}, "-allownodefaults"},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, FaultNode: "w2"}, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: time.Minute}, OutOfServiceTaint{}}}, ""},
		// The first guard that refuses speaks: lab:stuck's kubelet, then its taint.
		{remote, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: time.Minute}, OutOfServiceTaint{}}}, "the lab stops a kubelet"},
		{remote, Uses{Worker: 0, NeedsNodeAccess: true}, ""},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessNone}, Uses{Worker: 0, NeedsNodeAccess: true}, "-nodeaccess"},
		{own, Uses{Worker: 0, NeedsNodeAccess: true}, ""},
		{&cluster.Env{Workers: own.Workers[:1]}, Uses{Worker: 1}, "needs 2 schedulable"},
		// A change every tenant feels: on termlab's own cluster as always,
		// through a kubeconfig only when asked for by name.
		{own, Uses{Worker: 0, Changes: []Change{UnavailableAPIService{}}}, ""},
		{remote, Uses{Worker: 0, Changes: []Change{UnavailableAPIService{}}}, "the lab registers an APIService with no backend (discovery fails for the whole cluster while it exists, and every namespace deletion in it waits), which every tenant of the cluster feels while it lasts: on a cluster reached through a kubeconfig it runs only with -allowclusterfaults"},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessNone}, Uses{Worker: 0, Changes: []Change{UnavailableAPIService{}}}, "-allowclusterfaults"},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, AllowClusterFaults: true}, Uses{Worker: 0, Changes: []Change{UnavailableAPIService{}}}, ""},
		// One flag does not stand for the other.
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, FaultNode: "w2"}, Uses{Worker: 0, Changes: []Change{UnavailableAPIService{}}}, "-allowclusterfaults"},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, AllowClusterFaults: true}, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: time.Minute}}}, "-allownodefaults"},
		// A kubelet down longer than pods tolerate an unreachable node: only on termlab's own.
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, FaultNode: "w2"}, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: 345 * time.Second}}}, "the lab stops a kubelet for up to 5m45s if termlab is killed (its dead-man's switch), not under the 5m0s"},
		{&cluster.Env{Workers: own.Workers, NodeAccess: evidence.NodeAccessPod, FaultNode: "w2"}, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: 295 * time.Second}}}, ""},
		{own, Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: 345 * time.Second}}}, ""},
	} {
		err := canRun(tc.env, Definition{Name: "x", Uses: tc.uses})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.uses, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.uses, err, tc.want)
		}
	}
}

// lab:all through a kubeconfig skips a lab the cluster cannot carry, says
// why, and is partial (exit 4) for it: never a pass.
func TestSkippedLabMakesTheWholePartial(t *testing.T) {
	remote := &cluster.Env{Workers: []cluster.Node{cluster.NoAccess("w1"), cluster.NoAccess("w2")}, NodeAccess: evidence.NodeAccessPod}
	defs := []Definition{
		{Name: "apiservice", Uses: Uses{Changes: []Change{UnavailableAPIService{}}}},
		{Name: "kubelet", Uses: Uses{Worker: 1, Changes: []Change{KubeletStop{DownAtMost: time.Minute}}}},
	}
	_, err := ExecuteAll(context.Background(), remote, Options{Log: progress.New(io.Discard)}, defs...)
	var partial *PartialError
	if !errors.As(err, &partial) {
		t.Fatalf("ExecuteAll of two labs the cluster cannot carry: %v, want a PartialError", err)
	}
	if partial.ExitStatus() != ExitPartial || len(partial.Runs) != 2 {
		t.Fatalf("exit %d, runs %q; want %d and both labs named", partial.ExitStatus(), partial.Runs, ExitPartial)
	}
	for i, want := range []string{"lab:apiservice: skipped: the lab registers an APIService", "lab:kubelet: skipped: the lab stops a kubelet"} {
		if !strings.HasPrefix(partial.Runs[i], want) {
			t.Errorf("run %d: %q, want it to begin %q", i, partial.Runs[i], want)
		}
	}
}

// The worker named for faults is the one a kubelet-stopping lab uses.
func TestWithFaultNode(t *testing.T) {
	env := &cluster.Env{Workers: []cluster.Node{cluster.NoAccess("a"), cluster.NoAccess("b"), cluster.NoAccess("c")}, FaultNode: "a"}
	got := withFaultNode(env, Definition{Uses: Uses{Worker: 1, Changes: []Change{KubeletStop{}}}})
	if names := strings.Join(workerNames(got), ","); names != "b,a,c" {
		t.Errorf("workers %s, want the fault node a at index 1", names)
	}
	if names := strings.Join(workerNames(env), ","); names != "a,b,c" {
		t.Errorf("the shared env changed: %s", names)
	}
	if got := withFaultNode(env, Definition{Uses: Uses{Worker: 0}}); got != env {
		t.Error("a lab that stops no kubelet got other workers")
	}
}
