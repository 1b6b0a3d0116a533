//go:build mage

package main

import (
	"os"

	"github.com/termlab/termlab/internal/targets"
)

// Mutants breaks each lab's reference record in small ways (timings ×2 and ×0.5, events dropped or swapped, container states and exit codes changed, watch gaps) and prints each mutant's class (killed, tolerated, equivalent, missing) and every lab's mutation score.
//
// Tolerated (a timing moved within its claim's tolerance) and equivalent
// (only fields no claim of the lab can read, found from the claims'
// source) are computed; every other survivor is missing and needs a
// reviewed reason in internal/mutants/survivors_table.go. A score
// (killed / (mutants − equivalent)) may not drop below the floor in
// internal/mutants/survivors.go. Pure: no cluster. The same check runs in
// go test ./...
func Mutants() error { return targets.Mutants(os.Stdout) }
