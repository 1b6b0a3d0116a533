// Package project locates termlab's own folders: the repository root (where
// manifests/ and results/ live) and the git-ignored state folder .termlab/.
package project

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// ModulePath identifies the repository's go.mod.
const ModulePath = "github.com/termlab/termlab"

// Root returns the repository root: TERMLAB_ROOT, or the nearest parent of the
// working directory whose go.mod declares ModulePath.
func Root() (string, error) {
	if r := os.Getenv("TERMLAB_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return RootAbove(dir)
}

// RootAbove is the nearest of dir and its parents whose go.mod declares
// ModulePath (TERMLAB_ROOT is not consulted).
func RootAbove(dir string) (string, error) {
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+ModulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the termlab repository (no go.mod for %s above the working directory); cd into it or set TERMLAB_ROOT", ModulePath)
		}
		dir = parent
	}
}

// StateDir is the git-ignored folder of the repository at root for the
// kubeconfig and local state.
func StateDir(root string) string { return filepath.Join(root, ".termlab") }

// KubeconfigPath is where cluster:up writes the cluster's kubeconfig; the
// user's ~/.kube/config is left alone.
func KubeconfigPath(root string) string { return filepath.Join(StateDir(root), "kubeconfig") }

// ManifestsDir holds the project's inputs (kind config, kwok stages, pods, CNI).
func ManifestsDir(root string) string { return filepath.Join(root, "manifests") }

// ResultsDir holds run folders.
func ResultsDir(root string) string { return filepath.Join(root, "results") }

// CacheDir is the machine-wide build cache (survives fresh clones): the user
// cache dir, or TERMLAB_CACHE_DIR.
func CacheDir() string {
	if d := os.Getenv("TERMLAB_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "termlab")
}
