package cachekey

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKeyIsOrderIndependentAndSensitive(t *testing.T) {
	a := New().Add("x", "1").Add("y", "2").String()
	b := New().Add("y", "2").Add("x", "1").String()
	if a != b {
		t.Fatalf("order changed the key: %s vs %s", a, b)
	}
	if c := New().Add("x", "1").Add("y", "3").String(); c == a {
		t.Fatal("a changed value kept the key")
	}
	if len(a) != 16 {
		t.Fatalf("key length %d", len(a))
	}
}

func TestAddTreeSeesContentAndMode(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "sub", "f")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	k1 := New().AddTree("t", dir).String()
	if err := os.Chmod(f, 0o755); err != nil {
		t.Fatal(err)
	}
	k2 := New().AddTree("t", dir).String()
	if err := os.WriteFile(f, []byte("b"), 0o755); err != nil {
		t.Fatal(err)
	}
	k3 := New().AddTree("t", dir).String()
	if k1 == k2 || k2 == k3 {
		t.Fatalf("tree key did not change: %s %s %s", k1, k2, k3)
	}
	if k := New().AddFile("f", filepath.Join(dir, "missing")); k.Err() == nil {
		t.Fatal("missing file must be an error")
	}
}
