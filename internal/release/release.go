// Package release builds the archives krew installs `kubectl termlab` from
// (go tool mage release): the plugin binary (cmd/termlab, named
// kubectl-termlab) for each platform, packed with LICENSE and the plugin
// README into dist/termlab_<os>_<arch>.tar.gz, its SHA-256 beside it, and
// dist/termlab.yaml, plugins/termlab.yaml filled with the archives' URIs and
// checksums.
//
// The binaries are static (CGO_ENABLED=0), built with -trimpath and
// -buildvcs=false and stamped with the version, commit and commit date
// (internal/version), and the archives hold no build time: building one
// commit again gives the same bytes.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/termlab/termlab/internal/gobuild"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/version"
)

// Name is the plugin's name: krew's, the archives' prefix and the manifest's file name.
const Name = "termlab"

// Binary is the plugin binary's name in an archive (kubectl finds a plugin by
// it), without ".exe".
const Binary = "kubectl-termlab"

// MainPackage is the command built as the plugin.
const MainPackage = "./cmd/termlab"

// Template is the krew manifest Manifest fills, relative to the checkout.
const Template = "plugins/termlab.yaml"

// Files packed beside the binary at the archive's root: name in the archive
// -> path in the checkout.
var Files = []File{{Name: "LICENSE", Path: "LICENSE"}, {Name: "README.md", Path: "plugins/README.md"}}

// File is one file an archive holds beside the binary.
type File struct{ Name, Path string }

// DefaultBaseURL is where the archives are downloaded from: the GitHub
// release of the version (plugins/termlab.yaml's homepage); %s is the version.
const DefaultBaseURL = "https://github.com/termlab/termlab/releases/download/%s"

// Platform is one GOOS/GOARCH.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Exe is the binary's name for the platform.
func (p Platform) Exe() string {
	if p.OS == "windows" {
		return Binary + ".exe"
	}
	return Binary
}

// Archive is the archive's file name.
func (p Platform) Archive() string { return fmt.Sprintf("%s_%s_%s.tar.gz", Name, p.OS, p.Arch) }

// Platforms are the platforms a release builds, in the manifest's order.
// On windows the binary is kubectl-termlab.exe, in a .tar.gz like the
// others: krew v0.4.3 tells .tar.gz from .zip by the content, on every OS
// (internal/download's detectMIMEType). Only diagnose and version run
// there; the labs and cluster targets say they need Linux or macOS with
// Docker (internal/cli).
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Options say what to release.
type Options struct {
	Root string // the checkout
	Out  string // default <Root>/dist
	// Version is the release's version (semver with a leading v, as krew
	// wants); default: git describe --tags --always --dirty, made semver
	// by SemverOf.
	Version string
	// BaseURL is the URL the archives sit under; a %s in it is the version.
	// Default DefaultBaseURL.
	BaseURL   string
	Platforms []Platform // default Platforms
	Log       *progress.Logger
}

// Artifact is one built archive.
type Artifact struct {
	Platform
	Path   string // dist/<archive>
	SHA256 string
	Size   int64
	Took   time.Duration
}

// Result is what a release wrote.
type Result struct {
	Version   string
	Stamp     version.Info
	Artifacts []Artifact
	Manifest  string // dist/termlab.yaml
	Took      time.Duration
}

// Run builds every platform's archive, writes each one's .sha256 and the
// filled manifest.
func Run(ctx context.Context, o Options) (Result, error) {
	begin := time.Now()
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, "dist")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Platforms == nil {
		o.Platforms = Platforms
	}
	if o.Log == nil {
		o.Log = progress.Default()
	}
	stamp, err := gitStamp(ctx, o.Root)
	if err != nil {
		return Result{}, err
	}
	if o.Version == "" {
		described, err := git(ctx, o.Root, "describe", "--tags", "--always", "--dirty")
		if err != nil {
			return Result{}, err
		}
		o.Version = SemverOf(described)
	} else if err := CheckVersion(o.Version); err != nil {
		return Result{}, err
	}
	stamp.Version = o.Version
	template, err := os.ReadFile(filepath.Join(o.Root, Template))
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Result{}, err
	}
	mtime, err := time.Parse(time.RFC3339, stamp.Date)
	if err != nil {
		return Result{}, fmt.Errorf("commit date %q: %w", stamp.Date, err)
	}
	res := Result{Version: o.Version, Stamp: stamp}
	o.Log.Infof("release %s (commit %s) of %s for %d platforms into %s", o.Version, stamp.Commit, MainPackage, len(o.Platforms), o.Out)
	for i, p := range o.Platforms {
		a, err := buildOne(ctx, o, p, stamp, mtime)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p, err)
		}
		o.Log.Infof("[%d/%d] %-13s %s  %.1f MiB  sha256 %s  (%s)", i+1, len(o.Platforms), p, a.Platform.Archive(), float64(a.Size)/(1<<20), a.SHA256[:12], a.Took.Round(100*time.Millisecond))
		res.Artifacts = append(res.Artifacts, a)
	}
	manifest, err := Manifest(template, o.Version, BaseURL(o.BaseURL, o.Version), res.Artifacts)
	if err != nil {
		return res, err
	}
	res.Manifest = filepath.Join(o.Out, Name+".yaml")
	if err := os.WriteFile(res.Manifest, manifest, 0o644); err != nil {
		return res, err
	}
	res.Took = time.Since(begin)
	return res, nil
}

// BaseURL puts the version into base where it says %s.
func BaseURL(base, v string) string {
	if strings.Contains(base, "%s") {
		return fmt.Sprintf(base, v)
	}
	return base
}

func buildOne(ctx context.Context, o Options, p Platform, stamp version.Info, mtime time.Time) (Artifact, error) {
	begin := time.Now()
	stop := o.Log.Ticker("building "+p.String(), 15*time.Second)
	bin, err := build(ctx, o.Root, p, stamp)
	stop()
	if err != nil {
		return Artifact{}, err
	}
	files := []Entry{{Name: p.Exe(), Mode: 0o755, Data: bin}}
	for _, f := range Files {
		b, err := os.ReadFile(filepath.Join(o.Root, f.Path))
		if err != nil {
			return Artifact{}, err
		}
		files = append(files, Entry{Name: f.Name, Mode: 0o644, Data: b})
	}
	var buf bytes.Buffer
	if err := Pack(&buf, mtime, files); err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	a := Artifact{Platform: p, Path: filepath.Join(o.Out, p.Archive()), SHA256: hex.EncodeToString(sum[:]), Size: int64(buf.Len())}
	if err := os.WriteFile(a.Path, buf.Bytes(), 0o644); err != nil {
		return a, err
	}
	// The format sha256sum -c reads.
	if err := os.WriteFile(a.Path+".sha256", []byte(a.SHA256+"  "+p.Archive()+"\n"), 0o644); err != nil {
		return a, err
	}
	a.Took = time.Since(begin)
	return a, nil
}

// LDFlags are the release build's linker flags: no symbol table or DWARF
// (-s -w), and the stamps `termlab version` prints.
func LDFlags(stamp version.Info) string {
	return gobuild.LDFlags([]string{"-s", "-w"},
		gobuild.Stamp{Pkg: version.Package, Var: version.VersionVar, Value: stamp.Version},
		gobuild.Stamp{Pkg: version.Package, Var: version.CommitVar, Value: stamp.Commit},
		gobuild.Stamp{Pkg: version.Package, Var: version.DateVar, Value: stamp.Date})
}

// build compiles the plugin for p and returns the binary.
func build(ctx context.Context, root string, p Platform, stamp version.Info) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "termlab-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, p.Exe())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", LDFlags(stamp), "-o", out, MainPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, b)
	}
	return os.ReadFile(out)
}

// Entry is one file of an archive.
type Entry struct {
	Name string
	Mode int64
	Data []byte
}

// Pack writes a .tar.gz of the entries at its root, in order, owned by root,
// each dated mtime (the commit's date): the same entries give the same bytes.
func Pack(w io.Writer, mtime time.Time, entries []Entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if e.Name == "" || strings.Contains(e.Name, "/") {
			return fmt.Errorf("archive entry %q: krew wants the files at the root", e.Name)
		}
		h := &tar.Header{Name: e.Name, Mode: e.Mode, Size: int64(len(e.Data)), ModTime: mtime.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

var (
	// hexRun is git describe's name of a commit no tag is before.
	hexRun = regexp.MustCompile(`^[0-9a-f]+(-dirty)?$`)
	// notSemver is what a pre-release cannot hold.
	notSemver = regexp.MustCompile(`[^0-9A-Za-z.-]+`)
)

// SemverOf makes git describe's output a version krew accepts: a tag that
// is one stays as it is ("v0.1.0", "v0.1.0-3-gabc1234-dirty"); a commit
// without a tag becomes a pre-release of v0.0.0 ("abc1234" ->
// "v0.0.0-gabc1234", as git describe names commits).
func SemverOf(described string) string {
	described = strings.TrimSpace(described)
	if CheckVersion(described) == nil {
		return described
	}
	if hexRun.MatchString(described) {
		return "v0.0.0-g" + described
	}
	return "v0.0.0-" + notSemver.ReplaceAllString(described, "-")
}

// CheckVersion refuses a version krew would: it must be semver with a leading v.
func CheckVersion(v string) error {
	if !strings.HasPrefix(v, "v") {
		return fmt.Errorf("version %q: krew wants semver with a leading v (v0.1.0)", v)
	}
	if _, err := utilversion.ParseSemantic(v); err != nil {
		return fmt.Errorf("version %q: krew wants semver with a leading v (v0.1.0): %w", v, err)
	}
	return nil
}

// gitStamp is the commit built (with -dirty when the checkout has changes)
// and its date, in UTC.
func gitStamp(ctx context.Context, root string) (version.Info, error) {
	commit, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return version.Info{}, err
	}
	status, err := git(ctx, root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return version.Info{}, err
	}
	when, err := git(ctx, root, "log", "-1", "--format=%cI")
	if err != nil {
		return version.Info{}, err
	}
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return version.Info{}, fmt.Errorf("commit date %q: %w", when, err)
	}
	return version.Info{Commit: version.DirtyCommit(commit, status != ""), Date: t.UTC().Format(time.RFC3339)}, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
