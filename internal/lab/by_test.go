package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// What a hands-on step accepts, and how it names a wrong command.
func TestByExpectations(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	g := func(v int64) *int64 { return &v }
	del := func(grace *int64) evidence.AuditEvent {
		return evidence.AuditEvent{AuditID: "x", ReceivedAt: t0.Add(time.Second), User: "kubernetes-admin", UserAgent: "kubectl/v1.37.2 (linux/amd64)", Verb: "delete", Resource: "pods", Namespace: "ns", Name: "held", GracePeriodSeconds: grace, Code: 200}
	}
	force, ordinary := deleteExpect(true), deleteExpect(false)
	if msg := force.check(del(g(30))); msg != "saw DELETE pods/held with gracePeriodSeconds 30 (kubectl/v1.37.2); this step wants gracePeriodSeconds 0 (--force --grace-period=0)" {
		t.Errorf("force step, grace 30: %q", msg)
	}
	if msg := force.check(del(nil)); !strings.Contains(msg, "with no gracePeriodSeconds") {
		t.Errorf("force step, no grace: %q", msg)
	}
	if msg := force.check(del(g(0))); msg != "" {
		t.Errorf("force step, grace 0: %q", msg)
	}
	if msg := ordinary.check(del(g(0))); !strings.Contains(msg, "this step wants an ordinary delete") {
		t.Errorf("ordinary step, grace 0: %q", msg)
	}
	if msg := ordinary.check(del(nil)); msg != "" {
		t.Errorf("ordinary step, no grace: %q", msg)
	}
	// Only a person's request on the step's object, after termlab asked, counts.
	kubelet := del(g(0))
	kubelet.User = "system:node:termlab-worker"
	for name, c := range map[string]struct {
		e    evidence.AuditEvent
		want bool
	}{
		"the person's delete":  {del(nil), true},
		"the kubelet's delete": {kubelet, false},
		"another pod":          {func() evidence.AuditEvent { e := del(nil); e.Name = "other"; return e }(), false},
		"before termlab asked": {func() evidence.AuditEvent { e := del(nil); e.ReceivedAt = t0.Add(-time.Second); return e }(), false},
		"a status update":      {func() evidence.AuditEvent { e := del(nil); e.Subresource = "status"; return e }(), false},
	} {
		if got := ordinary.matches(c.e, "held", t0); got != c.want {
			t.Errorf("%s: matches = %v, want %v", name, got, c.want)
		}
	}
	patch := evidence.AuditEvent{Verb: "patch", Resource: "pods", Name: "held", Patch: []byte(`{"metadata":{"labels":{"a":"b"}}}`)}
	if msg := removeFinalizersExpect.check(patch); !strings.Contains(msg, "wants the finalizers removed") {
		t.Errorf("finalizer step, label patch: %q", msg)
	}
	patch.Patch = []byte(`{"metadata":{"finalizers":null}}`)
	if msg := removeFinalizersExpect.check(patch); msg != "" {
		t.Errorf("finalizer step: %q", msg)
	}
	taint := evidence.AuditEvent{Verb: "patch", Resource: "nodes", Name: "w", Taints: []string{"node.kubernetes.io/out-of-service:NoExecute"}}
	if msg := taintExpect("node.kubernetes.io/out-of-service", "NoExecute", true).check(taint); msg != "" {
		t.Errorf("taint step: %q", msg)
	}
	if msg := taintExpect("node.kubernetes.io/out-of-service", "NoExecute", false).check(taint); !strings.Contains(msg, "still has taint") || !strings.Contains(msg, "taints now [node.kubernetes.io/out-of-service:NoExecute]") {
		t.Errorf("untaint step: %q", msg)
	}
}
