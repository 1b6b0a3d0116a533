// Package testbin builds the package under test as the images get it
// (internal/ownbuild) and checks the result is a static executable, for tests
// that run our programs for real.
package testbin

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/termlab/termlab/internal/ownbuild"
)

// BuildStatic builds the package in the test's working directory into a temp
// file named name and fails the test if it is dynamically linked. It has no
// timer of its own: the build shares the images' cache entry, and a cold
// machine may take minutes, so only go test's -timeout bounds it.
func BuildStatic(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if err := ownbuild.Build(t.Context(), ".", ".", bin, ownbuild.Target{}); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("%s is dynamically linked (program header %v)", bin, p.Type)
		}
	}
	return bin
}
