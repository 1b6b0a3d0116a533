package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/termlab/termlab/internal/progress"
)

func TestSemverOf(t *testing.T) {
	for in, want := range map[string]string{
		"v0.1.0":                    "v0.1.0",
		"v0.1.0-dirty":              "v0.1.0-dirty",
		"v0.1.0-3-gabc1234":         "v0.1.0-3-gabc1234",
		"v0.1.0-3-gabc1234-dirty\n": "v0.1.0-3-gabc1234-dirty",
		"65edb7c":                   "v0.0.0-g65edb7c",
		"0123456-dirty":             "v0.0.0-g0123456-dirty",
		"release_1":                 "v0.0.0-release-1",
	} {
		got := SemverOf(in)
		if got != want {
			t.Errorf("SemverOf(%q) = %q, want %q", in, got, want)
		}
		if err := CheckVersion(got); err != nil {
			t.Errorf("SemverOf(%q) = %q, which krew refuses: %v", in, got, err)
		}
	}
	for _, bad := range []string{"0.1.0", "v0.1", "vx", ""} {
		if CheckVersion(bad) == nil {
			t.Errorf("CheckVersion(%q) accepted it", bad)
		}
	}
}

// entries reads a .tar.gz: name -> header and content, in order.
func readArchive(t *testing.T, b []byte) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var hs []*tar.Header
	data := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hs, data
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		data[h.Name] = b
	}
}

func TestPackPutsEveryFileAtTheRootAndIsReproducible(t *testing.T) {
	when := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	entries := []Entry{{Name: "kubectl-termlab", Mode: 0o755, Data: []byte("\x7fELF fake")}, {Name: "LICENSE", Mode: 0o644, Data: []byte("Apache")}}
	var a, b bytes.Buffer
	if err := Pack(&a, when, entries); err != nil {
		t.Fatal(err)
	}
	if err := Pack(&b, when, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same files packed twice differ")
	}
	hs, data := readArchive(t, a.Bytes())
	if len(hs) != 2 || hs[0].Name != "kubectl-termlab" || hs[1].Name != "LICENSE" {
		t.Fatalf("archive holds %v", hs)
	}
	if hs[0].Mode != 0o755 || hs[1].Mode != 0o644 || !hs[0].ModTime.Equal(when) || hs[0].Uid != 0 {
		t.Errorf("headers %+v %+v", hs[0], hs[1])
	}
	if string(data["kubectl-termlab"]) != "\x7fELF fake" || string(data["LICENSE"]) != "Apache" {
		t.Errorf("contents %q", data)
	}
	if err := Pack(io.Discard, when, []Entry{{Name: "bin/kubectl-termlab"}}); err == nil {
		t.Error("Pack took a file below the root")
	}
}

func fakeArtifacts() []Artifact {
	var arts []Artifact
	for _, p := range Platforms {
		sum := sha256.Sum256([]byte(p.String()))
		arts = append(arts, Artifact{Platform: p, SHA256: hex.EncodeToString(sum[:])})
	}
	return arts
}

// krewManifest is what krew reads of a manifest (pkg/index's Plugin).
type krewManifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Version          string             `yaml:"version"`
		Homepage         string             `yaml:"homepage"`
		ShortDescription string             `yaml:"shortDescription"`
		Description      string             `yaml:"description"`
		Caveats          string             `yaml:"caveats"`
		Platforms        []manifestPlatform `yaml:"platforms"`
	} `yaml:"spec"`
}

func filledManifest(t *testing.T) []byte {
	t.Helper()
	template, err := os.ReadFile(filepath.Join("..", "..", Template))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Manifest(template, "v0.1.0", BaseURL(DefaultBaseURL, "v0.1.0"), fakeArtifacts())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestManifestFillsEveryPlatformAndKeepsTheRest(t *testing.T) {
	out := filledManifest(t)
	if strings.Contains(string(out), "PLACEHOLDER") || strings.Contains(string(out), "TEMPLATE") || !strings.HasPrefix(string(out), "# krew plugin manifest for `kubectl termlab` v0.1.0 ") {
		t.Errorf("a placeholder is left:\n%s", out)
	}
	var m, tmpl krewManifest
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	template, _ := os.ReadFile(filepath.Join("..", "..", Template))
	if err := yaml.Unmarshal(template, &tmpl); err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != tmpl.APIVersion || m.Kind != "Plugin" || m.Metadata.Name != Name || m.Spec.Version != "v0.1.0" ||
		m.Spec.Description != tmpl.Spec.Description || m.Spec.Caveats != tmpl.Spec.Caveats || m.Spec.ShortDescription != tmpl.Spec.ShortDescription || m.Spec.Homepage != tmpl.Spec.Homepage {
		t.Errorf("header or texts changed:\n%s", out)
	}
	if len(m.Spec.Platforms) != len(fakeArtifacts()) {
		t.Fatalf("%d platforms, want %d", len(m.Spec.Platforms), len(fakeArtifacts()))
	}
	for i, p := range m.Spec.Platforms {
		a := fakeArtifacts()[i]
		want := "https://github.com/termlab/termlab/releases/download/v0.1.0/termlab_" + a.OS + "_" + a.Arch + ".tar.gz"
		if p.Selector.MatchLabels.OS != a.OS || p.Selector.MatchLabels.Arch != a.Arch || p.URI != want || p.SHA256 != a.SHA256 || p.Bin != a.Exe() {
			t.Errorf("platform %d: %+v, want %s %s", i, p, a.Platform, want)
		}
		var files []string
		for _, f := range p.Files {
			files = append(files, f.From+"->"+f.To)
		}
		if got, want := strings.Join(files, " "), a.Exe()+"->. LICENSE->. README.md->."; got != want {
			t.Errorf("platform %s files %s, want %s", a.Platform, got, want)
		}
	}
	if !strings.Contains(string(out), "bin: kubectl-termlab.exe") {
		t.Error("windows' bin is not kubectl-termlab.exe")
	}
}

// The filled manifest passes krew's own checks (validate-krew-manifest, BuildKrew) and the
// template with placeholders does not. Building the validator takes minutes
// on a new machine, so the unit tests run this only when asked
// (TERMLAB_KREW_VALIDATE=1); `go tool mage release` runs the same check on
// every manifest it writes.
func TestManifestPassesKrewsValidation(t *testing.T) {
	if os.Getenv("TERMLAB_KREW_VALIDATE") != "1" {
		t.Skip("builds krew's validator (minutes): TERMLAB_KREW_VALIDATE=1 runs it; go tool mage release always does")
	}
	ctx := context.Background()
	bin := t.TempDir()
	var log bytes.Buffer
	validate := func(manifest []byte) (string, error) {
		path := filepath.Join(t.TempDir(), Name+".yaml")
		if err := os.WriteFile(path, manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		return ValidateManifest(ctx, progress.New(&log), bin, path)
	}
	if out, err := validate(filledManifest(t)); err != nil {
		t.Fatalf("krew refuses the filled manifest: %v\n%s\n%s", err, out, log.String())
	}
	template, _ := os.ReadFile(filepath.Join("..", "..", Template))
	if out, err := validate(template); err == nil || !strings.Contains(out, "sha256") {
		t.Errorf("krew accepts the template with placeholders (%v):\n%s", err, out)
	}
}

// Run on a tiny checkout (a main that prints a word, git-committed):
// the archive holds the binary, LICENSE and README.md at its root, the
// .sha256 file matches, and the binary runs.
func TestRunPacksWhatKrewInstalls(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	template, err := os.ReadFile(filepath.Join("..", "..", Template))
	if err != nil {
		t.Fatal(err)
	}
	write("go.mod", "module example.com/fake\n\ngo 1.26\n")
	write("cmd/termlab/main.go", "package main\n\nfunc main() { println(\"fake-termlab\") }\n")
	write("LICENSE", "fake license\n")
	write("plugins/README.md", "fake readme\n")
	write(Template, string(template))
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "fake"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	host := Platform{runtime.GOOS, runtime.GOARCH}
	var log bytes.Buffer
	res, err := Run(context.Background(), Options{Root: root, Version: "v0.1.0", Platforms: []Platform{host}, Log: progress.New(&log)})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(res.Artifacts) != 1 || !strings.Contains(log.String(), "[1/1] "+host.String()) {
		t.Fatalf("artifacts %+v, log:\n%s", res.Artifacts, log.String())
	}
	a := res.Artifacts[0]
	if a.Path != filepath.Join(root, "dist", host.Archive()) || len(res.Stamp.Commit) != 40 || res.Stamp.Version != "v0.1.0" {
		t.Errorf("result %+v", res)
	}
	b, err := os.ReadFile(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != a.SHA256 {
		t.Error("the archive's sha256 is not the one reported")
	}
	side, _ := os.ReadFile(a.Path + ".sha256")
	if string(side) != a.SHA256+"  "+host.Archive()+"\n" {
		t.Errorf(".sha256 file %q", side)
	}
	hs, data := readArchive(t, b)
	var names []string
	for _, h := range hs {
		names = append(names, h.Name)
	}
	if strings.Join(names, " ") != host.Exe()+" LICENSE README.md" {
		t.Fatalf("archive holds %v", names)
	}
	if string(data["LICENSE"]) != "fake license\n" || string(data["README.md"]) != "fake readme\n" || hs[0].Mode != 0o755 {
		t.Errorf("archive %v", hs)
	}
	exe := filepath.Join(t.TempDir(), host.Exe())
	if err := os.WriteFile(exe, data[host.Exe()], 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(exe).CombinedOutput(); err != nil || !strings.Contains(string(out), "fake-termlab") {
		t.Errorf("the packed binary: %v %s", err, out)
	}
	manifest, err := os.ReadFile(res.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), "sha256: "+a.SHA256) || !strings.Contains(string(manifest), "/v0.1.0/"+host.Archive()) {
		t.Errorf("dist/termlab.yaml does not name the archive:\n%s", manifest)
	}
}
