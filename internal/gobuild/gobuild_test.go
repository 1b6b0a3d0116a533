package gobuild

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var testToolchain = Toolchain{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64"}

func sampleRecipe() Recipe {
	return Recipe{
		Name:      "sample",
		Version:   "v1.0.0",
		Require:   map[string]string{"example.com/a": "v1.0.0", "example.com/b": "v2.0.0"},
		Replace:   map[string]string{"example.com/c": "example.com/c v0.1.0"},
		MainFiles: map[string]string{"hello/main.go": "package main\nfunc main() {}\n"},
		Packages:  []string{"./hello", "example.com/a/cmd/tool"},
		Tags:      []string{"x", "y"},
		LDFlags:   "-s -w",
		Env:       []string{"GOAMD64=v2"},
		Checks:    []Check{{Binary: "hello", Want: ""}},
	}
}

// clone deep-copies the maps and slices, so a test case can change one input.
func clone(r Recipe) Recipe {
	r.Require, r.Replace, r.MainFiles = maps.Clone(r.Require), maps.Clone(r.Replace), maps.Clone(r.MainFiles)
	r.Packages = append([]string(nil), r.Packages...)
	r.Tags = append([]string(nil), r.Tags...)
	r.Env = append([]string(nil), r.Env...)
	r.Checks = append([]Check(nil), r.Checks...)
	return r
}

func TestKey(t *testing.T) {
	base := sampleRecipe().Key(testToolchain)
	if len(base) != 64 {
		t.Fatalf("key %q is not a hex sha256", base)
	}
	changes := map[string]func(r *Recipe, tc *Toolchain){
		"name":            func(r *Recipe, _ *Toolchain) { r.Name = "other" },
		"version":         func(r *Recipe, _ *Toolchain) { r.Version = "v1.0.1" },
		"require version": func(r *Recipe, _ *Toolchain) { r.Require["example.com/a"] = "v1.0.1" },
		"require added":   func(r *Recipe, _ *Toolchain) { r.Require["example.com/d"] = "v1.0.0" },
		"replace":         func(r *Recipe, _ *Toolchain) { r.Replace["example.com/c"] = "example.com/c v0.1.1" },
		"replace removed": func(r *Recipe, _ *Toolchain) { delete(r.Replace, "example.com/c") },
		"main source":     func(r *Recipe, _ *Toolchain) { r.MainFiles["hello/main.go"] += "// changed\n" },
		"main file moved": func(r *Recipe, _ *Toolchain) {
			r.MainFiles["hi/main.go"] = r.MainFiles["hello/main.go"]
			delete(r.MainFiles, "hello/main.go")
		},
		"package added": func(r *Recipe, _ *Toolchain) { r.Packages = append(r.Packages, "example.com/b/cmd/x") },
		"tag":           func(r *Recipe, _ *Toolchain) { r.Tags = []string{"x"} },
		"ldflags":       func(r *Recipe, _ *Toolchain) { r.LDFlags = "-s" },
		"env":           func(r *Recipe, _ *Toolchain) { r.Env = nil },
		"go version":    func(_ *Recipe, tc *Toolchain) { tc.GoVersion = "go1.26.9" },
		"goarch":        func(_ *Recipe, tc *Toolchain) { tc.GOARCH = "arm64" },
		"goos":          func(_ *Recipe, tc *Toolchain) { tc.GOOS = "darwin" },
	}
	for name, change := range changes {
		t.Run("changes/"+name, func(t *testing.T) {
			r, tc := clone(sampleRecipe()), testToolchain
			change(&r, &tc)
			if got := r.Key(tc); got == base {
				t.Errorf("key unchanged after changing the %s", name)
			}
		})
	}
	same := map[string]func(r *Recipe){
		"fresh copy":       func(r *Recipe) {},
		"packages reorder": func(r *Recipe) { r.Packages[0], r.Packages[1] = r.Packages[1], r.Packages[0] },
		"tags reorder":     func(r *Recipe) { r.Tags = []string{"y", "x"} },
		"checks":           func(r *Recipe) { r.Checks = nil },
		"maps rebuilt": func(r *Recipe) {
			m := map[string]string{}
			m["example.com/b"], m["example.com/a"] = "v2.0.0", "v1.0.0"
			r.Require = m
		},
	}
	for name, change := range same {
		t.Run("same/"+name, func(t *testing.T) {
			r := clone(sampleRecipe())
			change(&r)
			if got := r.Key(testToolchain); got != base {
				t.Errorf("key changed after %s", name)
			}
		})
	}
}

func TestStagingReplacesFromGoMod(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	reps, err := readReplaces(context.Background(), filepath.Join("testdata", "kubernetes.go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := stagingReplaces(reps, "v0.37.2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"k8s.io/api":                "k8s.io/api v0.37.2",
		"k8s.io/apimachinery":       "k8s.io/apimachinery v0.37.2",
		"k8s.io/client-go":          "k8s.io/client-go v0.37.2",
		"k8s.io/component-base":     "k8s.io/component-base v0.37.2",
		"github.com/example/forked": "github.com/example/fork v1.2.3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stagingReplaces:\n got %v\nwant %v", got, want)
	}
}

func TestStagingReplacesRejects(t *testing.T) {
	for name, rp := range map[string]modReplace{
		"directory outside staging": {Old: modPath("example.com/x", ""), New: modPath("../x", "")},
		"version-specific":          {Old: modPath("example.com/x", "v1.0.0"), New: modPath("example.com/y", "v1.0.1")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := stagingReplaces([]modReplace{rp}, "v0.37.2"); err == nil {
				t.Error("no error")
			}
		})
	}
}

func modPath(path, version string) struct{ Path, Version string } {
	return struct{ Path, Version string }{path, version}
}

func TestStagingVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.37.2": "v0.37.2", "v1.38.0-beta.0": "v0.38.0-beta.0", "1.37.2": "", "v2.0.0": "", "v1.37": ""} {
		got, err := stagingVersion(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("stagingVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestLDFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extra  []string
		stamps []Stamp
		want   string
	}{
		{"empty", nil, nil, ""},
		{"extra only", []string{"-s", "-w"}, nil, "-s -w"},
		{"plain", []string{"-s"}, []Stamp{{"example.com/v", "Version", "v1.2.3"}}, "-s -X example.com/v.Version=v1.2.3"},
		{"space", nil, []Stamp{{"p", "V", "a b"}}, "-X 'p.V=a b'"},
		{"single quote", nil, []Stamp{{"p", "V", "it's"}}, `-X "p.V=it's"`},
		{"empty value", nil, []Stamp{{"p", "V", ""}}, "-X p.V="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LDFlags(tc.extra, tc.stamps...); got != tc.want {
				t.Errorf("LDFlags = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKubernetesLDFlags(t *testing.T) {
	got := LDFlags(nil, kubernetesStamps("v1.37.2", "2026-10-27T12:01:04Z")...)
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for _, kv := range []string{"gitVersion=v1.37.2", "gitMajor=1", "gitMinor=37", "gitTreeState=clean",
			"gitCommit=" + fixedCommit, "buildDate=2026-10-27T12:01:04Z"} {
			if want := "-X " + pkg + "." + kv; !strings.Contains(got, want+" ") && !strings.HasSuffix(got, want) {
				t.Errorf("ldflags lack %q:\n%s", want, got)
			}
		}
	}
}

func TestBinaryName(t *testing.T) {
	for in, want := range map[string]string{
		"k8s.io/kubernetes/cmd/kubeadm": "kubeadm",
		"./etcd":                        "etcd",
		"go.etcd.io/etcd/server/v3":     "server",
		"example.com/cmd/v1":            "v1",
		"example.com/cmd/v0":            "v0",
		"example.com/v2":                "example.com",
		"tool":                          "tool",
	} {
		if got := binaryName(in); got != want {
			t.Errorf("binaryName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderGoMod(t *testing.T) {
	got := renderGoMod(sampleRecipe(), "1.26.8")
	for _, want := range []string{
		"module termlab.local/gobuild/sample\n\ngo 1.26.8\n",
		"require (\n\texample.com/a v1.0.0\n\texample.com/b v2.0.0\n)\n",
		"replace (\n\texample.com/c => example.com/c v0.1.0\n)\n",
		"tool (\n\texample.com/a/cmd/tool\n)\n", // ./hello is local: no tool line
	} {
		if !strings.Contains(got, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, got)
		}
	}
}

// The generated mains must at least parse; whether they compile is up to the real build.
func TestGeneratedMainsParse(t *testing.T) {
	for _, r := range []Recipe{Etcd(), CoreDNS(), Crictl(), Kwok(), kubernetesRecipe(nil)} {
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
		for rel, src := range r.MainFiles {
			if _, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.AllErrors); err != nil {
				t.Errorf("%s %s: %v\n%s", r, rel, err, src)
			}
		}
	}
	src := CoreDNS().MainFiles["coredns/main.go"]
	for _, want := range []string{`_ "github.com/coredns/coredns/plugin/metrics"`, `"prometheus"`, `_ "github.com/coredns/coredns/plugin/kubernetes"`} {
		if !strings.Contains(src, want) {
			t.Errorf("coredns main lacks %s", want)
		}
	}
}

func TestValidate(t *testing.T) {
	for name, change := range map[string]func(r *Recipe){
		"no packages":         func(r *Recipe) { r.Packages = nil },
		"duplicate binary":    func(r *Recipe) { r.Packages = []string{"./a/tool", "example.com/tool"} },
		"main file escapes":   func(r *Recipe) { r.MainFiles["../x.go"] = "" },
		"main file is go.mod": func(r *Recipe) { r.MainFiles["go.mod"] = "" },
		"replace by dir":      func(r *Recipe) { r.Replace["example.com/c"] = "../c" },
		"check unknown bin":   func(r *Recipe) { r.Checks = []Check{{Binary: "nope"}} },
		"slash in name":       func(r *Recipe) { r.Name = "a/b" },
	} {
		t.Run(name, func(t *testing.T) {
			r := clone(sampleRecipe())
			change(&r)
			if r.Validate() == nil {
				t.Error("no error")
			}
		})
	}
}

// tinyRecipe is a generated main with a stamped variable and nothing to download.
func tinyRecipe(version string) Recipe {
	return Recipe{
		Name:    "tiny",
		Version: "v0.0.1",
		MainFiles: map[string]string{"tiny/main.go": `package main

import "fmt"

var version = "unstamped"

func main() { fmt.Println("tiny", version) }
`},
		Packages: []string{"./tiny"},
		LDFlags:  LDFlags(stripFlags, Stamp{"main", "version", version}),
		Checks:   []Check{{Binary: "tiny", Want: "tiny " + version}},
	}
}

func TestBuildCachesByKey(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	ctx := context.Background()
	b := &Builder{CacheRoot: t.TempDir()}
	out := t.TempDir()

	first, err := b.Build(ctx, tinyRecipe("v1"), out)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || len(first.Binaries) != 1 || first.Binaries[0].Size == 0 {
		t.Fatalf("first build: %+v", first.Record)
	}
	second, err := b.Build(ctx, tinyRecipe("v1"), out)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Cached || second.Key != first.Key || second.Built.Key != first.Key {
		t.Errorf("second build not a cache hit: %+v", second.Record)
	}
	if second.DurationSeconds >= first.DurationSeconds {
		t.Errorf("cache hit took %.3fs, the build %.3fs", second.DurationSeconds, first.DurationSeconds)
	}
	// A changed input builds again, and the stamp follows.
	third, err := b.Build(ctx, tinyRecipe("v2"), out)
	if err != nil {
		t.Fatal(err)
	}
	if third.Cached || third.Key == first.Key {
		t.Errorf("changed ldflags still cached: %+v", third.Record)
	}
	if got, err := exec.Command(third.Path("tiny")).Output(); err != nil || string(got) != "tiny v2\n" {
		t.Errorf("tiny printed %q, %v", got, err)
	}
	// A missing binary is no cache hit.
	if err := os.Remove(third.Path("tiny")); err != nil {
		t.Fatal(err)
	}
	if fourth, err := b.Build(ctx, tinyRecipe("v2"), out); err != nil || fourth.Cached {
		t.Errorf("build after removing the binary: cached=%v, %v", fourth.Cached, err)
	}

	recs := readRecords(t, filepath.Join(b.CacheRoot, recordsLog))
	var cachedFlags []bool
	for _, r := range recs {
		cachedFlags = append(cachedFlags, r.Cached)
	}
	if want := []bool{false, true, false, false}; !reflect.DeepEqual(cachedFlags, want) {
		t.Errorf("builds.jsonl cached flags %v, want %v", cachedFlags, want)
	}
}

func TestBuildFailureNamesStepAndLog(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	r := tinyRecipe("v1")
	r.MainFiles["tiny/main.go"] = "package main\n\nfunc main() { undefinedThing() }\n"
	b := &Builder{CacheRoot: t.TempDir()}
	_, err := b.Build(context.Background(), r, t.TempDir())
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is no *StepError", err)
	}
	if se.Step != "go build" || se.Recipe != "tiny v0.0.1" || !strings.Contains(err.Error(), "undefined: undefinedThing") ||
		!strings.Contains(err.Error(), se.Log) {
		t.Errorf("error does not name step, recipe, log and cause:\n%v", err)
	}
}

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// The default versions' recipes must keep their cache keys: a changed key
// rebuilds Kubernetes (15 minutes) on every machine. These keys were taken
// before the versions became parameters (the etcd and CoreDNS ones are the
// stamps of real builds).
func TestDefaultRecipesKeepTheirKeys(t *testing.T) {
	tc := Toolchain{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64"}
	for _, c := range []struct {
		name string
		r    Recipe
		want string
	}{
		{"kubernetes", kubernetesRecipe(map[string]string{"k8s.io/api": "k8s.io/api v0.37.2"}), "a6eacaae2ccf8a4ce0ab97f95d84d090e7257750e6d24d21099b543ad3206910"},
		{"kubernetes at the default", kubernetesRecipeAt(KubernetesVersion, KubernetesBuildDate, map[string]string{"k8s.io/api": "k8s.io/api v0.37.2"}), "a6eacaae2ccf8a4ce0ab97f95d84d090e7257750e6d24d21099b543ad3206910"},
		{"etcd", Etcd(), "fc5743d85931e30788b80ae515fe07e44b82170f288367db1caee2d0038386bd"},
		{"etcd at the default", EtcdAt(EtcdVersion), "fc5743d85931e30788b80ae515fe07e44b82170f288367db1caee2d0038386bd"},
		{"coredns", CoreDNS(), "ed5d0d3f80747810f71441e597216e8d9e9698f5df2475b22e0965e27e2845f1"},
	} {
		if got := c.r.Key(tc); got != c.want {
			t.Errorf("%s: key %s, want %s (a changed default recipe rebuilds everything)", c.name, got, c.want)
		}
	}
}

func TestKubernetesRecipeAtAnotherVersion(t *testing.T) {
	r := kubernetesRecipeAt("v1.36.3", "2026-07-22T18:07:38Z", map[string]string{"k8s.io/api": "k8s.io/api v0.36.3"})
	if r.Version != "v1.36.3" || r.Require["k8s.io/kubernetes"] != "v1.36.3" {
		t.Fatalf("recipe %+v", r)
	}
	for _, want := range []string{"gitVersion=v1.36.3", "gitMinor=36", "buildDate=2026-07-22T18:07:38Z"} {
		if !strings.Contains(r.LDFlags, want) {
			t.Errorf("ldflags %q lack %q", r.LDFlags, want)
		}
	}
	if r.Checks[0].Want != "v1.36.3" {
		t.Errorf("checks %+v", r.Checks)
	}
	if e := EtcdAt("v3.6.8"); e.Checks[0].Want != "etcd Version: 3.6.8" || e.Require["go.etcd.io/etcd/server/v3"] != "v3.6.8" {
		t.Errorf("etcd recipe %+v", e)
	}
	if c := CoreDNSAt("v1.14.2"); c.Checks[0].Want != "CoreDNS-1.14.2" || c.Version != "v1.14.2" {
		t.Errorf("coredns recipe %+v", c)
	}
}
