package mutants

// Reason says why the missing mutants Mutants names survive: "reviewed: …"
// (read against the record and the claims: why no claim should catch it)
// or "missing claim: …" (one should, and does not yet). Tolerated and
// equivalent mutants need none: their class is computed (classes.go), and
// a reason may not claim it. Mutants is a mutant's name as
// go tool mage mutants prints it, or a pattern where each * stands for any
// run of characters; a pattern must cover no killed mutant, so that it
// names a family no claim guards.
type Reason struct {
	Mutants string
	Why     string
}

// Unreviewed are labs whose surviving mutants have no written reasons yet,
// each with why: their survivors are printed, not failed on, and their
// floor still holds. A lab leaves this list when its reasons are written.
var Unreviewed = map[string]string{}

// Floors are the committed mutation scores (killed / (mutants −
// equivalent), rounded down):
// a lab's score may not drop below its floor. Raise one when a claim kills
// more; a new lab commits its own.
var Floors = map[string]float64{
	"finalizer":   0.42,
	"force":       0.45,
	"orphan":      0.50,
	"stuck":       0.50,
	"statefulset": 0.39,
	"kwok":        0.70,
	"scale":       0.58,
	"sidecar":     0.31,
	"graceful":    0.47,
	"mount":       0.37,
	"namespace":   0.53,
}
