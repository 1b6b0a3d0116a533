// Package ownbuild builds termlab's own programs (cmd/...) the one way they
// ship: static (CGO_ENABLED=0), -trimpath, no VCS stamp, stripped. Images,
// bundles, the runtime wrapper and the tests that run these programs all build
// through it, so one entry in Go's build cache serves them all: a test never
// recompiles client-go with other flags on a machine whose cache is cold.
package ownbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Target is the platform to build for; the zero value is the host's.
type Target struct{ GOOS, GOARCH string }

// Build runs `go build` of package pkg (e.g. "./cmd/podnet", or "." for the
// package in dir) into out. The error names the package and carries go's output.
func Build(ctx context.Context, dir, pkg, out string, target Target) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if target.GOOS != "" {
		cmd.Env = append(cmd.Env, "GOOS="+target.GOOS)
	}
	if target.GOARCH != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+target.GOARCH)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s (go build -trimpath, CGO_ENABLED=0): %w\n%s", pkg, err, b)
	}
	return nil
}
