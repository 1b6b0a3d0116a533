// Package sourcekey keys builds of termlab's own packages on the checkout's
// sources, so a build whose sources did not change is found again without
// asking go (a go build of a cached package still costs 0.2–0.9 s of CPU).
package sourcekey

import (
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/termlab/termlab/internal/cachekey"
)

// Of hashes what a build of any of termlab's own packages depends on: every
// file of the checkout that can go into a binary (Go sources and what they
// embed; go.mod and go.sum pin the modules), the Go version and the
// environment that changes a build. Tests, results, docs and state are left
// out. format names the user's own key format (it changes when they do).
// About 30 ms on this checkout.
func Of(root, format string, getenv func(string) string) (string, error) {
	k := cachekey.New().Add("format", format).Add("go", runtime.Version())
	for _, v := range []string{"GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GOTOOLCHAIN"} {
		k.Add("env "+v, getenv(v))
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !skipFile(d.Name()) {
			k.AddFile("file "+filepath.ToSlash(rel), path)
		}
		return nil
	})
	if err == nil {
		err = k.Err()
	}
	if err != nil {
		return "", err
	}
	return k.String(), nil
}

// skipDir: folders that never go into the binary, and nested modules.
func skipDir(rel, name string) bool {
	switch {
	case strings.HasPrefix(name, "."), name == "testdata", name == "node_modules":
		return true
	case rel == "results", rel == "bin", rel == "test":
		return true
	}
	return false
}

func skipFile(name string) bool {
	return strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".md") ||
		name == "mage_output_file.go" || strings.HasPrefix(name, ".")
}
