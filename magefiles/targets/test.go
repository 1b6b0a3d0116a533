//go:build mage

package main

import (
	"context"
	"os"

	"github.com/magefile/mage/sh"

	"github.com/termlab/termlab/internal/gotest"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/stack"
)

// Test runs the unit tests, brings the cluster up (building what is missing), then the end-to-end tests on it.
func Test(ctx context.Context) error {
	log := progress.Default()
	done := log.Step("unit tests: go test ./...")
	err := sh.RunV("go", "test", "-count=1", "-timeout", "30m", "./...")
	done(err)
	if err != nil {
		return err
	}
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	if _, err := stack.Up(ctx, log, o); err != nil {
		return err
	}
	done = log.Step("end-to-end tests on the real cluster: go test -tags e2e ./test/e2e/")
	err = gotest.Run(os.Stdout, "-tags", "e2e", "-count=1", "-timeout", "60m", "-v", "./test/e2e/")
	done(err)
	if err != nil {
		return err
	}
	// A workshop bundle made here, loaded and used with no Go, module proxy or registry.
	done = log.Step("offline workshop bundle test: go test -tags e2e ./internal/workshop/")
	err = gotest.Run(os.Stdout, "-tags", "e2e", "-count=1", "-timeout", "20m", "-v", "-run", "TestOfflineBundle", "./internal/workshop/")
	done(err)
	return err
}
