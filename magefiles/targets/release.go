//go:build mage

package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/release"
)

// Release builds the krew release of kubectl termlab: cmd/termlab for linux, darwin and windows on amd64 and arm64 (on windows only diagnose and version run), each packed with LICENSE and plugins/README.md into dist/termlab_<os>_<arch>.tar.gz with its .sha256, and dist/termlab.yaml, the krew manifest filled from them and checked by krew's validate-krew-manifest (krew built once from its module into the cache); -version=v0.1.0 (default: git describe --tags --always --dirty, made semver), -baseurl=<where the archives are downloaded from; %s is the version> (default the GitHub release).
func Release(ctx context.Context, version, baseurl *string) error {
	root, err := project.Root()
	if err != nil {
		return err
	}
	o := release.Options{Root: root, Log: progress.Default()}
	if version != nil {
		o.Version = *version
	}
	if baseurl != nil {
		o.BaseURL = *baseurl
	}
	res, err := release.Run(ctx, o)
	if err != nil {
		return err
	}
	if _, err := release.ValidateManifest(ctx, o.Log, filepath.Join(project.CacheDir(), "bin"), res.Manifest); err != nil {
		return err
	}
	fmt.Printf("release %s (commit %s), made in %s:\n", res.Version, res.Stamp.Commit, res.Took.Round(100e6))
	for _, a := range res.Artifacts {
		fmt.Printf("  %s  %s  %.1f MiB\n", a.SHA256, a.Path, float64(a.Size)/(1<<20))
	}
	fmt.Printf("krew manifest: %s (try: kubectl krew install --manifest=%s --archive=<archive>)\n", res.Manifest, res.Manifest)
	return nil
}
