package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBundleSet(t *testing.T) {
	root := t.TempDir()
	if _, ok := BundleRoot(root); ok {
		t.Fatal("an empty folder is taken for a bundle")
	}
	write := func(s string) {
		t.Helper()
		p := filepath.Join(root, BundleSetFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"format":"` + BundleSetFormat + `","set":{"node":"n:1","node_from":"built","kwok":"k:1","kwok_from":"built","workload":"w:1"},"ids":{"n:1":"sha256:a","k:1":"sha256:b","w:1":"sha256:c"}}`)
	if d, ok := BundleRoot(root); !ok || d != root {
		t.Fatalf("BundleRoot = %q, %v", d, ok)
	}
	bs, err := ReadBundleSet(root)
	if err != nil {
		t.Fatal(err)
	}
	if bs.Set.Node != "n:1" || bs.IDs["w:1"] != "sha256:c" {
		t.Errorf("read %+v", bs)
	}
	write(`{"format":"` + BundleSetFormat + `","set":{"node":"n:1","kwok":"k:1","workload":"w:1"},"ids":{"n:1":"sha256:a"}}`)
	if _, err := ReadBundleSet(root); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("an incomplete images.json: %v", err)
	}
	write(`{"format":"other/9"}`)
	if _, err := ReadBundleSet(root); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("another format: %v", err)
	}
	if src, err := ParseSource("bundle"); err != nil || src != Bundle {
		t.Errorf("ParseSource(bundle) = %v, %v", src, err)
	}
	t.Setenv(BundleEnv, "/elsewhere")
	if d, ok := BundleRoot(root); !ok || d != "/elsewhere" {
		t.Errorf("TERMLAB_BUNDLE not honoured: %q", d)
	}
}
