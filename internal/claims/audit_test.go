package claims

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// withAudit gives the record's force delete its exact request and the API
// server's record of it, sent with the given grace period and answered code.
func withAudit(rec *evidence.Record, pod string, grace *int64, code int) *evidence.Record {
	for i, a := range rec.Actions {
		if a.Kind == "force-delete" && a.Target == pod {
			rec.Actions[i].Request = json.RawMessage(`{"verb":"DELETE","path":"/api/v1/namespaces/ns/pods/` + pod + `"}`)
			rec.Audit = append(rec.Audit, evidence.AuditEvent{
				AuditID: "x", ReceivedAt: a.StartedAt.Add(3 * time.Millisecond), CompletedAt: a.StartedAt.Add(5 * time.Millisecond),
				User: "kubernetes-admin", Verb: "delete", Resource: "pods", Namespace: "ns", Name: pod,
				Code: code, GracePeriodSeconds: grace, Result: evidence.AuditGone,
			})
		}
	}
	return rec
}

// A claim on "a force delete was sent" holds with the API server's record
// of it, and fails when that record contradicts termlab's own.
func TestClaimsReadTheAuditRecord(t *testing.T) {
	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: 2 * time.Second, RequireGone: true}

	c := DeletedWithin(withAudit(orphan(), "orphan-process", i64(0), 200), gone)
	want(t, c, Pass, "")
	cited := false
	for _, e := range c.Evidence {
		cited = cited || e == evidence.AuditFile
	}
	if !cited {
		t.Errorf("the claim does not cite %s: %v", evidence.AuditFile, c.Evidence)
	}

	// termlab recorded a force delete, the server received an ordinary one.
	want(t, DeletedWithin(withAudit(orphan(), "orphan-process", i64(30), 200), gone), Fail, "with gracePeriodSeconds 30, not 0")
	want(t, DeletedWithin(withAudit(orphan(), "orphan-process", nil, 200), gone), Fail, "with gracePeriodSeconds unset, not 0")
	// The server refused it.
	want(t, DeletedWithin(withAudit(orphan(), "orphan-process", i64(0), 403), gone), Fail, "answered the force-delete request on orphan-process with 403")
	// No audit record at all: the claim stands on termlab's own record.
	want(t, DeletedWithin(orphan(), gone), Pass, "")
}

// A run with an audit log in which the action has no entry: the claim still
// rests on termlab's own record, and says so.
func TestClaimSaysWhenTheAuditLogHasNoEntry(t *testing.T) {
	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: 2 * time.Second, RequireGone: true}
	rec := orphan()
	for i, a := range rec.Actions {
		if a.Kind == "force-delete" {
			rec.Actions[i].Request = json.RawMessage(`{"verb":"DELETE","path":"/api/v1/namespaces/ns/pods/orphan-process"}`)
		}
	}
	rec.Audit = append(rec.Audit, evidence.AuditEvent{User: "kubernetes-admin", Verb: "delete", Resource: "pods", Name: "another-pod", Code: 200})
	c := DeletedWithin(rec, gone)
	want(t, c, Pass, "")
	if src, _ := c.Observed["force_delete_source"].(string); !strings.Contains(src, "no entry within") {
		t.Errorf("observed %v: nothing says the action rests on termlab's own record", c.Observed)
	}
	if _, said := DeletedWithin(orphan(), gone).Observed["force_delete_source"]; said {
		t.Error("without any audit log the claim says the audit log had no entry")
	}
	// A node command (the kubelet's stop) is never in the audit log: nothing to say.
	for _, a := range rec.Actions {
		if a.Kind != "force-delete" && a.APIRequest() {
			t.Errorf("action %s counts as an API request", a.Kind)
		}
	}
}
