package cachekey

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// A large file's hash is remembered while the file is unchanged, and
// computed again once it is written to, even to the same size.
func TestRememberedHashFollowsTheFile(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "big")
	data := bytes.Repeat([]byte("a"), memoMin)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a file changed within the second is never remembered
	first, err := hashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	abs, _ := filepath.Abs(path)
	if sum, ok := remembered(abs, identity(info)); !ok || sum != first {
		t.Fatalf("not remembered: %q %v", sum, ok)
	}
	// Rewritten with the same size and its old modification time set back:
	// the change time still moves, so the hash is computed again.
	data[0] = 'b'
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	second, err := hashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Error("a changed file kept its remembered hash")
	}
}
