package dockerhost

import (
	"os"
	"reflect"
	"testing"
)

func TestWithWrapperRuntimeKeepsOtherSettings(t *testing.T) {
	in := map[string]any{
		"log-level": "warn",
		"runtimes":  map[string]any{"nvidia": map[string]any{"path": "/usr/bin/nvidia-container-runtime"}},
	}
	got := WithWrapperRuntime(in, "/w")
	want := map[string]any{
		"log-level": "warn",
		"runtimes": map[string]any{
			"nvidia":       map[string]any{"path": "/usr/bin/nvidia-container-runtime"},
			"termlab-runc": map[string]any{"path": "/w"},
		},
		"default-runtime": "termlab-runc",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if _, changed := in["default-runtime"]; changed {
		t.Fatal("input map was modified")
	}
}

func TestCopyExecutable(t *testing.T) {
	dir := t.TempDir()
	src, dst := dir+"/src", dir+"/dst"
	if err := os.WriteFile(src, []byte("bin"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !fileExists(src) || fileExists(dir) || fileExists(dir+"/missing") {
		t.Fatal("fileExists wrong")
	}
	if err := copyExecutable(src, dst); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dst)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("dst %v %v", st, err)
	}
	if _, err := os.Stat(dst + ".tmp"); !os.IsNotExist(err) {
		t.Fatal("temporary file left")
	}
}
