package workshop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
)

func TestReadmeSections(t *testing.T) {
	for _, name := range []string{"finalizer", "force", "orphan"} {
		md, err := os.ReadFile(filepath.Join("..", "..", "labs", name, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		secs := ReadmeSections(md)
		for _, s := range guideSections {
			if secs[s] == "" {
				t.Errorf("labs/%s/README.md has no %q section for the guided session", name, s)
			}
		}
	}
	secs := ReadmeSections([]byte("# t\nintro\n## A\none\n\n## B\ntwo\n### sub\nthree\n"))
	if secs["A"] != "one" || secs["B"] != "two\n### sub\nthree" || len(secs) != 2 {
		t.Errorf("sections = %q", secs)
	}
}

func TestAnnotatorHints(t *testing.T) {
	def := lab.Definition{Name: "finalizer", Manifests: []string{"held.yaml", "held-kwok.yaml"}}
	env := &cluster.Env{KubeconfigPath: "/x/.termlab/kubeconfig"}
	var out bytes.Buffer
	a := newAnnotator(&out, env, def)
	a.node = "termlab-worker"
	lines := []string{
		"[   0.1s] lab:finalizer run 20261202-111614-6364: results in /x/results/finalizer/20261202-111614-6364\n",
		"[   0.5s] ▶ kubelet: create pod held on termlab-worker and wait until it is Ready ...\n",
		"[   9.5s] ▶ kubelet: ordinary delete of held (the pod's 30 s grace period) ...\n",
		"[  19.5s] ▶ kwok: create pod held-kwok on a kwok fake node and wait until it is Ready ...\n",
		"[  29.5s] ▶ kwok: remove the finalizer of held-kwok ...\n",
		"[  39.5s] ▶ cleanup ...\n",
		"[  40.0s] lab:finalizer run 20261202-111614-6364: pass (8 claims) — /x/report.md\n",
	}
	// Written in pieces, as a logger may.
	for _, l := range lines {
		half := len(l) / 2
		a.Write([]byte(l[:half]))
		a.Write([]byte(l[half:]))
	}
	got := out.String()
	for _, want := range []string{
		"the run's namespace is termlab-finalizer-20261202-111614-6364",
		"kubectl get pod held -n termlab-finalizer-20261202-111614-6364 -o wide -w",
		"kubectl get pod held -n termlab-finalizer-20261202-111614-6364 -o jsonpath='{.metadata.deletionTimestamp}",
		"kubectl get pod held-kwok -n termlab-finalizer-20261202-111614-6364 -o wide -w",
		"held-kwok is on a kwok fake node",
		"kubectl get pod held-kwok -n termlab-finalizer-20261202-111614-6364 -o jsonpath='{.metadata.finalizers}'",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("annotated output lacks %q:\n%s", want, got)
		}
	}
	for _, l := range lines {
		if !strings.Contains(got, l) {
			t.Errorf("the logger's line %q was not passed through", l)
		}
	}
	if strings.Count(got, "⌨") != 7 {
		t.Errorf("want 7 hints (none under cleanup), got %d:\n%s", strings.Count(got, "⌨"), got)
	}
}
