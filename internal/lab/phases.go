package lab

import (
	"context"

	"github.com/termlab/termlab/internal/cluster"
)

// phase is one named part of a run. Execute runs its phases in order, as
// kind's create runs its actions.
type phase struct {
	name string
	run  func(ctx context.Context) error
	// always: the phase runs even after an earlier one failed, so that
	// cleanup and the reports happen on every exit path.
	always bool
}

// phases are a run's: begin (the run id, the cluster's run lock, the run
// folder), set up (repair, namespace, recorder, audit log, clocks, inputs,
// actor), the lab's steps, finish (the list that always runs: cleanup, the
// evidence sources stopped, nodes back, no credential kept) and decide
// (claims, summary, reports).
func (x *execution) phases(env *cluster.Env) []phase {
	return []phase{
		{name: "begin", run: func(ctx context.Context) error { return x.begin(ctx, env) }},
		{name: "set up", run: x.setUp},
		{name: "steps", run: func(ctx context.Context) error {
			defer x.heapAt("steps")
			return x.runSteps(ctx)
		}},
		{name: "finish", always: true, run: func(ctx context.Context) error {
			defer x.heapAt("finish")
			return x.finish(ctx)
		}},
		{name: "decide", always: true, run: func(context.Context) error {
			if !x.wasSetUp() {
				return nil // nothing recorded, nothing to decide
			}
			x.summary, x.err = x.decide()
			return x.err
		}},
	}
}

// runPhases runs the phases in order; after one fails, only those marked
// always. It returns the first failure as it is.
func runPhases(ctx context.Context, phases []phase) error {
	var failed error
	for _, p := range phases {
		if failed != nil && !p.always {
			continue
		}
		if err := p.run(ctx); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}

// wasSetUp reports whether the run got as far as recording: begin and set
// up remove what they made when they fail, leaving nothing to finish.
func (x *execution) wasSetUp() bool { return x.r != nil && x.r.Rec != nil }

// atExit runs fn when Execute returns, the last registered first (as defer).
func (x *execution) atExit(fn func()) { x.exits = append(x.exits, fn) }

func (x *execution) exit() {
	for i := len(x.exits) - 1; i >= 0; i-- {
		x.exits[i]()
	}
}
