package release

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// KrewModule and KrewVersion are the krew the release is checked and
// installed with. Its packages are internal to its module, whose go.mod
// would pull client-go v11 and apimachinery v0.21 into this one, so its
// commands are built from the Go module proxy apart from go.mod
// (go install <pkg>@<version>).
const (
	KrewModule  = "sigs.k8s.io/krew"
	KrewVersion = "v0.4.3"
)

// krewCommands are the commands of KrewModule that Krew builds: the plugin
// manager and its manifest check (structure, semver, sha256, platform
// selectors krew knows and that do not overlap).
var krewCommands = []string{"cmd/krew", "cmd/validate-krew-manifest"}

// Krew is krew built from its module: Dir holds kubectl-krew (krew itself,
// named as kubectl finds it as a plugin) and validate-krew-manifest.
type Krew struct{ Dir string }

// KrewDir is where BuildKrew puts krew's commands under binDir: a new
// KrewVersion is a new directory, built anew.
func KrewDir(binDir string) string { return filepath.Join(binDir, "krew-"+KrewVersion) }

// Plugin is `kubectl krew`: put Dir on PATH and kubectl runs it.
func (k Krew) Plugin() string { return filepath.Join(k.Dir, "kubectl-krew"+hostExe()) }

// Validator is krew's validate-krew-manifest.
func (k Krew) Validator() string {
	return filepath.Join(k.Dir, "validate-krew-manifest"+hostExe())
}

// BuildKrew builds krew's commands into KrewDir(binDir) at their first use
// (a minute or more on a cold build cache: krew's dependencies; nothing
// after), saying so on log while it runs. The directory appears whole or
// not at all, so a build cut short is built again next time.
func BuildKrew(ctx context.Context, log *progress.Logger, binDir string) (Krew, error) {
	k := Krew{Dir: KrewDir(binDir)}
	if _, err := os.Stat(k.Validator()); err == nil {
		if _, err := os.Stat(k.Plugin()); err == nil {
			return k, nil
		}
	}
	var pkgs []string
	for _, c := range krewCommands {
		pkgs = append(pkgs, KrewModule+"/"+c+"@"+KrewVersion)
	}
	done := log.Step(fmt.Sprintf("building krew %s (%s) from the Go module proxy into %s", KrewVersion, strings.Join(krewCommands, ", "), k.Dir))
	stop := log.Ticker("building krew "+KrewVersion, 15*time.Second)
	err := buildKrewInto(ctx, binDir, k.Dir, pkgs)
	stop()
	done(err)
	return k, err
}

func buildKrewInto(ctx context.Context, binDir, dir string, pkgs []string) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(binDir, ".krew-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	install := exec.CommandContext(ctx, "go", append([]string{"install"}, pkgs...)...)
	// Outside any module (GOFLAGS= drops a -mod a caller set), static.
	install.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=", "CGO_ENABLED=0")
	install.Dir = tmp
	if b, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("building krew: go install %s (from the Go module proxy): %w\n%s", strings.Join(pkgs, " "), err, strings.TrimSpace(string(b)))
	}
	if err := os.Rename(filepath.Join(tmp, "krew"+hostExe()), filepath.Join(tmp, "kubectl-krew"+hostExe())); err != nil {
		return fmt.Errorf("building krew: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another build finished first: its directory is as good as this one.
		if _, serr := os.Stat(filepath.Join(dir, "kubectl-krew"+hostExe())); serr == nil {
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("building krew: %s is there but holds no kubectl-krew: remove it and run again", dir)
		}
		return fmt.Errorf("building krew: %w", err)
	}
	return nil
}

func hostExe() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// ValidateManifest runs krew's validate-krew-manifest on a manifest,
// building krew into binDir at its first use (BuildKrew). It returns the
// validator's output; an error says whether building or the check failed.
func ValidateManifest(ctx context.Context, log *progress.Logger, binDir, manifest string) (string, error) {
	k, err := BuildKrew(ctx, log, binDir)
	if err != nil {
		return "", err
	}
	b, err := exec.CommandContext(ctx, k.Validator(), "-manifest", manifest, "-skip-install").CombinedOutput()
	if err != nil {
		return string(b), fmt.Errorf("krew's validate-krew-manifest refuses %s: %w\n%s", manifest, err, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}
