package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/termlab/termlab/internal/progress"
)

// KrewValidator is krew's own manifest check (structure, semver, sha256,
// platform selectors krew knows and that do not overlap). Its code is
// internal to krew's module, whose go.mod would pull an old client-go into
// this one, so it is built as a command from the Go module proxy.
const KrewValidator = "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3"

// ValidateManifest runs KrewValidator on a manifest, building it into binDir
// at its first use (minutes: krew's dependencies; seconds after). It returns
// the validator's output; an error says whether building or the check failed.
func ValidateManifest(ctx context.Context, log *progress.Logger, binDir, manifest string) (string, error) {
	bin := filepath.Join(binDir, "validate-krew-manifest")
	if _, err := os.Stat(bin); err != nil {
		done := log.Step("building krew's validate-krew-manifest (" + KrewValidator + ") into " + binDir)
		if err := os.MkdirAll(binDir, 0o755); err != nil {
			done(err)
			return "", err
		}
		install := exec.CommandContext(ctx, "go", "install", KrewValidator)
		install.Env = append(os.Environ(), "GOBIN="+binDir, "GOFLAGS=", "CGO_ENABLED=0")
		install.Dir = binDir
		if b, err := install.CombinedOutput(); err != nil {
			err = fmt.Errorf("building %s (it comes from the Go module proxy): %w\n%s", KrewValidator, err, strings.TrimSpace(string(b)))
			done(err)
			return "", err
		}
		done(nil)
	}
	b, err := exec.CommandContext(ctx, bin, "-manifest", manifest, "-skip-install").CombinedOutput()
	if err != nil {
		return string(b), fmt.Errorf("krew's validate-krew-manifest refuses %s: %w\n%s", manifest, err, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}
