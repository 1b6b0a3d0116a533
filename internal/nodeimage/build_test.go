package nodeimage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestContainerdConfigUsesLocalPauseAndRestrictsOOMScore(t *testing.T) {
	in := []byte("[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n  restrict_oom_score_adj = false\n")
	got := string(ContainerdConfig(in))
	for _, want := range []string{`  sandbox_image = "termlab.local/pause:3.10.2"`, "  restrict_oom_score_adj = true"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "registry.k8s.io") || strings.Contains(got, "= false") {
		t.Errorf("old values left in\n%s", got)
	}
}

func TestContainerdConfigOnKindsRealFile(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind").Output()
	if err != nil {
		t.Fatalf("locating the kind module: %v", err)
	}
	kind := strings.TrimSpace(string(out))
	data, err := os.ReadFile(filepath.Join(kind, "images/base/files/etc/containerd/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(ContainerdConfig(data)); !strings.Contains(got, "termlab.local/pause") {
		t.Fatal("kind's config.toml no longer has a sandbox_image line we can set")
	}
}

func TestCRIBaseSpec(t *testing.T) {
	in := `{"ociVersion":"1.1.0","process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}],"cwd":"/"},"hooks":{"createContainer":[{"path":"/x"}]}}`
	out, err := CRIBaseSpec([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Process map[string]any
		Hooks   struct{ CreateContainer []struct{ Path string } }
	}
	if err := json.Unmarshal(out, &spec); err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.Process["rlimits"]; ok {
		t.Error("rlimits kept")
	}
	if n := len(spec.Hooks.CreateContainer); n != 2 || spec.Hooks.CreateContainer[1].Path != "/kind/bin/mount-product-files.sh" {
		t.Errorf("hooks %+v", spec.Hooks)
	}
	if _, err := CRIBaseSpec([]byte("not json")); err == nil {
		t.Error("want error")
	}
}

func TestLddPaths(t *testing.T) {
	lines := []string{
		"\tlinux-vdso.so.1 (0x00007ffd)",
		"\tlibxtables.so.12 => /lib/x86_64-linux-gnu/libxtables.so.12 (0x00007f)",
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)",
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f)",
		"\tlibmissing.so => not found",
	}
	want := []string{"/lib/x86_64-linux-gnu/libxtables.so.12", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if got := LddPaths(lines); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestMirrorFrom(t *testing.T) {
	dir := t.TempDir()
	deb822 := filepath.Join(dir, "debian.sources")
	os.WriteFile(deb822, []byte("Types: deb\nURIs: http://deb.debian.org/debian-security\n\nTypes: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n"), 0o644)
	if got := mirrorFrom(deb822); got != "http://mirror.example/debian" {
		t.Errorf("deb822: %q", got)
	}
	oneLine := filepath.Join(dir, "sources.list")
	os.WriteFile(oneLine, []byte("# comment\ndeb [arch=amd64] http://ftp.example/debian bookworm main\n"), 0o644)
	if got := mirrorFrom(oneLine); got != "http://ftp.example/debian" {
		t.Errorf("one-line: %q", got)
	}
	if got := mirrorFrom(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

func TestCNIManifestSubstitutesImage(t *testing.T) {
	got := string(CNIManifest([]byte("image: PODNET_IMAGE\n")))
	if got != "image: termlab.local/podnet:v1\n" {
		t.Fatalf("got %q", got)
	}
}

func TestVersionsFromKubeadm(t *testing.T) {
	list := func(kube, etcd, coredns, pause string) []string {
		return []string{
			"termlab.local/kube-apiserver:" + kube, "termlab.local/kube-controller-manager:" + kube,
			"termlab.local/kube-scheduler:" + kube, "termlab.local/kube-proxy:" + kube,
			"termlab.local/coredns:" + coredns, "termlab.local/pause:" + pause, "termlab.local/etcd:" + etcd,
		}
	}
	// What kubeadm v1.37.2 printed: the default node image's tags.
	got, err := VersionsFromKubeadm("v1.37.2", list("v1.37.2", "3.7.0-0", "v1.14.6", "3.10.2"))
	if err != nil || got != DefaultVersions {
		t.Fatalf("v1.37.2: %+v, %v; want %+v", got, err, DefaultVersions)
	}
	got, err = VersionsFromKubeadm("v1.36.3", list("v1.36.3", "3.6.8-0", "v1.14.2", "3.10.2"))
	want := Versions{Kube: "v1.36.3", EtcdTag: "3.6.8-0", CoreDNSTag: "v1.14.2", PauseTag: "3.10.2"}
	if err != nil || got != want {
		t.Fatalf("v1.36.3: %+v, %v; want %+v", got, err, want)
	}
	for name, refs := range map[string][]string{
		"another release's control plane": list("v1.37.2", "3.6.8-0", "v1.14.2", "3.10.2"),
		"no etcd":                         list("v1.36.3", "3.6.8-0", "v1.14.2", "3.10.2")[:6],
		"another registry":                append(list("v1.36.3", "3.6.8-0", "v1.14.2", "3.10.2"), "registry.k8s.io/pause:3.9"),
		"an image termlab does not build": append(list("v1.36.3", "3.6.8-0", "v1.14.2", "3.10.2"), "termlab.local/extra:v1"),
	} {
		if _, err := VersionsFromKubeadm("v1.36.3", refs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEtcdModuleVersion(t *testing.T) {
	for tag, want := range map[string]string{"3.6.8-0": "v3.6.8", "3.7.0-0": "v3.7.0", "3.5.24": "v3.5.24"} {
		if got, err := EtcdModuleVersion(tag); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", tag, got, err, want)
		}
	}
	if _, err := EtcdModuleVersion("3.6"); err == nil {
		t.Error("3.6: no error")
	}
}

func TestInputsKeyOfTheDefaultVersionsIgnoresTheirSpelling(t *testing.T) {
	// Inputs without Versions and with DefaultVersions spelt out are the same
	// image (the default key predates Versions); another release is another key.
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range kubeBinaries {
		if err := os.WriteFile(filepath.Join(dir, b), []byte(b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := Inputs{RootfsTar: f, KindModuleDir: dir, KubeBinDir: dir, Etcd: f, CoreDNS: f, Crictl: f, Pause: f, Podnet: f, CNIManifest: f}
	spelt := in
	spelt.Versions = DefaultVersions
	other := in
	other.Versions = Versions{Kube: "v1.36.3", EtcdTag: "3.6.8-0", CoreDNSTag: "v1.14.2", PauseTag: "3.10.2"}
	if in.key().String() != spelt.key().String() {
		t.Error("DefaultVersions spelt out changes the key")
	}
	if in.key().String() == other.key().String() {
		t.Error("another release has the default key")
	}
	if in.NodeRef() != NodeRef || other.NodeRef() != "termlab.local/node:v1.36.3" {
		t.Errorf("refs %s, %s", in.NodeRef(), other.NodeRef())
	}
}
