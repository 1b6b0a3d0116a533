package namespace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:namespace run on the termlab cluster (v1.37.2).
const recorded = "testdata/20261204-141119-673a"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 7)
}

// action is the recorded action's start.
func action(t *testing.T, rec *evidence.Record, kind evidence.ActionKind) time.Time {
	t.Helper()
	for _, a := range rec.Actions {
		if a.Kind == kind {
			return a.StartedAt
		}
	}
	t.Fatalf("no %s action", kind)
	return time.Time{}
}

// goneAt moves the namespace's DELETED to t.
func goneAt(t *testing.T, rec *evidence.Record, ns string, at time.Time) {
	t.Helper()
	for i, e := range rec.NamespaceEvents {
		if e.Name == ns && e.Type == "DELETED" {
			rec.NamespaceEvents[i].ObservedAt = at
			return
		}
	}
	t.Fatalf("namespace %s has no DELETED", ns)
}

// editConditions changes every condition of the namespace's events.
func editConditions(rec *evidence.Record, ns string, fn func(c *evidence.NamespaceCondition)) {
	for i, e := range rec.NamespaceEvents {
		if e.Name != ns {
			continue
		}
		cs := append([]evidence.NamespaceCondition(nil), e.Conditions...)
		for j := range cs {
			fn(&cs[j])
		}
		rec.NamespaceEvents[i].Conditions = cs
	}
}

// addAudit appends a request to the audit log.
func addAudit(rec *evidence.Record, e evidence.AuditEvent) {
	if e.Code == 0 {
		e.Code = 200
	}
	if e.CompletedAt.IsZero() {
		e.CompletedAt = e.ReceivedAt
	}
	rec.Audit = append(append([]evidence.AuditEvent(nil), rec.Audit...), e)
}

// dropAudit leaves out the requests keep rejects.
func dropAudit(rec *evidence.Record, drop func(evidence.AuditEvent) bool) {
	var kept []evidence.AuditEvent
	for _, e := range rec.Audit {
		if !drop(e) {
			kept = append(kept, e)
		}
	}
	rec.Audit = kept
}

func podDeleted(t *testing.T, rec *evidence.Record) time.Time {
	t.Helper()
	at, ok := podGone(rec)
	if !ok {
		t.Fatal("the pod has no DELETED")
	}
	return at
}

// Each claim fails on a record that contradicts it.
func TestClaimsFailOnContradictingRecords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		claim string
		edit  func(t *testing.T, rec *evidence.Record)
	}{
		{"the APIService's namespace never says discovery failed", idAPIHolds, func(t *testing.T, rec *evidence.Record) {
			editConditions(rec, APIServiceNamespace(rec.Namespace), func(c *evidence.NamespaceCondition) {
				if c.Type == DiscoveryFailure {
					c.Status = "False"
				}
			})
		}},
		{"discovery failed for another group", idAPIHolds, func(t *testing.T, rec *evidence.Record) {
			editConditions(rec, APIServiceNamespace(rec.Namespace), func(c *evidence.NamespaceCondition) {
				if c.Type == DiscoveryFailure {
					c.Message = "Discovery failed for some groups, 1 failing: metrics.k8s.io/v1beta1"
				}
			})
		}},
		{"the APIService's namespace gone before the release", idAPIHolds, func(t *testing.T, rec *evidence.Record) {
			goneAt(t, rec, APIServiceNamespace(rec.Namespace), action(t, rec, "delete-apiservice").Add(-time.Second))
		}},
		{"the APIService's namespace gone later than the backoff allows", idAPIFrees, func(t *testing.T, rec *evidence.Record) {
			rel := action(t, rec, "delete-apiservice")
			held := rel.Sub(action(t, rec, "delete-namespace"))
			goneAt(t, rec, APIServiceNamespace(rec.Namespace), rel.Add(held+passAllowance+time.Second))
		}},
		{"someone finalized the APIService's namespace by hand", idAPIFrees, func(t *testing.T, rec *evidence.Record) {
			addAudit(rec, evidence.AuditEvent{ReceivedAt: action(t, rec, "delete-apiservice"), User: "kubernetes-admin", Verb: "update",
				Resource: "namespaces", Subresource: "finalize", Name: APIServiceNamespace(rec.Namespace)})
		}},
		{"no finalize by the namespace controller", idAPIFrees, func(t *testing.T, rec *evidence.Record) {
			ns := APIServiceNamespace(rec.Namespace)
			dropAudit(rec, func(e evidence.AuditEvent) bool { return e.Name == ns && e.Subresource == "finalize" })
		}},
		{"the orphan's namespace names another finalizer", idOrphanHolds, func(t *testing.T, rec *evidence.Record) {
			editConditions(rec, OrphanNamespace(rec.Namespace), func(c *evidence.NamespaceCondition) {
				if c.Type == FinalizersRemaining && c.Status == "True" {
					c.Message = "Some content in the namespace has finalizers remaining: other.example.com/x in 1 resource instances"
				}
			})
		}},
		{"a controller updated the custom resource before the release", idOrphanHolds, func(t *testing.T, rec *evidence.Record) {
			addAudit(rec, evidence.AuditEvent{ReceivedAt: action(t, rec, "remove-finalizer").Add(-500 * time.Millisecond),
				User: "system:serviceaccount:widgets:widget-controller", Verb: "update", Resource: Plural, Namespace: OrphanNamespace(rec.Namespace), Name: Resource})
		}},
		{"the namespace controller never deleted the custom resource", idOrphanHolds, func(t *testing.T, rec *evidence.Record) {
			dropAudit(rec, func(e evidence.AuditEvent) bool { return e.Resource == Plural && e.User == NamespaceController })
		}},
		{"the orphan's namespace gone after the controller's look and a pass", idOrphanFrees, func(t *testing.T, rec *evidence.Record) {
			goneAt(t, rec, OrphanNamespace(rec.Namespace), action(t, rec, "remove-finalizer").Add(orphanRequeue+passAllowance+500*time.Millisecond))
		}},
		{"no one removed the finalizer", idOrphanFrees, func(t *testing.T, rec *evidence.Record) {
			dropAudit(rec, func(e evidence.AuditEvent) bool { return e.Resource == Plural && e.ByPerson() })
		}},
		{"the claim was not kept at the namespace delete", idClaimHeld, func(t *testing.T, rec *evidence.Record) {
			notes := append([]evidence.Note(nil), rec.Notes...)
			for i, n := range notes {
				if c, ok := claimAtDelete(&evidence.Record{Notes: []evidence.Note{n}}); ok {
					c.Finalizers = nil
					b, _ := json.Marshal(c)
					notes[i].Text = claimNote + string(b)
				}
			}
			rec.Notes = notes
		}},
		{"the PVC protection controller let the claim go while the pod was there", idClaimHeld, func(t *testing.T, rec *evidence.Record) {
			gone := podDeleted(t, rec)
			audit := append([]evidence.AuditEvent(nil), rec.Audit...)
			for i, e := range audit {
				if e.User == PVCController && e.Name == Claim {
					audit[i].ReceivedAt = gone.Add(-3 * time.Second)
				}
			}
			rec.Audit = audit
		}},
		{"the PVC protection controller let the claim go long after the pod", idClaimHeld, func(t *testing.T, rec *evidence.Record) {
			gone := podDeleted(t, rec)
			audit := append([]evidence.AuditEvent(nil), rec.Audit...)
			for i, e := range audit {
				if e.User == PVCController && e.Name == Claim {
					audit[i].ReceivedAt = gone.Add(claimGoneWithin + time.Second)
				}
			}
			rec.Audit = audit
		}},
		{"the conditions named the pod while it was there", idPodsFirst, func(t *testing.T, rec *evidence.Record) {
			gone := podDeleted(t, rec)
			deleted := action(t, rec, "delete-namespace")
			for _, a := range rec.Actions {
				if a.Kind == "delete-namespace" && a.Target == rec.Namespace {
					deleted = a.StartedAt
				}
			}
			rec.NamespaceEvents = append(append([]evidence.NamespaceEvent(nil), rec.NamespaceEvents...), evidence.NamespaceEvent{
				ObservedAt: deleted.Add(gone.Sub(deleted) / 2), Type: "MODIFIED", Name: rec.Namespace, DeletionTimestamp: &deleted,
				Conditions: []evidence.NamespaceCondition{{Type: ContentRemaining, Status: "True", Message: "Some resources are remaining: pods. has 1 resource instances"}},
			})
		}},
		{"the namespace controller deleted the claims before the pod was gone", idPodsFirst, func(t *testing.T, rec *evidence.Record) {
			gone := podDeleted(t, rec)
			audit := append([]evidence.AuditEvent(nil), rec.Audit...)
			for i, e := range audit {
				if e.User == NamespaceController && e.Resource == "persistentvolumeclaims" {
					audit[i].ReceivedAt = gone.Add(-3 * time.Second)
				}
			}
			rec.Audit = audit
		}},
		{"the run's namespace gone long after its pod", idPodsFirst, func(t *testing.T, rec *evidence.Record) {
			goneAt(t, rec, rec.Namespace, podDeleted(t, rec).Add(podsFirstGoneWithin+time.Second))
		}},
		{"the condition seen before the controller's 5 s delay", idAPIHolds, func(t *testing.T, rec *evidence.Record) {
			ns := APIServiceNamespace(rec.Namespace)
			del := action(t, rec, "delete-namespace")
			for i, e := range rec.NamespaceEvents {
				if e.Name == ns && e.True(DiscoveryFailure) {
					rec.NamespaceEvents[i].ObservedAt = del.Add(controllerDelay - time.Second)
				}
			}
		}},
		{"the namespace seen being deleted before the lab's delete", idOrphanHolds, func(t *testing.T, rec *evidence.Record) {
			ns := OrphanNamespace(rec.Namespace)
			del := action(t, rec, "delete-namespace")
			for _, a := range rec.Actions {
				if a.Kind == "delete-namespace" && a.Target == ns {
					del = a.StartedAt
				}
			}
			rec.NamespaceEvents = append([]evidence.NamespaceEvent{{ObservedAt: del.Add(-time.Second), Type: "MODIFIED", Name: ns, DeletionTimestamp: &del}}, rec.NamespaceEvents...)
		}},
		{"the discovery failure never cleared before the namespace went", idAPIFrees, func(t *testing.T, rec *evidence.Record) {
			rel := action(t, rec, "delete-apiservice")
			editConditions(rec, APIServiceNamespace(rec.Namespace), func(c *evidence.NamespaceCondition) {
				if c.Type == DiscoveryFailure {
					c.Status = "True"
				}
			})
			_ = rel
		}},
		{"the namespaces watch was down while the orphan's namespace was held", idOrphanFrees, func(t *testing.T, rec *evidence.Record) {
			rel := action(t, rec, "remove-finalizer")
			rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchNamespaces, From: rel, To: rel.Add(time.Second), Why: "test"})
		}},
		{"the pod was killed (exit 137), not ended by itself", idPodsFirst, func(t *testing.T, rec *evidence.Record) {
			events := append([]evidence.PodEvent(nil), rec.PodEvents...)
			for i, e := range events {
				cs := append([]evidence.ContainerState(nil), e.Containers...)
				for j := range cs {
					if cs[j].ExitCode != nil {
						code := int32(137)
						cs[j].ExitCode = &code
					}
				}
				events[i].Containers = cs
			}
			rec.PodEvents = events
		}},
		{"the pods watch was down while the pod terminated", idClaimHeld, func(t *testing.T, rec *evidence.Record) {
			gone := podDeleted(t, rec)
			rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: gone.Add(-2 * time.Second), To: gone, Why: "test"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.edit(t, rec)
			labtest.MustFail(t, Claims(rec), tc.claim)
		})
	}
}

func TestAnswerSaysEachCause(t *testing.T) {
	rec := load(t)
	a := Answer(rec, Claims(rec))
	labtest.Contains(t, "the answer", a, "NamespaceDeletionDiscoveryFailure", Finalizer, PVCProtection, "No namespace's finalizers were stripped")
}

// A server-side dry run of the finalizer's removal while the namespace is
// held (diagnose asks whether the patch would be accepted) changes nothing:
// it is no controller acting.
func TestADryRunIsNoChange(t *testing.T) {
	rec := load(t)
	at := action(t, rec, "remove-finalizer").Add(-time.Second)
	addAudit(rec, evidence.AuditEvent{ReceivedAt: at, User: "kubernetes-admin", Verb: "patch", Resource: Plural,
		Namespace: OrphanNamespace(rec.Namespace), Name: Resource, DryRun: true})
	addAudit(rec, evidence.AuditEvent{ReceivedAt: at, User: "kubernetes-admin", Verb: "patch", Resource: "namespaces",
		Name: OrphanNamespace(rec.Namespace), DryRun: true})
	labtest.AllPass(t, Claims(rec), 7)
}

// Through a kubeconfig without node access the audit log is not read: the
// claims that rest on it say they need node access, as the crictl ones do.
func TestWithoutNodeAccessTheAuditClaimsSayWhy(t *testing.T) {
	rec := load(t)
	rec.Audit, rec.NodeAccess = nil, evidence.NodeAccessNone
	n := 0
	for _, c := range Claims(rec) {
		if c.Verdict != claims.NotChecked {
			continue
		}
		n++
		if !strings.HasPrefix(c.Reason, "not checked (needs -node-access)") {
			t.Errorf("%s not checked for %q, want a reason that names -node-access", c.ID, c.Reason)
		}
	}
	if n == 0 {
		t.Error("no claim reported not checked without the audit log")
	}
}

// A pod's watch events in an order a watch never sends fail namespace.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "namespace")
}
