package workshop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/dockerhost"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/ownbuild"

	kindversion "sigs.k8s.io/kind/pkg/cmd/kind/version"

	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/stack"
)

// BundleOptions configure Bundle.
type BundleOptions struct {
	// Root is the termlab repository.
	Root string
	// Out is the archive to write; default <Root>/bin/termlab-workshop.tar.gz.
	Out string
	// Images is the image source (TERMLAB_IMAGES); the images are resolved,
	// and built if needed, exactly as cluster:up does.
	Images images.Source
	Log    *progress.Logger
	// Labs are the session's labs (labs.All), listed in WORKSHOP.md.
	Labs []lab.Definition
}

// BundleResult says what Bundle made.
type BundleResult struct {
	Archive  string
	Size     int64
	SHA256   string
	Manifest *Manifest
	Took     time.Duration
	// Phases are the named parts of Took, in order.
	Phases []Phase
}

// Phase is one timed part of making the bundle.
type Phase struct {
	Name string
	Took time.Duration
}

// bundledTrees are the repository folders copied whole (regular files only).
var bundledTrees = []string{"manifests", "results/reference"}

// bundledFiles are single repository files; labs/*/README.md and docs/*.md
// are added too.
var bundledFiles = []string{"README.md", "results/README.md"}

// Bundle makes the workshop archive: it resolves the images as cluster:up
// does, saves them, builds cmd/termlab (the binary the README shows, with
// the workshop commands) statically, copies the pinned inputs, the labs' READMEs, the reference
// results and kwok's kustomize sources, renders kwok's install for reading,
// hashes everything into manifest.json and writes one .tar.gz (and a .sha256
// beside it). A staging folder next to Out is removed at the end.
func Bundle(ctx context.Context, opts BundleOptions) (*BundleResult, error) {
	log := opts.Log
	if log == nil {
		log = progress.Default()
	}
	if opts.Root == "" {
		return nil, fmt.Errorf("workshop: BundleOptions.Root is required")
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join(opts.Root, "bin", "termlab-workshop.tar.gz")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	res := &BundleResult{Archive: out}
	begin := time.Now()
	phase := func(name string, since time.Time) { res.Phases = append(res.Phases, Phase{name, time.Since(since)}) }

	staging, err := os.MkdirTemp(filepath.Dir(out), ".workshop-staging-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)

	// 1. Images, as cluster:up resolves them.
	t := time.Now()
	set, dockerVersion, err := stack.Images(ctx, log, opts.Root, opts.Images)
	if err != nil {
		return nil, fmt.Errorf("resolving the images: %w", err)
	}
	platform, err := Engine{}.Platform(ctx)
	if err != nil {
		return nil, err
	}
	phase("resolving images", t)

	m := &Manifest{
		Format:    Format,
		CreatedAt: time.Now().UTC().Truncate(time.Second),
		Platform:  platform,
	}
	add := func(rel string) error {
		f, err := hashFile(staging, rel)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, f)
		return nil
	}

	// 2. docker save of each image, hashed as it is written.
	t = time.Now()
	bs := images.BundleSet{Format: images.BundleSetFormat, Set: set, IDs: map[string]string{}}
	for _, im := range []struct{ role, ref, from string }{
		{"node", set.Node, set.NodeFrom},
		{"kwok", set.Kwok, set.KwokFrom},
		{"workload", set.Workload, images.FromBuilt},
	} {
		id, err := dockerimage.ID(ctx, im.ref)
		if err != nil {
			return nil, err
		}
		rel := ImagesDir + "/" + im.role + ".tar"
		done := log.Step(fmt.Sprintf("docker save %s (%s)", im.ref, im.role))
		err = saveImage(ctx, filepath.Join(staging, rel), im.ref)
		done(err)
		if err != nil {
			return nil, err
		}
		if err := add(rel); err != nil {
			return nil, err
		}
		// The ID again: an image retagged while it was saved would not be the one saved.
		if again, err := dockerimage.ID(ctx, im.ref); err != nil || again != id {
			return nil, fmt.Errorf("image %s changed while it was saved (%s, now %s %v): run workshop:bundle again", im.ref, id, again, err)
		}
		bs.IDs[im.ref] = id
		m.Images = append(m.Images, Image{Role: im.role, Ref: im.ref, ID: id, From: im.from, File: rel})
	}
	phase("docker save", t)

	// 3. The standalone binary: cmd/termlab, the same termlab the README
	// shows, so a participant types the commands and flags it documents.
	t = time.Now()
	done := log.Step("building cmd/termlab (go build, CGO_ENABLED=0)")
	err = buildTermlab(ctx, opts.Root, filepath.Join(staging, BinaryFile), platform)
	done(err)
	if err != nil {
		return nil, err
	}
	if err := add(BinaryFile); err != nil {
		return nil, err
	}
	// The runtime wrapper, prebuilt: a participant on a host whose capability
	// bounding set is incomplete has no Go to build it with.
	if err := buildWrapper(ctx, opts.Root, filepath.Join(staging, dockerhost.PrebuiltWrapperFile), platform); err != nil {
		return nil, err
	}
	if err := add(dockerhost.PrebuiltWrapperFile); err != nil {
		return nil, err
	}
	phase("compiling the binary", t)

	// 4. Inputs, READMEs, reference results: scanned for credentials first,
	// since the bundle goes to every participant.
	t = time.Now()
	rels, err := repositoryFiles(opts.Root)
	if err != nil {
		return nil, err
	}
	for _, tree := range bundledTrees {
		if leaks, err := credscan.Dir(filepath.Join(opts.Root, tree)); err != nil || len(leaks) > 0 {
			return nil, fmt.Errorf("not bundling %s: credentials check: %v %v", tree, leaks, err)
		}
	}
	for _, rel := range rels {
		if err := copyFile(filepath.Join(opts.Root, filepath.FromSlash(rel)), filepath.Join(staging, filepath.FromSlash(rel))); err != nil {
			return nil, err
		}
		if err := add(rel); err != nil {
			return nil, err
		}
	}

	// 5. kwok: the module's kustomize sources, and the rendered install to read.
	mod, err := kwok.LocateModule()
	if err != nil {
		return nil, err
	}
	kfiles, err := kwok.CopyModuleSubset(mod.Dir, filepath.Join(staging, filepath.FromSlash(KwokModuleDir)))
	if err != nil {
		return nil, err
	}
	for _, rel := range kfiles {
		if err := add(KwokModuleDir + "/" + rel); err != nil {
			return nil, err
		}
	}
	rendered, err := renderKwok(set.Kwok, mod.Dir)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(rendered) {
		rel := KwokRenderedDir + "/" + name
		if err := writeFile(staging, rel, rendered[name], 0o644); err != nil {
			return nil, err
		}
		if err := add(rel); err != nil {
			return nil, err
		}
	}

	// 6. images.json (what images.Bundle reads), versions and the guide.
	setJSON, err := json.MarshalIndent(bs, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(staging, images.BundleSetFile, append(setJSON, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := add(images.BundleSetFile); err != nil {
		return nil, err
	}
	m.Versions = versions(ctx, opts.Root, set, dockerVersion, mod.Version)
	if err := writeFile(staging, GuideFile, guideText(m, filepath.Base(out), opts.Root, opts.Labs), 0o644); err != nil {
		return nil, err
	}
	if err := add(GuideFile); err != nil {
		return nil, err
	}
	// Small files first, images last: a participant's `tar -xzf … termlab-workshop/termlab`
	// and a glance at WORKSHOP.md need not wait for the node image.
	sort.SliceStable(m.Files, func(i, j int) bool { return !m.Files[i].IsImage() && m.Files[j].IsImage() })
	phase("copying inputs and kwok sources", t)

	// 7. The archive.
	t = time.Now()
	raw, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	done = log.Step(fmt.Sprintf("writing %s (%d files, %s before compression)", out, len(m.Files)+1, MiB(m.TotalSize())))
	compressor, err := writeArchive(ctx, log, out, m, raw, staging)
	done(err)
	if err != nil {
		return nil, err
	}
	phase("writing the archive ("+compressor+")", t)

	sum, size, err := fileDigest(out)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(out+".sha256", []byte(sum+"  "+filepath.Base(out)+"\n"), 0o644); err != nil {
		return nil, err
	}
	res.Size, res.SHA256, res.Manifest, res.Took = size, sum, m, time.Since(begin)
	return res, nil
}

func saveImage(ctx context.Context, path, ref string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := dockerimage.Save(ctx, f, ref); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildWrapper builds cmd/termlab-runc statically for the engine's platform.
func buildWrapper(ctx context.Context, root, out, platform string) error {
	goos, goarch, _ := strings.Cut(platform, "/")
	if err := ownbuild.Build(ctx, root, "./cmd/termlab-runc", out, ownbuild.Target{GOOS: goos, GOARCH: goarch}); err != nil {
		return fmt.Errorf("building the runtime wrapper: %w", err)
	}
	return nil
}

// buildTermlab builds cmd/termlab into one static binary for the
// engine's platform.
func buildTermlab(ctx context.Context, root, out, platform string) error {
	goos, goarch, _ := strings.Cut(platform, "/")
	if err := ownbuild.Build(ctx, root, "./cmd/termlab", out, ownbuild.Target{GOOS: goos, GOARCH: goarch}); err != nil {
		return fmt.Errorf("building termlab for the bundle: %w", err)
	}
	// The binary must run outside the repository (it finds its folder itself).
	if runtime.GOOS+"/"+runtime.GOARCH == platform {
		check := exec.CommandContext(ctx, out, "--help")
		check.Dir = os.TempDir()
		check.Env = withoutEnv(os.Environ(), "TERMLAB_ROOT")
		if b, err := check.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("workshop:load")) {
			return fmt.Errorf("the bundle's termlab does not list workshop:load outside the repository: %v\n%s", err, b)
		}
	}
	return nil
}

func withoutEnv(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// repositoryFiles lists the repository files a session needs, relative to root.
func repositoryFiles(root string) ([]string, error) {
	var out []string
	for _, tree := range bundledTrees {
		dir := filepath.Join(root, filepath.FromSlash(tree))
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if tree != "manifests" && os.IsNotExist(err) {
					return filepath.SkipDir
				}
				return err
			}
			if !d.Type().IsRegular() {
				return nil // folders, and symlinks such as manifests/kwok/upstream
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("collecting %s: %w", tree, err)
		}
	}
	readmes, err := filepath.Glob(filepath.Join(root, "labs", "*", "README.md"))
	if err != nil {
		return nil, err
	}
	// The README links to docs/ for everything past its first pages.
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	readmes = append(readmes, docs...)
	for _, p := range readmes {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	for _, rel := range bundledFiles {
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			out = append(out, rel)
		}
	}
	return out, nil
}

// renderKwok renders the controller install (with the bundle's kwok image)
// and the stages, as Install applies them.
func renderKwok(image, moduleDir string) (map[string][]byte, error) {
	ctrl, err := kwok.Render(kwok.Options{Image: image, ModuleDir: moduleDir})
	if err != nil {
		return nil, err
	}
	stages, err := kwok.RenderStages(kwok.Options{ModuleDir: moduleDir})
	if err != nil {
		return nil, err
	}
	c, err := kwok.YAML(ctrl)
	if err != nil {
		return nil, err
	}
	s, err := kwok.YAML(stages)
	if err != nil {
		return nil, err
	}
	head := "# Rendered by workshop:bundle from kwok " + kwok.ModuleVersion + " and manifests/kwok, for reading.\n# termlab renders it again from kwok/module at run time (same inputs, same result).\n"
	return map[string][]byte{
		"controller.yaml": append([]byte(head), c...),
		"stages.yaml":     append([]byte(head), s...),
	}, nil
}

func versions(ctx context.Context, root string, set images.Set, dockerVersion, kwokModule string) map[string]string {
	v := map[string]string{
		"kind":            kindversion.Version(),
		"kwok":            kwokModule,
		"node_image":      set.Node,
		"node_image_from": set.NodeFrom,
		"kwok_image":      set.Kwok,
		"workload_image":  set.Workload,
		"kubernetes":      tagOf(set.Node),
		"docker":          dockerVersion,
		"go":              runtime.Version(),
	}
	if set.ImageRepository != "" {
		v["image_repository"] = set.ImageRepository
	}
	for key, digest := range map[string]string{"node_image_digest": set.NodeDigest, "kwok_image_digest": set.KwokDigest} {
		if digest != "" {
			v[key] = digest
		}
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		c := strings.TrimSpace(string(out))
		if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
			c += "-dirty"
		}
		v["termlab"] = c
	}
	return v
}

// tagOf is the tag of an image reference (kindest/node:v1.37.0@sha256:… → v1.37.0).
func tagOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return ""
}

func hashFile(dir, rel string) (File, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	st, err := os.Stat(p)
	if err != nil {
		return File{}, err
	}
	sum, size, err := fileDigest(p)
	if err != nil {
		return File{}, err
	}
	mode := uint32(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	return File{Path: rel, Size: size, SHA256: sum, Mode: mode}, nil
}

func fileDigest(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	st, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, st.Mode().Perm())
}

func writeFile(dir, rel string, b []byte, mode os.FileMode) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, mode)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
