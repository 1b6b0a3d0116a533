package kwok

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// What a machine without Go needs to render kwok: the parts of the kwok
// module's kustomize/ directory that manifests/kwok refers to, copied into a
// folder (a workshop bundle's kwok/module). UseModuleDir makes every later
// Render, RenderStages and Install of this process use that folder instead of
// asking `go list -m` or the module cache, so the render — and its checks, and
// the image set on top — is exactly the one the repository does.

// ModuleDirEnv names such a folder for a process that cannot call UseModuleDir.
// The workshop binary reads it (internal/workshop.Activate).
const ModuleDirEnv = "TERMLAB_KWOK_MODULE_DIR"

// LocateModule finds the kwok module's source directory as Render does.
func LocateModule() (Module, error) { return locateModule("") }

// UseModuleDir makes dir (holding kustomize/kwok/kustomization.yaml and the
// directories it refers to) the kwok module for this process.
func UseModuleDir(dir string) error {
	if err := checkModuleDir(dir); err != nil {
		return err
	}
	moduleCache.Lock()
	defer moduleCache.Unlock()
	moduleCache.mod = Module{Version: ModuleVersion, Dir: dir}
	return nil
}

// CopyModuleSubset copies the parts of the module's kustomize/ directory that
// rendering needs from the module directory src to dst/kustomize/, and returns
// the files written, relative to dst, in walk order.
func CopyModuleSubset(src, dst string) ([]string, error) {
	if err := checkModuleDir(src); err != nil {
		return nil, err
	}
	var files []string
	for _, d := range upstreamDirs {
		from := filepath.Join(src, "kustomize", d)
		err := filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			if !e.Type().IsRegular() {
				return fmt.Errorf("%s is not a regular file", p)
			}
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out := filepath.Join(dst, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("copying kwok's kustomize/%s: %w", d, err)
		}
	}
	return files, nil
}
