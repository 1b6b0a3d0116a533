// Package mutants breaks a lab's reference record in small, named ways and
// runs the lab's claims on each broken copy. Each mutant is then classed
// (classes.go): killed (a claim that passed now fails); tolerated (a
// stretched or shrunk timing that stayed within its claim's tolerance);
// equivalent (it changes only Record fields no claim of the lab can read,
// found from the claims' source: reads.go); else missing, which needs a
// reviewed reason in survivors_table.go. The lab's mutation score is
// killed / (mutants − equivalent).
//
// The operators: each timing a passing claim vouches for
// (Claim.Tolerances) or reports (every other "…_seconds" it observes, the
// bounds of the labs that state no tolerance among them) stretched ×2 and
// shrunk ×0.5 by moving its later end; a watch event
// dropped (pods, nodes, Kubernetes Events, EndpointSlices); two adjacent
// watch events of one object swapped; a container state flipped (running ↔
// exited); a client's request flipped (a failure answered, every failure
// of a target answered, an answer refused); an exit code changed among 0,
// 137 and 143; a watch gap over a step; an action of the lab dropped or
// moved (its distance to what follows ×2 or ×0.5); an audit entry dropped,
// its user or verb changed, or moved 2 s; a ledger write dropped,
// duplicated, credited to another writer or moved 2 s (streams.go); a read
// of kube-proxy's rules dropped or still showing an endpoint gone; a
// containerd task exit's status changed or moved 2 s; a clock offset moved
// 2 s or dropped. Everything is derived from the record alone,
// in the record's order, so the same record gives the same mutants.
package mutants

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Decide is a lab's claims (lab.Definition.Claims).
type Decide func(rec *evidence.Record) []claims.Claim

// Operator names, as the report prints them.
const (
	OpStretch  = "stretch ×2"
	OpShrink   = "shrink ×0.5"
	OpDrop     = "drop"
	OpSwap     = "swap"
	OpFlip     = "flip state"
	OpExitCode = "exit code"
	OpGap      = "watch gap"
	OpAction   = "action"
	OpAudit    = "audit"
	OpLedger   = "ledger"
	OpProxy    = "proxy read"
	OpTaskExit = "task exit"
	OpClock    = "clock"
)

// Operators in the order mutants are generated and printed.
var Operators = []string{OpStretch, OpShrink, OpDrop, OpSwap, OpFlip, OpExitCode, OpGap,
	OpAction, OpAudit, OpLedger, OpProxy, OpTaskExit, OpClock}

// MaxPerOperator bounds the mutants of one operator: lab:scale's record has
// hundreds of pods and events, so its drops, swaps, flips and exit codes are
// sampled at an even stride (Generated.Notes says which); every other
// lab's record is far below it and fully mutated.
const MaxPerOperator = 80

// Mutant is one broken copy of the record, named after what was broken (the
// name is its key in the survivors table). Names hold indices and names from
// the record, not resourceVersions, container IDs or durations, so that a
// reference run recorded again keeps most of them.
type Mutant struct {
	Operator string
	Name     string
	// apply breaks rec, a copy of the reference made for this mutant alone.
	apply func(rec *evidence.Record)
}

// Generated is what Generate made of a record.
type Generated struct {
	Mutants []Mutant
	// Notes say what was sampled or could not be mutated.
	Notes []string
	// untolerated names the stretches and shrinks of timings their claim
	// states no tolerance for: never tolerated, whatever else they move.
	untolerated map[string]bool
}

// Generate derives the record's mutants, deterministically. decide is
// needed to find which recorded times the vouched timings are made of.
func Generate(rec *evidence.Record, decide Decide) Generated {
	var g Generated
	intervals, untolerated, notes := intervalMutants(rec, decide)
	g.Notes, g.untolerated = append(g.Notes, notes...), untolerated
	byOp := map[string][]Mutant{}
	for _, m := range intervals {
		byOp[m.Operator] = append(byOp[m.Operator], m)
	}
	byOp[OpDrop] = dropMutants(rec)
	byOp[OpSwap] = swapMutants(rec)
	byOp[OpFlip] = flipMutants(rec)
	byOp[OpExitCode] = exitCodeMutants(rec)
	byOp[OpGap] = gapMutants(rec)
	byOp[OpAction] = actionMutants(rec)
	var auditNotes []string
	byOp[OpAudit], auditNotes = auditMutants(rec)
	g.Notes = append(g.Notes, auditNotes...)
	byOp[OpLedger] = ledgerMutants(rec)
	byOp[OpProxy] = proxyMutants(rec)
	byOp[OpTaskExit] = taskExitMutants(rec)
	byOp[OpClock] = clockMutants(rec)
	for _, op := range Operators {
		ms := byOp[op]
		if len(ms) > MaxPerOperator {
			g.Notes = append(g.Notes, fmt.Sprintf("%s: %d of %d mutants, at an even stride", op, MaxPerOperator, len(ms)))
			ms = sample(ms, MaxPerOperator)
		}
		g.Mutants = append(g.Mutants, ms...)
	}
	return g
}

// sample keeps n of the mutants, evenly spread, first one included.
func sample(ms []Mutant, n int) []Mutant {
	out := make([]Mutant, 0, n)
	for i := range n {
		out = append(out, ms[i*len(ms)/n])
	}
	return out
}
