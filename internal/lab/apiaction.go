package lab

import (
	"context"
	"fmt"

	"github.com/termlab/termlab/internal/evidence"
)

// APIAction is one request a lab's step makes on an API object that Run has
// no helper for (an APIService, a custom resource, a claim, another
// namespace). Perform sends it (termlab) or has the actor do it, seen in the
// API server's audit log (-by=script, -by=you), and records it either way.
type APIAction struct {
	// Kind names the action, as scripts/<lab>.sh takes it ("delete-apiservice").
	Kind evidence.ActionKind
	// Target is the object's name, as the audit log names it.
	Target string
	// Resource is the audit log's resource ("apiservices", "widgets",
	// "persistentvolumeclaims", "namespaces"); Verbs the verbs that count
	// as the action ("delete"; "patch", "update").
	Resource string
	Verbs    []string
	// Method and Path are the request as the record keeps it; PatchType
	// and Body its content, when it has one.
	Method, Path string
	PatchType    string
	Body         any
	// Equivalent is the command a person would type.
	Equivalent string
	// Check says what is wrong with a request of the right verb on the
	// object seen in the audit log ("" when it is the one the step wants);
	// nil accepts any.
	Check func(evidence.AuditEvent) string
	// Do is termlab's own request.
	Do func(ctx context.Context) error
}

// Perform does the action: termlab sends Do, or the run's actor (-by) does
// it and the audit log shows it. Either way it is recorded as an action.
func (r *Run) Perform(ctx context.Context, a APIAction) error {
	check := a.Check
	if check == nil {
		check = func(evidence.AuditEvent) string { return "" }
	}
	return r.perform(ctx, action{kind: a.Kind, target: a.Target, equivalent: a.Equivalent, doing: fmt.Sprintf("%s of %s", a.Kind, a.Target),
		request: apiRequest{Verb: a.Method, Path: a.Path, PatchType: a.PatchType, Body: a.Body},
		send:    a.Do,
		audit:   &expectation{verbs: a.Verbs, resource: a.Resource, check: check, path: a.Path},
	})
}
