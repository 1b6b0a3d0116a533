//go:build mage

// termlab's targets are in magefiles/targets. This magefile only hands over
// to them: mage compiles a magefile and all it imports before it prints
// anything, which for the targets was minutes of silence on a new machine.
// This one compiles in seconds; its init compiles the targets with progress
// (internal/targetsbin), once per change of the sources, and replaces this
// process with them. targets_mirror.go declares the same targets, for
// mage's -l and -h (generated: internal/targetsbin/mirror).

package main

import "github.com/termlab/termlab/internal/targetsbin"

func init() { targetsbin.Main() }
