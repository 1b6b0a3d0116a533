package gobuild

import (
	"os"
	"path/filepath"
	"testing"
)

func TestModuleCacheDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	dir := filepath.Join(cache, "github.com", "!burnt!sushi", "toml@v1.2.3")
	if got := ModuleCacheDir("github.com/BurntSushi/toml", "v1.2.3"); got != "" {
		t.Fatalf("not extracted yet: got %q", got)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ModuleCacheDir("github.com/BurntSushi/toml", "v1.2.3"); got != "" {
		t.Fatalf("no go.mod (a half-extracted module): got %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/BurntSushi/toml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ModuleCacheDir("github.com/BurntSushi/toml", "v1.2.3"); got != dir {
		t.Fatalf("got %q, want %q", got, dir)
	}
	if got := ModuleCacheDir("github.com/BurntSushi/toml", ""); got != "" {
		t.Fatalf("no version: got %q", got)
	}
}

func TestBuiltWithUnknownModule(t *testing.T) {
	if v := BuiltWith("example.com/not/a/dependency"); v != "" {
		t.Fatalf("got %q", v)
	}
}
