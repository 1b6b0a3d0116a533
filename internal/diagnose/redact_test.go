package diagnose

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/redact"
)

// plantedNode answers crictl as a node does: inspect with the container's
// whole environment, ps with the kubelet's annotations (internal/redact's
// testdata); anything else fails.
type plantedNode struct{ inspect, ps []byte }

func (plantedNode) String() string { return nodeName }
func (n plantedNode) CommandContext(_ context.Context, name string, args ...string) exec.Cmd {
	c := &plantedCmd{}
	switch {
	case name == "crictl" && args[0] == "inspect":
		c.out = n.inspect
	case name == "crictl" && args[0] == "ps":
		c.out = n.ps
	}
	return c
}

type plantedCmd struct {
	out    []byte
	stdout io.Writer
}

func (c *plantedCmd) Run() error {
	if c.out == nil {
		return io.ErrUnexpectedEOF
	}
	_, err := c.stdout.Write(c.out)
	return err
}
func (c *plantedCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *plantedCmd) SetStdin(io.Reader) exec.Cmd    { return c }
func (c *plantedCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *plantedCmd) SetStderr(io.Writer) exec.Cmd   { return c }

// secretsPlanted are the values the pod and the node's answers hold that
// no report folder may: the env's (literal, from a Secret by secretKeyRef
// and envFrom: crictl has them all) and kubectl's last-applied copy.
var secretsPlanted = []string{"planted-db-password-91d4", "planted-api-key-3f9a", "ghp_plantedGithubToken7b2c", "planted-prestop-key", redact.LastApplied + `"`}

func plantedTestdata(t *testing.T) plantedNode {
	t.Helper()
	var n plantedNode
	var err error
	if n.inspect, err = os.ReadFile("../redact/testdata/crictl-inspect.json"); err != nil {
		t.Fatal(err)
	}
	if n.ps, err = os.ReadFile("../redact/testdata/crictl-ps.json"); err != nil {
		t.Fatal(err)
	}
	return n
}

// assertFolderHoldsNone walks a written report folder for the values.
func assertFolderHoldsNone(t *testing.T, dir string, values []string) (files []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		for _, v := range values {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds %q", rel, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A diagnosis with node access of a pod whose env holds secrets saves none
// of them: raw/pod.json and collected.json have the env's names and
// references, not its values, and no last-applied configuration; the crictl
// inspect file keeps what a finding reads. Nothing is dropped by the
// credential scan, for nothing credential-like is left to drop.
func TestDiagnosisSavesNoSecretValue(t *testing.T) {
	node := plantedTestdata(t)
	dt := metav1.NewTime(now.Add(-time.Minute))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: "ns", UID: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
			DeletionTimestamp: &dt, Finalizers: []string{"example.com/hold"},
			Annotations: map[string]string{redact.LastApplied: `{"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"planted-db-password-91d4"}]}]}}`}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{
			{Name: "DB_PASSWORD", Value: "planted-db-password-91d4"},
			{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planted"}, Key: "API_KEY"}}},
		}, EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "planted"}}}}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			ContainerID: "containerd://5f3a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f"}}},
	}
	src := Source{
		Client: fake.NewClientset(pod, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}),
		Node:   func(context.Context, string) (kubelet.Node, string) { return node, "" },
	}
	res, err := Run(context.Background(), src, "ns", "planted", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := assertFolderHoldsNone(t, res.Dir, secretsPlanted)
	if len(res.Summary.Dropped) > 0 {
		t.Errorf("dropped %v: something credential-like reached the raw files", res.Summary.Dropped)
	}
	inspect := ContainerFile("5f3a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f")
	b, err := os.ReadFile(filepath.Join(res.Dir, inspect))
	if err != nil {
		t.Fatalf("%v (files: %v)", err, files)
	}
	if in, err := evidence.ParseInspect(b); err != nil || in.State != evidence.ContainerExited || in.ExitCode != 137 || in.PID != 4242 {
		t.Errorf("%s reads %+v, %v", inspect, in, err)
	}
	for _, f := range []string{PodFile, CollectedFile} {
		b, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil || !bytes.Contains(b, []byte(`"name": "DB_PASSWORD"`)) || !bytes.Contains(b, []byte(`"key": "API_KEY"`)) {
			t.Errorf("%s lost the env's names or references: %v", f, err)
		}
	}
	// The pod Collect was given is not changed: only what is saved is.
	if pod.Spec.Containers[0].Env[0].Value == "" || pod.Annotations[redact.LastApplied] == "" {
		t.Error("the pod was changed")
	}
}

// A gone pod's search of its node saves crictl ps without the kubelet's
// annotations that hold commands (a preStop hook).
func TestGonePodSearchSavesNoSecretValue(t *testing.T) {
	node := plantedTestdata(t)
	src := Source{
		Client:         fake.NewClientset(),
		Nodes:          func(context.Context) []string { return []string{nodeName} },
		Node:           func(context.Context, string) (kubelet.Node, string) { return node, "" },
		SearchAllNodes: true,
	}
	res, err := Run(context.Background(), src, "secrets-e2e", "planted", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	assertFolderHoldsNone(t, res.Dir, secretsPlanted)
	b, err := os.ReadFile(filepath.Join(res.Dir, PsFile(nodeName)))
	if err != nil {
		t.Fatal(err)
	}
	if list, err := ParsePs(b); err != nil || len(list) != 1 || list[0].PodUID != "7c9e6679-7425-40de-944b-e07fc1f90ae7" {
		t.Errorf("%s reads %+v, %v", PsFile(nodeName), list, err)
	}
}

// A report folder is private, with every folder and file in it; the
// folders it lies in (results/diagnose) are made as any other.
func TestReportFolderIsPrivate(t *testing.T) {
	results := t.TempDir()
	dir := filepath.Join(results, "diagnose", "x")
	pod := Raw{PodFile: []byte(`{"kind":"Pod"}`), ContainerFile("abc"): []byte("{}\n")}
	if _, err := WriteNamespace(dir, NamespaceReport{}, Raw{NamespaceFile: []byte("{}")}, []PodDiagnosis{{Name: "p", Raw: pod}}); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if want := evidence.PrivateFile; !d.IsDir() && st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, PodDir("p")), filepath.Join(dir, PodDir("p"), "raw")} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != evidence.PrivateDir {
			t.Errorf("%s: %v %v, want %v", d, st.Mode().Perm(), err, evidence.PrivateDir)
		}
	}
	// As any folder is: as one made beside it with 0755 (and this umask).
	other := filepath.Join(results, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(results, "diagnose"))
	want, _ := os.Stat(other)
	if err != nil || st.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("results/diagnose is %v (%v), want %v", st.Mode().Perm(), err, want.Mode().Perm())
	}
}
