//go:build mage

package main

import (
	"os"

	"github.com/termlab/termlab/internal/targets"
)

// Mutants breaks each lab's reference record in small ways (timings ×2 and ×0.5, events dropped or swapped, container states and exit codes changed, watch gaps) and prints the claims that kill each mutant and every lab's mutation score.
//
// A mutant no claim kills needs a written reason in
// internal/mutants/survivors.go; a score may not drop below the floor
// committed there. Pure: no cluster. The same check runs in go test ./...
func Mutants() error { return targets.Mutants(os.Stdout) }
