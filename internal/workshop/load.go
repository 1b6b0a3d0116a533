package workshop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/progress"
)

// Docker is what Load needs from the engine; tests replace it.
type Docker interface {
	// Platform is the engine's os/arch, e.g. linux/amd64.
	Platform(ctx context.Context) (string, error)
	// Load is `docker load` of a docker save stream.
	Load(ctx context.Context, r io.Reader) error
	// ImageID is the image ID of ref, or an error when it is absent.
	ImageID(ctx context.Context, ref string) (string, error)
}

// Engine is the local Docker engine, through kind's exec seam.
type Engine struct{}

func (Engine) Platform(ctx context.Context) (string, error) {
	out, err := kindexec.Output(kindexec.CommandContext(ctx, "docker", "version", "-f", "{{.Server.Os}}/{{.Server.Arch}}"))
	if err != nil {
		return "", fmt.Errorf("asking the Docker engine for its platform (is Docker running?): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (Engine) Load(ctx context.Context, r io.Reader) error {
	var out bytes.Buffer
	if err := kindexec.CommandContext(ctx, "docker", "load").SetStdin(r).SetStdout(&out).SetStderr(&out).Run(); err != nil {
		return fmt.Errorf("docker load: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (Engine) ImageID(ctx context.Context, ref string) (string, error) {
	return dockerimage.ID(ctx, ref)
}

// Verify reads the whole archive once and checks it against its manifest:
// every file listed and present, sizes and sha256 digests equal, the gzip
// checksum intact. It changes nothing. A damaged bundle is a *DamagedError.
func Verify(ctx context.Context, log *progress.Logger, archive string) (*Manifest, error) {
	if log == nil {
		log = progress.Default()
	}
	m, _, err := walkArchive(ctx, log, "verifying", archive, nil, func(File, io.Reader) error { return nil })
	return m, err
}

// LoadOptions configure Load.
type LoadOptions struct {
	// Dest is the folder to unpack into; default ./termlab-workshop.
	Dest string
	Log  *progress.Logger
	// Docker is the engine (default Engine{}).
	Docker Docker
}

// LoadResult says what Load did.
type LoadResult struct {
	Manifest *Manifest
	Dest     string
	Verify   time.Duration // the read-only first pass
	Load     time.Duration // docker load and unpacking
}

// Load verifies the archive (Verify: a damaged bundle changes nothing),
// checks that the engine's platform is the bundle's, then reads it a second
// time: the images are streamed into `docker load` (their digests checked
// again on the way), the other files are unpacked into a staging folder next
// to Dest. Only when every image is in the engine with the ID the bundle
// recorded are the files moved into Dest. Files already in Dest that the
// bundle does not have (a participant's results/) are left alone.
func Load(ctx context.Context, archive string, opts LoadOptions) (*LoadResult, error) {
	log := opts.Log
	if log == nil {
		log = progress.Default()
	}
	docker := opts.Docker
	if docker == nil {
		docker = Engine{}
	}
	dest := opts.Dest
	if dest == "" {
		dest = TopDir
	}
	dest, err := filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(archive); err != nil {
		return nil, fmt.Errorf("the bundle: %w", err)
	}
	res := &LoadResult{Dest: dest}

	begin := time.Now()
	done := log.Step("verifying every digest of " + archive + " (read-only)")
	m, err := Verify(ctx, log, archive)
	done(err)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was loaded or unpacked", err)
	}
	res.Manifest, res.Verify = m, time.Since(begin)
	log.Infof("bundle of %s: %d files, %s; images %s", m.CreatedAt.Format(time.RFC3339), len(m.Files), MiB(m.TotalSize()), imageRefs(m))

	platform, err := docker.Platform(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was loaded or unpacked", err)
	}
	if platform != m.Platform {
		return nil, fmt.Errorf("the bundle is for %s, this Docker engine is %s: make a bundle on a %s machine; nothing was loaded or unpacked", m.Platform, platform, platform)
	}
	if host := runtime.GOOS + "/" + runtime.GOARCH; host != m.Platform {
		log.Warnf("the bundle's binary is for %s, this is %s: run workshop:load with a termlab built here", m.Platform, host)
	}
	if err := refuseRepository(dest); err != nil {
		return nil, err
	}

	begin = time.Now()
	staging := dest + ".loading"
	if err := os.RemoveAll(staging); err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	done = log.Step(fmt.Sprintf("loading %d images into Docker and unpacking into %s", len(m.Images), dest))
	var raw []byte
	_, _, err = walkArchive(ctx, log, "loading", archive, func(again *Manifest, b []byte) error {
		raw = b
		if !sameManifest(m, again) {
			return &DamagedError{Archive: archive, Reason: "it changed since it was verified"}
		}
		return nil
	}, func(f File, body io.Reader) error {
		if f.IsImage() {
			return docker.Load(ctx, body)
		}
		return writeStaged(staging, f, body)
	})
	if err == nil {
		err = checkImages(ctx, docker, m)
	}
	if err == nil {
		err = moveInto(staging, dest, m, raw)
	}
	done(err)
	if err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			return nil, fmt.Errorf("%w (during the second read; images read before this point may be loaded, %s was not changed)", err, dest)
		}
		return nil, err
	}
	res.Load = time.Since(begin)
	return res, nil
}

func imageRefs(m *Manifest) string {
	var refs []string
	for _, im := range m.Images {
		refs = append(refs, im.Ref)
	}
	return strings.Join(refs, ", ")
}

func sameManifest(a, b *Manifest) bool {
	x, err1 := a.Marshal()
	y, err2 := b.Marshal()
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// refuseRepository keeps a bundle from being unpacked over a termlab checkout.
func refuseRepository(dest string) error {
	if b, err := os.ReadFile(filepath.Join(dest, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/termlab/termlab")) {
		return fmt.Errorf("%s is a termlab repository: unpack the bundle into its own folder", dest)
	}
	return nil
}

func writeStaged(staging string, f File, body io.Reader) error {
	p := filepath.Join(staging, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, os.FileMode(f.Mode&0o777))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// checkImages makes sure every image is in the engine with the bundle's ID.
func checkImages(ctx context.Context, docker Docker, m *Manifest) error {
	var errs []error
	for _, im := range m.Images {
		id, err := docker.ImageID(ctx, im.Ref)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("after docker load, image %s is missing: %w", im.Ref, err))
		case id != im.ID:
			errs = append(errs, fmt.Errorf("after docker load, image %s is %s, the bundle recorded %s", im.Ref, id, im.ID))
		}
	}
	return errors.Join(errs...)
}

// moveInto moves the staged files to dest, replacing files of an earlier load.
func moveInto(staging, dest string, m *Manifest, manifestJSON []byte) error {
	for _, f := range m.Files {
		if f.IsImage() {
			continue
		}
		from := filepath.Join(staging, filepath.FromSlash(f.Path))
		to := filepath.Join(dest, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("unpacking %s: %w", f.Path, err)
		}
	}
	return os.WriteFile(filepath.Join(dest, ManifestFile), manifestJSON, 0o644)
}
