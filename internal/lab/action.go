package lab

import (
	"context"
	"errors"
	"fmt"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

// action is one thing a lab's step does to the cluster, described once:
// how termlab does it, how someone else's doing it shows, and what the run
// must remember to undo. perform carries it out, whoever the actor is.
type action struct {
	kind   evidence.ActionKind
	target string
	// equivalent is the command a person types; a script's step does the same.
	equivalent string
	// doing names the action in words, for errors ("stopping the kubelet on termlab-worker2").
	doing string

	// termlab's way: the request as the record keeps it, the call that
	// sends it, and what termlab says once it is sent ("": "sent <equivalent>").
	request any
	send    func(ctx context.Context) error
	said    string

	// Someone else's way shows in the API server's audit log (audit), or
	// in a systemd unit's state on a node (unit, on node).
	audit *expectation
	unit  *unitChange
	node  cluster.Node

	// before runs first and after once the action is done, whoever acts:
	// what the run must undo is noted before the action (a half-done one is
	// undone too) and dropped after it. A skipped action keeps its note, so
	// cleanup undoes what the run did before it.
	before func(ctx context.Context) error
	after  func(ctx context.Context) error
}

// actor does the run's actions while its steps run: termlab itself (the
// default, never nil), or someone else watched doing them (-by).
type actor interface {
	// do has the action done and recorded; errSkipped when a person gave it up.
	do(ctx context.Context, r *Run, a action) error
}

// byTermlab is termlab sending every request itself.
var byTermlab actor = termlabActor{}

type termlabActor struct{}

func (termlabActor) do(ctx context.Context, r *Run, a action) error {
	if err := r.act(a.kind, a.target, a.request, a.equivalent, func() error { return a.send(ctx) }); err != nil {
		return fmt.Errorf("%s: %w", a.doing, err)
	}
	said := a.said
	if said == "" {
		said = "sent " + a.equivalent
	}
	r.Infof("%s", said)
	return nil
}

// someoneElse is a script or a person doing the action, recorded from the
// audit log or the node once it shows there.
type someoneElse struct{ asker }

func (o someoneElse) do(ctx context.Context, r *Run, a action) error {
	if a.unit != nil {
		return r.byOtherOnNode(ctx, o.asker, *a.unit, a.node, a.equivalent)
	}
	return r.byOther(ctx, o.asker, a.kind, a.target, a.equivalent, *a.audit)
}

// perform carries out an action: the run notes what it must undo, the
// actor does it, and the note is dropped once it is done. A skip is no
// error for the run (the claims that need the action fail on their own).
func (r *Run) perform(ctx context.Context, a action) error {
	if a.before != nil {
		if err := a.before(ctx); err != nil {
			return fmt.Errorf("before %s: %w", a.doing, err)
		}
	}
	if err := r.actorNow().do(ctx, r, a); err != nil {
		if errors.Is(err, errSkipped) {
			return nil
		}
		return err
	}
	if a.after != nil {
		if err := a.after(ctx); err != nil {
			return fmt.Errorf("after %s: %w", a.doing, err)
		}
	}
	return nil
}

// actorNow is who does the run's actions now: the -by actor while the
// steps run, termlab before and after them and while it restores what the
// run changed.
func (r *Run) actorNow() actor {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.actor == nil {
		return byTermlab
	}
	return r.actor
}

func (r *Run) setActor(a actor) {
	r.mu.Lock()
	r.actor = a
	r.mu.Unlock()
}
