package targetsbin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCounterTellsPackagesFromErrors(t *testing.T) {
	var c Counter
	for _, tc := range []struct {
		line    string
		counted bool
	}{
		{"go: downloading k8s.io/client-go v0.35.0", true},
		{"internal/abi", true},
		{"fmt", true},
		{"github.com/termlab/termlab/internal/lab", true},
		{"sigs.k8s.io/kind/pkg/cluster/internal/providers/docker", true},
		{"gopkg.in/yaml.v3", true},
		{"# github.com/termlab/termlab/internal/lab", false},
		{"internal/lab/run.go:12:3: undefined: x", false},
		{"Error: error compiling magefiles", false},
		{"", false},
	} {
		if got := c.Add(tc.line); got != tc.counted {
			t.Errorf("Add(%q) = %v, want %v", tc.line, got, tc.counted)
		}
	}
	if want := "1 modules downloaded, 5 packages compiled (latest gopkg.in/yaml.v3)"; !strings.Contains(c.String(), want) {
		t.Errorf("String() = %q, want it to contain %q", c.String(), want)
	}
	c.Add(mainPackage)
	if want := "6 packages compiled (now the targets' main package, then linking"; !strings.Contains(c.String(), want) {
		t.Errorf("String() = %q, want it to contain %q", c.String(), want)
	}
}

func TestKeyFollowsWhatGoesIntoTheBinary(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/termlab/termlab\n")
	write("internal/lab/lab.go", "package lab\n")
	write("manifests/kwok/stage.yaml", "kind: Stage\n")
	env := map[string]string{}
	key := func() string {
		t.Helper()
		k, err := Key(root, func(s string) string { return env[s] })
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key()
	for _, tc := range []struct {
		what    string
		change  func()
		changes bool
	}{
		{"a test", func() { write("internal/lab/lab_test.go", "package lab\n") }, false},
		{"a run folder", func() { write("results/scale/x/events.jsonl", "{}\n") }, false},
		{"the state folder", func() { write(".termlab/kubeconfig", "x") }, false},
		{"a README", func() { write("labs/scale/README.md", "x") }, false},
		{"the e2e tests", func() { write("test/e2e/x.go", "package e2e\n") }, false},
		{"mage's generated main", func() { write("magefiles/targets/mage_output_file.go", "package main\n") }, false},
		{"a Go source", func() { write("internal/lab/lab.go", "package lab // changed\n") }, true},
		{"an embedded file", func() { write("manifests/kwok/stage.yaml", "kind: Stage # changed\n") }, true},
		{"a new package", func() { write("internal/new/new.go", "package new\n") }, true},
		{"GOFLAGS", func() { env["GOFLAGS"] = "-race" }, true},
	} {
		before := key()
		tc.change()
		if changed := key() != before; changed != tc.changes {
			t.Errorf("after changing %s the key changed = %v, want %v", tc.what, changed, tc.changes)
		}
	}
	if base == key() {
		t.Errorf("the key never changed")
	}
}
