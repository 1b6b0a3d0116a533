package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/progress"
)

// Bundle takes every image from a loaded workshop bundle (internal/workshop):
// the images must be in the engine with exactly the IDs the bundle recorded.
// Nothing is pulled or built, so no registry, Go module proxy or Debian
// mirror is needed. Auto picks it by itself when the project root is an
// unpacked bundle (it has BundleSetFile).
const Bundle Source = "bundle"

// BundleSetFile, relative to a bundle's root, describes the bundle's images.
const BundleSetFile = "images/images.json"

// BundleEnv points at an unpacked bundle's root when it is not the project root.
const BundleEnv = "TERMLAB_BUNDLE"

// BundleSetFormat versions BundleSetFile.
const BundleSetFormat = "termlab-bundle-images/1"

// BundleSet is BundleSetFile: the resolved Set the bundle was made with and
// the Docker image ID of every reference in it.
type BundleSet struct {
	Format string `json:"format"`
	Set    Set    `json:"set"`
	// IDs maps each image reference to its image ID (sha256:…).
	IDs map[string]string `json:"ids"`
}

// Refs lists the set's image references: node, kwok, workload.
func (s Set) Refs() []string { return []string{s.Node, s.Kwok, s.Workload} }

// ReadBundleSet reads BundleSetFile under root.
func ReadBundleSet(root string) (*BundleSet, error) {
	p := filepath.Join(root, BundleSetFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var bs BundleSet
	if err := json.Unmarshal(b, &bs); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", p, err)
	}
	if bs.Format != BundleSetFormat {
		return nil, fmt.Errorf("%s: format %q, this termlab reads %q", p, bs.Format, BundleSetFormat)
	}
	for _, ref := range bs.Set.Refs() {
		if ref == "" || bs.IDs[ref] == "" {
			return nil, fmt.Errorf("%s: incomplete (image %q has no ID)", p, ref)
		}
	}
	return &bs, nil
}

// BundleRoot is the unpacked bundle to take images from: TERMLAB_BUNDLE, or
// the project root when it holds BundleSetFile.
func BundleRoot(root string) (string, bool) {
	if d := os.Getenv(BundleEnv); d != "" {
		return d, true
	}
	if _, err := os.Stat(filepath.Join(root, BundleSetFile)); err == nil {
		return root, true
	}
	return "", false
}

// fromBundle resolves the set from a loaded bundle: for Source Bundle, and
// for Auto when there is a bundle. ok is false when the bundle path does not
// apply, so Ensure goes on as without one. It checks the image IDs only: a
// `docker image inspect` per image, milliseconds.
func fromBundle(ctx context.Context, log *progress.Logger, root string, src Source) (set Set, ok bool, err error) {
	if src != Bundle && src != Auto {
		return Set{}, false, nil
	}
	dir, found := BundleRoot(root)
	if !found {
		if src == Bundle {
			return Set{}, true, fmt.Errorf("TERMLAB_IMAGES=bundle, but %s has no %s and %s is not set: load a bundle with `termlab workshop:load <archive>` and run termlab from its folder", root, BundleSetFile, BundleEnv)
		}
		return Set{}, false, nil
	}
	bs, err := ReadBundleSet(dir)
	if err != nil {
		return Set{}, true, fmt.Errorf("reading the workshop bundle's images: %w", err)
	}
	var missing []error
	for _, ref := range bs.Set.Refs() {
		id, err := dockerimage.ID(ctx, ref)
		switch {
		case err != nil:
			missing = append(missing, fmt.Errorf("image %s of the bundle is not in the Docker engine", ref))
		case id != bs.IDs[ref]:
			missing = append(missing, fmt.Errorf("image %s in the Docker engine is %s, the bundle's is %s", ref, id, bs.IDs[ref]))
		}
	}
	if len(missing) > 0 {
		return Set{}, true, fmt.Errorf("%w; load the bundle again: termlab workshop:load <archive> (bundle folder %s)", errors.Join(missing...), dir)
	}
	log.Infof("images from the workshop bundle in %s (no pull, no build): node %s, kwok %s, workload %s", dir, bs.Set.Node, bs.Set.Kwok, bs.Set.Workload)
	return bs.Set, true, nil
}
