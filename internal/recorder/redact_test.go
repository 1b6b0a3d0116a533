package recorder

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/redact"
)

// crictlNode answers crictl as a node would, with the container's whole
// environment in its inspect output (internal/redact's testdata).
type crictlNode struct{ inspect, ps []byte }

func (crictlNode) String() string { return "w1" }
func (n crictlNode) CommandContext(_ context.Context, name string, args ...string) exec.Cmd {
	out := []byte("heartbeat seq=1 time=2026-12-06T10:00:01Z\n")
	switch {
	case name == "crictl" && args[0] == "inspect":
		out = n.inspect
	case name == "crictl" && args[0] == "ps":
		out = n.ps
	}
	return &cannedCmd{out: out}
}

type cannedCmd struct {
	out    []byte
	stdout io.Writer
}

func (c *cannedCmd) Run() error {
	if c.stdout != nil {
		_, _ = c.stdout.Write(c.out)
	}
	return nil
}
func (c *cannedCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *cannedCmd) SetStdin(io.Reader) exec.Cmd    { return c }
func (c *cannedCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *cannedCmd) SetStderr(io.Writer) exec.Cmd   { return c }

// The recorder's files hold no env value, no last-applied configuration
// and nothing of crictl's but what internal/redact keeps: a pod's watch
// events (events.jsonl), its snapshot, and crictl inspect and ps. What the
// claims read of them is the same.
func TestRecordedEvidenceHoldsNoSecretValue(t *testing.T) {
	inspect, err := os.ReadFile("../redact/testdata/crictl-inspect.json")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := os.ReadFile("../redact/testdata/crictl-ps.json")
	if err != nil {
		t.Fatal(err)
	}
	p := testPod()
	p.Annotations = map[string]string{redact.LastApplied: `{"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"planted-db-password-91d4"}]}]}}`}
	p.Spec.Containers = []corev1.Container{{Name: "heartbeat", Env: []corev1.EnvVar{
		{Name: "DB_PASSWORD", Value: "planted-db-password-91d4"},
		{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planted"}, Key: "API_KEY"}}},
	}}}
	sent := p.DeepCopy()

	r := newTestRecorder(t)
	r.cfg.Namespace = "ns"
	r.cfg.Client = fake.NewClientset(p.DeepCopy())
	r.handle(evidence.WatchPods, watch.Event{Type: watch.Added, Object: p})
	if !reflect.DeepEqual(p, sent) {
		t.Error("recording the event changed the pod")
	}
	end := r.BeginStep("look")
	if _, err := r.Snapshot(context.Background(), "held"); err != nil {
		t.Fatal(err)
	}
	obs, err := r.ObserveContainer(context.Background(), crictlNode{inspect: inspect, ps: ps}, "held", "5f3a1c0d9e8b")
	if err != nil {
		t.Fatal(err)
	}
	end(nil)
	r.closeFiles()

	want, err := evidence.ParseInspect(inspect)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(r.cfg.Dir, obs.InspectPath))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := evidence.ParseInspect(saved); err != nil || !reflect.DeepEqual(got, want) || obs.State != evidence.ContainerExited || *obs.ExitCode != 137 {
		t.Errorf("saved inspect reads %+v %v, want %+v; observed %+v", got, err, want, obs)
	}
	files := 0
	err = filepath.WalkDir(r.cfg.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, v := range []string{"planted-db-password-91d4", "planted-api-key-3f9a", "ghp_plantedGithubToken7b2c", "planted-prestop-key", redact.LastApplied + `"`} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds %q", path, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 { // events.jsonl, the snapshot, crictl inspect, ps, logs
		t.Errorf("only %d files written", files)
	}
	if leaks, err := credscan.Dir(r.cfg.Dir); err != nil || len(leaks) > 0 {
		t.Errorf("the run folder trips the credential scan: %v %v", leaks, err)
	}
	events, err := os.ReadFile(filepath.Join(r.cfg.Dir, evidence.EventsFile))
	if err != nil || !bytes.Contains(events, []byte(`{"name":"DB_PASSWORD"},{"name":"API_KEY","valueFrom":{"secretKeyRef":{"name":"planted","key":"API_KEY"}}}`)) {
		t.Errorf("events.jsonl lost the env's names and references: %s %v", events, err)
	}
}

// crictl's answer that cannot be read is saved as why it was not kept,
// never as it is.
func TestUnreadableInspectIsNotSaved(t *testing.T) {
	r := newTestRecorder(t)
	r.cfg.Namespace = "ns"
	garbled := []byte(`{"status": {"id": "abc", "state": "CONTAINER_RUNNING"}, "info": {"runtimeSpec": {"process": {"env": ["DB_PASSWORD=planted-db-password-91d4"`)
	obs, _ := r.ObserveContainer(context.Background(), crictlNode{inspect: garbled, ps: []byte(`{"containers":[]}`)}, "held", "abc")
	r.closeFiles()
	if filepath.Ext(obs.InspectPath) != ".txt" {
		t.Errorf("saved as %s", obs.InspectPath)
	}
	b, err := os.ReadFile(filepath.Join(r.cfg.Dir, obs.InspectPath))
	if err != nil || bytes.Contains(b, []byte("planted")) || !bytes.Contains(b, []byte("not kept")) {
		t.Errorf("%s: %s %v", obs.InspectPath, b, err)
	}
}

// The run folder is private whoever made it, and so is every file and
// folder the recorder writes in it.
func TestRunFolderIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Start(context.Background(), Config{Client: fake.NewClientset(testPod()), Namespace: "ns", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	end := r.BeginStep("look")
	if _, err := r.Snapshot(context.Background(), "held"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteFile("inputs/pods/held.yaml", []byte("kind: Pod\n")); err != nil {
		t.Fatal(err)
	}
	end(nil)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		want := evidence.PrivateFile
		if d.IsDir() {
			want = evidence.PrivateDir
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil || n < 8 {
		t.Errorf("walked %d entries: %v", n, err)
	}
}
