package lab

import (
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// EventKind names what happened in a run.
type EventKind string

// The events a run emits, in this order: RunStarted; per step StepStarted,
// the ActionSent of each request or node command, StepFinished; a
// ClaimDecided per claim; RunFinished.
const (
	RunStarted   EventKind = "run-started"
	StepStarted  EventKind = "step-started"
	ActionSent   EventKind = "action-sent"
	StepFinished EventKind = "step-finished"
	ClaimDecided EventKind = "claim-decided"
	RunFinished  EventKind = "run-finished"
)

// Event is one structured thing a run tells its front ends (the workshop
// guide, a hands-on mode, any UI). They consume these; nothing parses the
// progress log.
type Event struct {
	Kind EventKind
	At   time.Time
	// Lab, RunID, Namespace and Dir identify the run; set on every event.
	Lab, RunID, Namespace, Dir string
	// Step is the step's name (step events, and the step an action belongs to).
	Step string
	// Err is a step's error (StepFinished) or the run's errors (RunFinished).
	Err string
	// Action is what was sent (ActionSent): kind, target, the exact request
	// and the command a person would type.
	Action *evidence.Action
	// Claim is a decided claim (ClaimDecided).
	Claim *claims.Claim
	// Verdict is the run's overall verdict (RunFinished).
	Verdict claims.Verdict
}

// emit sends an event to Options.Events, stamped with the run's identity.
func (r *Run) emit(e Event) {
	if r.opts.Events == nil {
		return
	}
	e.At = time.Now().UTC()
	e.Lab, e.RunID, e.Namespace, e.Dir = r.Lab, r.ID, r.Namespace, r.Dir
	r.opts.Events(e)
}

// act performs a recorded action (internal/recorder's Act) and emits it.
func (r *Run) act(kind evidence.ActionKind, target string, request any, equivalent string, do func() error) error {
	a, err := r.Rec.Act(kind, target, request, equivalent, do)
	if a.Kind != "" {
		r.emit(Event{Kind: ActionSent, Step: a.Step, Action: &a})
	}
	return err
}

// Act performs do as a recorded action: kind and target name it, request is
// the exact request (as JSON), equivalent the command a person would type.
// It is for a lab's own requests that Run has no helper for (a namespace
// delete, a batch of creates); the action is emitted like every other.
func (r *Run) Act(kind evidence.ActionKind, target string, request any, equivalent string, do func() error) error {
	return r.act(kind, target, request, equivalent, do)
}
