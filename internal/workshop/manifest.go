// Package workshop prepares and replays termlab workshop sessions.
//
// A trainer makes one archive with Bundle: the node, kwok and workload
// images (docker save), the pinned inputs (manifests/), kwok's kustomize
// sources (so no Go module cache is needed), the labs' READMEs, the
// reference results, a static build of cmd/termlab (the termlab binary) and
// manifest.json with versions and the sha256 of every file. A participant
// runs Load on it: every digest is verified before anything changes, then the
// images are loaded into Docker and the rest is unpacked into a folder that
// looks like the parts of the repository termlab needs. From that folder the
// binary runs cluster:up, the labs and the guided session (Session) with no
// Go, no module proxy, no Debian mirror and no registry.
package workshop

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// Layout of an archive and of the folder it unpacks into.
const (
	// Format versions manifest.json.
	Format = "termlab-workshop-bundle/1"
	// TopDir is the archive's single top-level folder.
	TopDir = "termlab-workshop"
	// ManifestFile is the archive's first entry, TopDir/manifest.json.
	ManifestFile = "manifest.json"
	// BinaryFile is cmd/termlab, built statically for the bundle's platform.
	BinaryFile = "termlab"
	// ImagesDir holds the `docker save` archives in the bundle; they are
	// streamed into `docker load` and never written to the unpacked folder.
	ImagesDir = "images"
	// KwokModuleDir holds the parts of the kwok module that rendering needs.
	KwokModuleDir = "kwok/module"
	// KwokRenderedDir holds the rendered kwok install and stages, for reading.
	KwokRenderedDir = "kwok/rendered"
	// GuideFile is the participant's how-to at the top of the folder.
	GuideFile = "WORKSHOP.md"
)

// Manifest is manifest.json: what the bundle holds and how to check it.
type Manifest struct {
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	// Platform is the OS/architecture of the binary and the images (linux/amd64).
	Platform string `json:"platform"`
	// Versions: termlab commit, kind, Kubernetes, kwok, Go and Docker of the bundling machine.
	Versions map[string]string `json:"versions"`
	Images   []Image           `json:"images"`
	// Files lists every entry of the archive but manifest.json, in archive order.
	Files []File `json:"files"`
}

// Image is one `docker save` archive in the bundle.
type Image struct {
	// Role is node, kwok or workload.
	Role string `json:"role"`
	Ref  string `json:"ref"`
	// ID is the image ID (`docker image inspect -f {{.Id}}`) before saving;
	// after `docker load` the engine must report the same.
	ID string `json:"id"`
	// From is where the trainer's termlab got it: official or built.
	From string `json:"from"`
	// File is the docker save archive, relative to TopDir.
	File string `json:"file"`
}

// File is one file of the bundle, relative to TopDir.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Mode is the permission bits (0644 or 0755).
	Mode uint32 `json:"mode"`
}

// IsImage reports whether the file is a docker save archive (loaded, not unpacked).
func (f File) IsImage() bool {
	return strings.HasPrefix(f.Path, ImagesDir+"/") && strings.HasSuffix(f.Path, ".tar")
}

// TotalSize is the sum of the files' sizes.
func (m *Manifest) TotalSize() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// File returns the entry for path.
func (m *Manifest) File(p string) (File, bool) {
	for _, f := range m.Files {
		if f.Path == p {
			return f, true
		}
	}
	return File{}, false
}

// ParseManifest reads and checks manifest.json.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("manifest.json: format %q, this termlab reads %q", m.Format, Format)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if err := checkRelPath(f.Path); err != nil {
			return nil, fmt.Errorf("manifest.json: %w", err)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("manifest.json: %s listed twice", f.Path)
		}
		seen[f.Path] = true
		if len(f.SHA256) != 64 || f.Size < 0 {
			return nil, fmt.Errorf("manifest.json: %s has no valid sha256 or size", f.Path)
		}
	}
	for _, im := range m.Images {
		f, ok := m.File(im.File)
		if !ok || !f.IsImage() {
			return nil, fmt.Errorf("manifest.json: image %s: file %q is not listed as an image archive", im.Ref, im.File)
		}
		if im.Ref == "" || !strings.HasPrefix(im.ID, "sha256:") {
			return nil, fmt.Errorf("manifest.json: image %q has no reference or ID", im.File)
		}
	}
	if _, ok := m.File(BinaryFile); !ok {
		return nil, fmt.Errorf("manifest.json: no %s binary listed", BinaryFile)
	}
	return &m, nil
}

// checkRelPath refuses paths that would land outside the folder.
func checkRelPath(p string) error {
	if p == "" || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || p == ManifestFile {
		return fmt.Errorf("bad file path %q", p)
	}
	return nil
}

// Marshal renders manifest.json.
func (m *Manifest) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
