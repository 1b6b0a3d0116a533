// Package invocation knows how this process was started (`go tool mage` in
// a checkout, the termlab binary, the kubectl plugin, the workshop bundle's
// binary) and spells a command the way the person in front of it can type
// it. Hints say Command("cluster:up"), never a fixed "go tool mage …".
//
// Each entry point calls Set once at startup, before anything prints a hint;
// without Set the mage spelling is used.
package invocation

import (
	"strings"
	"sync/atomic"
)

// Kind is how the running program was started.
type Kind int

const (
	// Mage is `go tool mage <target>` in a termlab checkout.
	Mage Kind = iota
	// Binary is cmd/termlab on PATH: `termlab <command>`.
	Binary
	// Plugin is cmd/termlab installed as kubectl-termlab: `kubectl termlab <command>`.
	Plugin
	// Workshop is cmd/termlab in an unpacked workshop bundle, run from the
	// bundle's folder as its WORKSHOP.md says: `./termlab <command>`.
	Workshop
)

// Invocation is one way of running termlab.
type Invocation struct {
	Kind Kind
	// Commands are the commands this program has, for every Kind but Mage
	// (mage has every target). A target it lacks is spelt for a checkout.
	Commands map[string]bool
}

var current atomic.Pointer[Invocation]

// Set records how this process was started.
func Set(inv Invocation) { current.Store(&inv) }

// Current is how this process was started (Mage unless Set said otherwise).
func Current() Invocation {
	if inv := current.Load(); inv != nil {
		return *inv
	}
	return Invocation{Kind: Mage}
}

// Command spells target with flags for this process: see Invocation.Command.
func Command(target string, flags ...string) string { return Current().Command(target, flags...) }

// Flag spells one flag for this process: see Invocation.Flag.
func Flag(flag string) string { return Current().Flag(flag) }

// Command spells target (a mage name such as "cluster:up") with flags
// written as mage takes them ("-nodeaccess", "-limits=raised"), for inv.
// A target inv's program does not have is the checkout's command, saying so.
func (inv Invocation) Command(target string, flags ...string) string {
	if inv.Kind != Mage && !inv.Commands[target] {
		return Invocation{Kind: Mage}.Command(target, flags...) + " (in a termlab checkout)"
	}
	words := []string{inv.program(), target}
	for _, f := range flags {
		words = append(words, inv.Flag(f))
	}
	return strings.Join(words, " ")
}

func (inv Invocation) program() string {
	switch inv.Kind {
	case Binary:
		return "termlab"
	case Plugin:
		return "kubectl termlab"
	case Workshop:
		return "./termlab"
	default:
		return "go tool mage"
	}
}

// Flag spells a flag written as mage takes it ("-nodeaccess=true") for inv:
// unchanged for mage, "--node-access=true" for cmd/termlab.
func (inv Invocation) Flag(flag string) string {
	if inv.Kind == Mage {
		return flag
	}
	name, value, hasValue := strings.Cut(strings.TrimLeft(flag, "-"), "=")
	if dashed, ok := DashedFlagNames[name]; ok {
		name = dashed
	}
	if hasValue {
		return "--" + name + "=" + value
	}
	return "--" + name
}

// DashedFlagNames are the mage targets' flag names (a Go parameter,
// lowercased) that cmd/termlab spells with dashes, as kubectl does.
var DashedFlagNames = map[string]string{
	"nodeaccess":         "node-access",
	"controlplaneaccess": "control-plane-access",
	"allownodefaults":    "allow-node-faults",
	"allowclusterfaults": "allow-cluster-faults",
	"allnodes":           "all-nodes",
	"nowait":             "no-wait",
}
