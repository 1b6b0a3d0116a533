package namespace

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// Claim ids, as the answer names them.
const (
	idAPIHolds     = "namespace.apiservice_discovery_failure_holds"
	idAPIFrees     = "namespace.apiservice_release_frees_it"
	idOrphanHolds  = "namespace.orphan_finalizer_holds"
	idOrphanFrees  = "namespace.orphan_release_frees_it"
	idClaimHeld    = "namespace.claim_kept_while_pod_uses_it"
	idPodsFirst    = "namespace.pods_first_then_the_claim"
	namespacesFile = evidence.NamespacesFile
	auditFile      = evidence.AuditFile
	actionsFile    = evidence.ActionsFile
	eventsFile     = evidence.EventsFile
)

// Bounds of the claims, each from the mechanism: the namespace controller
// of k8s.io/kubernetes v1.37.2, pkg/controller/namespace.
const (
	// controllerDelay: the controller takes a namespace whose
	// deletionTimestamp it sees only 5 s later (namespaceDeletionGracePeriod,
	// enqueueNamespace's AddAfter), "to allow HA api servers to observe".
	controllerDelay = 5 * time.Second
	// passAllowance bounds one pass of the namespace controller over a
	// namespace (discovery of every group, a DELETE and a LIST per resource
	// type: about 60 types here) and the watch event of the status it writes.
	passAllowance = 3 * time.Second
	// heldWithin bounds, from the namespace's delete, the watch event whose
	// conditions name the cause: the 5 s delay and the first pass.
	heldWithin = controllerDelay + passAllowance
	// failureBaseDelay and failureMaxDelay are the namespace queue's rate
	// limiter for a failed pass (nsControllerRateLimiter): 5 ms doubling per
	// failure, at most 60 s. A failing discovery fails every pass, so each
	// delay is the sum of all earlier ones plus 5 ms: the retry after a
	// release comes at most as long after it as the failures had lasted
	// until then (the namespace's delete to the release), plus a pass.
	failureBaseDelay = 5 * time.Millisecond
	failureMaxDelay  = 60 * time.Second
	// finalizerEstimate is what the controller assumes for content that
	// stays because of a finalizer (finalizerEstimateSeconds, 15 s); it
	// looks again after estimate/2+1 s: 8 s. Nothing else wakes it: the
	// custom resource's removal is no event of the namespace's.
	finalizerEstimate = 15 * time.Second
	orphanRequeue     = 8 * time.Second // 15/2+1, in the controller's whole seconds
	// podGrace is the pod's terminationGracePeriodSeconds: the controller's
	// estimate while the pod is there; it looks again after grace/2+1 s.
	podGrace   = 10 * time.Second
	podRequeue = podGrace/2 + time.Second
	// termDelay is how long the pod's heartbeat beats on after SIGTERM
	// (manifests/pods/namespace-user.yaml) before it exits 0 by itself.
	termDelay = 4 * time.Second
	// podGoneEarliest and podGoneLatest bound the pod's DELETED after its
	// namespace's delete: the controller's 5 s delay, the kubelet's
	// reaction, the 4 s the workload takes, its exit, the kubelet's final
	// delete and its watch event. Earlier, something else ended it; later,
	// the kubelet killed it at its grace period's end instead.
	podGoneEarliest = controllerDelay + termDelay
	podGoneLatest   = controllerDelay + passAllowance + claims.KubeletSyncAllowance + termDelay + claims.ExitAllowance + claims.WatchAllowance
	// claimGoneWithin bounds the PVC protection controller's removal of its
	// finalizer after the pod that used the claim is gone: it acts on the
	// pod's deletion in the sync that event triggers, with no period
	// (pkg/controller/volume/pvcprotection).
	claimGoneWithin = claims.ControllerSyncAllowance + claims.WatchAllowance
	// podsFirstGoneWithin bounds the namespace's end after its pod's
	// DELETED: the controller's look after the pod's estimate (grace/2+1),
	// one more after the finalizer estimate should the claim still carry
	// its finalizer at that look (estimate/2+1), and a pass each.
	podsFirstGoneWithin = podRequeue + orphanRequeue + 2*passAllowance
)

// Claims decides lab:namespace's claims from the record.
func Claims(rec *evidence.Record) []claims.Claim {
	return []claims.Claim{
		apiHolds(rec), apiFrees(rec),
		orphanHolds(rec), orphanFrees(rec),
		claimHeld(rec), podsFirst(rec),
		claims.WatchOrder(rec, "namespace"),
	}
}

// hold is one namespace's deletion as the record has it.
type hold struct {
	ns string
	// afterGone counts events recorded after its DELETED: none can be;
	// early those that showed it being deleted before the delete.
	afterGone, early int
	deleted          *time.Time // the delete (the action's start, or the audit log's time by -by)
	release          *time.Time // the release action
	shown            *evidence.NamespaceEvent
	gone             *evidence.NamespaceEvent
	goneAt           time.Time
	rec              *evidence.Record

	// deletedOn and releaseOn are the two actions on the clock that read
	// them (evidence.ActionStamp), for a comparison with the audit log's.
	deletedOn, releaseOn evidence.Stamp
}

// holdOf reads the namespace's delete and release actions and its events:
// the first event after the delete whose conditions show the cause, and its
// DELETED.
func holdOf(rec *evidence.Record, ns string, releaseKind evidence.ActionKind, shows func(evidence.NamespaceEvent) bool) hold {
	h := hold{ns: ns, rec: rec}
	if a, ok := rec.Action(evidence.ActionDeleteNamespace, ns); ok && a.Succeeded() {
		t := a.StartedAt
		h.deleted, h.deletedOn = &t, rec.ActionStamp(a)
	}
	for _, a := range rec.Actions {
		if releaseKind != "" && a.Kind == releaseKind && a.Succeeded() {
			t := a.StartedAt
			h.release, h.releaseOn = &t, rec.ActionStamp(a)
			break
		}
	}
	for _, e := range rec.NamespaceEventsFor(ns) {
		e := e
		if h.gone != nil {
			h.afterGone++
			continue
		}
		if e.Type == "DELETED" {
			h.gone, h.goneAt = &e, e.ObservedAt
		}
		if h.deleted != nil && e.DeletionTimestamp != nil && e.ObservedAt.Before(*h.deleted) {
			h.early++
		}
		if h.shown == nil && e.Type != "DELETED" && h.deleted != nil && !e.ObservedAt.Before(*h.deleted) && shows(e) {
			h.shown = &e
		}
	}
	return h
}

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

// heldClaim decides that the namespace showed the cause within heldWithin
// of its delete and stayed until the release.
func (h hold) require(b *claims.Builder, cause string) bool {
	switch {
	case h.deleted == nil:
		b.Require(false, "no successful delete of namespace %s is recorded", h.ns)
		return false
	case h.shown == nil:
		b.Require(false, "after its delete, no watch event of namespace %s had conditions naming %s", h.ns, cause)
		return false
	case h.release == nil:
		b.Require(false, "no release of namespace %s is recorded", h.ns)
		return false
	}
	shownAfter := h.shown.ObservedAt.Sub(*h.deleted)
	b.Observe("conditions_after_delete_seconds", secs(shownAfter))
	b.Require(shownAfter >= controllerDelay, "namespace %s showed %s %s after its delete: the namespace controller takes a deleted namespace only %s after it", h.ns, cause, claims.InSeconds(shownAfter), claims.InSeconds(controllerDelay))
	b.Require(shownAfter <= heldWithin, "namespace %s showed %s %s after its delete, later than %s (the controller's 5 s delay and a pass)", h.ns, cause, claims.InSeconds(shownAfter), claims.InSeconds(heldWithin))
	b.Require(h.shown.ObservedAt.Before(*h.release), "namespace %s showed %s only after the release", h.ns, cause)
	b.Observe("held_until_release_seconds", secs(h.release.Sub(*h.deleted)))
	if h.gone != nil {
		b.Require(!h.goneAt.Before(*h.release), "namespace %s was gone (DELETED) %s before the release: nothing held it", h.ns, claims.InSeconds(h.release.Sub(h.goneAt)))
	}
	h.complete(b, *h.release)
	return true
}

// complete fails the claim when the namespace's watch was down between its
// delete and until (what it showed then may be lost), or recorded it after
// its DELETED.
func (h hold) complete(b *claims.Builder, until time.Time) {
	b.Require(h.afterGone == 0, "%d events of namespace %s recorded after its DELETED", h.afterGone, h.ns)
	b.Require(h.early == 0, "%d events of namespace %s showed it being deleted before the lab's delete", h.early, h.ns)
	if h.deleted == nil {
		return
	}
	for _, g := range h.rec.GapsOverlapping(evidence.WatchNamespaces, *h.deleted, until) {
		b.Require(false, "the namespaces watch was down from %s to %s (%s): namespace %s's conditions then are not known", g.From.Format("15:04:05.000"), g.To.Format("15:04:05.000"), g.Why, h.ns)
	}
}

// finalizedByController decides that the namespace went the right way: its
// own finalizer removed by the namespace controller (namespaces/finalize),
// after the release, and no person or script touched its finalizers.
func finalizedByController(b *claims.Builder, rec *evidence.Record, ns string, release evidence.Stamp) {
	if len(rec.Audit) == 0 {
		b.NotChecked(claims.NeedsAuditLog(rec, "who finalized the namespace"))
		return
	}
	b.Cite(auditFile)
	var finalized *evidence.AuditEvent
	for _, e := range rec.Audit {
		if e.Resource != "namespaces" || e.Name != ns {
			continue
		}
		if e.ByPerson() && !e.DryRun && (e.Subresource == "finalize" || (e.Subresource == "" && (e.Verb == "patch" || e.Verb == "update"))) {
			b.Require(false, "%s: a person or script changed the namespace's finalizers", e.Describe())
		}
		if e.Subresource == "finalize" && e.User == NamespaceController && e.Succeeded() && finalized == nil {
			e := e
			finalized = &e
		}
	}
	if !b.Require(finalized != nil, "the audit log has no finalize of namespace %s by the namespace controller", ns) {
		return
	}
	b.Observe("finalized_by", finalized.User)
	b.Require(b.CausedWithin(rec.Between(release, atServer(finalized.ReceivedAt)), claims.NoUpperBound, "the time from the release to the namespace controller's finalize"),
		"the namespace controller finalized namespace %s before the release", ns)
}

func apiHolds(rec *evidence.Record) claims.Claim {
	ns, group := APIServiceNamespace(rec.Namespace), APIGroup(rec.RunID)
	b := claims.NewBuilder(idAPIHolds, fmt.Sprintf(
		"Namespace %s, deleted while APIService %s had no endpoints behind it, reports NamespaceDeletionDiscoveryFailure=True naming group %s within %s of its delete (the namespace controller's 5 s delay and one pass), and stays until the APIService is deleted.",
		ns, APIServiceName(rec.RunID), group, claims.InSeconds(heldWithin)), namespacesFile, actionsFile)
	h := holdOf(rec, ns, "delete-apiservice", func(e evidence.NamespaceEvent) bool { return e.True(DiscoveryFailure, group) })
	if h.require(b, "NamespaceDeletionDiscoveryFailure naming "+group) {
		c, _ := h.shown.Condition(DiscoveryFailure)
		b.Observe("condition", c.Reason+": "+c.Message)
	}
	return b.Done()
}

func apiFrees(rec *evidence.Record) claims.Claim {
	ns := APIServiceNamespace(rec.Namespace)
	b := claims.NewBuilder(idAPIFrees, fmt.Sprintf(
		"Deleting the APIService releases namespace %s: it is gone no later after the release than the delete was before it (the namespace queue's exponential backoff: 5 ms doubling per failed pass, each delay the sum of the earlier ones, at most %s) plus %s for a pass, finalized by the namespace controller, with no one touching the namespace's finalizers.",
		ns, claims.InSeconds(failureMaxDelay), claims.InSeconds(passAllowance)), namespacesFile, actionsFile)
	h := holdOf(rec, ns, "delete-apiservice", func(evidence.NamespaceEvent) bool { return false })
	switch {
	case h.deleted == nil || h.release == nil:
		return b.Done()
	case h.gone == nil:
		b.Require(false, "namespace %s was never seen gone (no DELETED)", ns)
		return b.Done()
	}
	failing := h.release.Sub(*h.deleted)
	bound := min(failing, failureMaxDelay) + failureBaseDelay + passAllowance
	after := h.goneAt.Sub(*h.release)
	b.Observe("gone_after_release_seconds", secs(after))
	b.Observe("failing_before_release_seconds", secs(failing))
	b.Observe("bound_seconds", secs(bound))
	b.Require(after >= 0 && after <= bound, "namespace %s gone %s after the APIService's delete; the backoff allows %s", ns, claims.InSeconds(after), claims.InSeconds(bound))
	h.complete(b, h.goneAt)
	h.cleared(b, DiscoveryFailure)
	finalizedByController(b, rec, ns, h.releaseOn)
	return b.Done()
}

// cleared decides that the namespace controller wrote the cause's
// condition False after the release and before the namespace went: the
// pass that found it gone (it updates the conditions, then finalizes).
func (h hold) cleared(b *claims.Builder, typ string) {
	for _, e := range h.rec.NamespaceEventsFor(h.ns) {
		if e.Type == "DELETED" || e.ObservedAt.Before(*h.release) {
			continue
		}
		if c, ok := e.Condition(typ); ok && c.Status == "False" {
			b.Observe("cleared_before_gone_seconds", secs(h.goneAt.Sub(e.ObservedAt)))
			return
		}
	}
	b.Require(false, "namespace %s's %s never turned False after the release: the pass that found the cause gone is not in the record", h.ns, typ)
}

func orphanHolds(rec *evidence.Record) claims.Claim {
	ns, crd := OrphanNamespace(rec.Namespace), CRDName(rec.RunID)
	b := claims.NewBuilder(idOrphanHolds, fmt.Sprintf(
		"Namespace %s reports NamespaceContentRemaining=True naming %s and NamespaceFinalizersRemaining=True naming %s within %s of its delete; the namespace controller deleted %s/%s, and no one else (no controller) changed it until the lab's release.",
		ns, crd, Finalizer, claims.InSeconds(heldWithin), Plural, Resource), namespacesFile, actionsFile)
	h := holdOf(rec, ns, "remove-finalizer", func(e evidence.NamespaceEvent) bool {
		return e.True(ContentRemaining, crd+" has 1 resource instances") && e.True(FinalizersRemaining, Finalizer+" in 1 resource instances")
	})
	if !h.require(b, crd+" and finalizer "+Finalizer+" remaining") {
		return b.Done()
	}
	c, _ := h.shown.Condition(FinalizersRemaining)
	b.Observe("condition", c.Message)
	if len(rec.Audit) == 0 {
		b.NotChecked(claims.NeedsAuditLog(rec, "who deleted the custom resource"))
		return b.Done()
	}
	b.Cite(auditFile)
	var deletedBy string
	others := 0
	for _, e := range rec.Audit {
		// A server-side dry run (diagnose's, of the finalizer's removal) changes nothing.
		if e.Resource != Plural || e.Namespace != ns || e.DryRun || rec.Between(h.deletedOn, atServer(e.ReceivedAt)).D < 0 || rec.Between(h.releaseOn, atServer(e.ReceivedAt)).D >= 0 {
			continue
		}
		switch {
		case (e.Verb == "delete" || e.Verb == "deletecollection") && e.User == NamespaceController && e.Succeeded():
			if deletedBy == "" {
				deletedBy = e.Describe()
			}
		case e.Verb == "update" || e.Verb == "patch" || e.Verb == "delete":
			others++
			b.Require(false, "%s changed the custom resource before the release: a controller, or someone, acted", e.Describe())
		}
	}
	b.Observe("deleted_by", deletedBy)
	b.Observe("changes_by_others_before_release", others)
	b.Require(deletedBy != "", "the audit log has no delete of %s in %s by the namespace controller before the release", Plural, ns)
	return b.Done()
}

func orphanFrees(rec *evidence.Record) claims.Claim {
	ns := OrphanNamespace(rec.Namespace)
	b := claims.NewBuilder(idOrphanFrees, fmt.Sprintf(
		"Removing finalizer %s from %s/%s (by the run's actor, as its controller would) removes the object, and namespace %s is gone within %s of that (the controller looks again at most %s after a pass that found content held by a finalizer: its 15 s estimate halved, plus one; 5 s after a pass that changed the namespace's conditions; then a pass), finalized by the namespace controller.",
		Finalizer, Plural, Resource, ns, claims.InSeconds(orphanRequeue+passAllowance), claims.InSeconds(orphanRequeue)), namespacesFile, actionsFile)
	h := holdOf(rec, ns, "remove-finalizer", func(evidence.NamespaceEvent) bool { return false })
	switch {
	case h.release == nil:
		b.Require(false, "no removal of the finalizer is recorded")
		return b.Done()
	case h.gone == nil:
		b.Require(false, "namespace %s was never seen gone (no DELETED)", ns)
		return b.Done()
	}
	after := h.goneAt.Sub(*h.release)
	b.Observe("gone_after_release_seconds", secs(after))
	b.Require(after >= 0 && after <= orphanRequeue+passAllowance, "namespace %s gone %s after the release; the controller's look after the finalizer estimate and a pass allow %s", ns, claims.InSeconds(after), claims.InSeconds(orphanRequeue+passAllowance))
	h.complete(b, h.goneAt)
	h.cleared(b, FinalizersRemaining)
	if len(rec.Audit) > 0 {
		removed := ""
		for _, e := range rec.Audit {
			if e.Resource == Plural && e.Name == Resource && e.Namespace == ns && (e.Verb == "patch" || e.Verb == "update") && e.ByPerson() && e.Succeeded() && !e.DryRun {
				removed = e.Describe()
			}
		}
		b.Observe("released_by", removed)
		b.Require(removed != "", "the audit log has no patch of %s/%s by the run's actor", Plural, Resource)
	}
	finalizedByController(b, rec, ns, h.releaseOn)
	return b.Done()
}

// claimAtDelete is the claim as read right before its namespace's delete.
func claimAtDelete(rec *evidence.Record) (ClaimState, bool) {
	for _, n := range rec.Notes {
		if s, ok := strings.CutPrefix(n.Text, claimNote); ok {
			var c ClaimState
			if json.Unmarshal([]byte(s), &c) == nil && !c.At.IsZero() {
				return c, true
			}
		}
	}
	return ClaimState{}, false
}

// podGone is the pod's DELETED as the watch saw it.
func podGone(rec *evidence.Record) (time.Time, bool) {
	e, ok := rec.Deleted(Pod)
	return e.ObservedAt, ok
}

func claimHeld(rec *evidence.Record) claims.Claim {
	b := claims.NewBuilder(idClaimHeld, fmt.Sprintf(
		"Claim %s, deleted while pod %s uses it, stays (deletionTimestamp set, finalizer %s) while the pod exists: the PVC protection controller removes its finalizer only after the pod's DELETED, within %s of it.",
		Claim, Pod, PVCProtection, claims.InSeconds(claimGoneWithin)), actionsFile, eventsFile)
	c, ok := claimAtDelete(rec)
	if !ok {
		b.Require(false, "the record has no read of claim %s before its namespace's delete", Claim)
		return b.Done()
	}
	b.Require(c.DeletionTimestamp != nil, "claim %s had no deletionTimestamp at %s: its delete did not reach it", Claim, c.At.Format(time.RFC3339Nano))
	has := false
	for _, f := range c.Finalizers {
		has = has || f == PVCProtection
	}
	b.Require(has, "claim %s did not carry %s at %s (finalizers %v)", Claim, PVCProtection, c.At.Format(time.RFC3339Nano), c.Finalizers)
	gone, ok := podGone(rec)
	if !b.Require(ok, "pod %s was never seen DELETED", Pod) {
		return b.Done()
	}
	if a, ok := rec.Action("delete-pvc", Claim); ok {
		podsWatched(b, rec, a.StartedAt, gone)
	}
	if len(rec.Audit) == 0 {
		b.NotChecked(claims.NeedsAuditLog(rec, "when the PVC protection controller let the claim go"))
		return b.Done()
	}
	b.Cite(auditFile)
	var released *evidence.AuditEvent
	for _, e := range rec.Audit {
		if e.Resource == "persistentvolumeclaims" && e.Name == Claim && e.Namespace == rec.Namespace && e.Subresource == "" &&
			(e.Verb == "update" || e.Verb == "patch") && e.User == PVCController && e.Succeeded() {
			e := e
			released = &e
			break
		}
	}
	if !b.Require(released != nil, "the audit log has no update of claim %s by the PVC protection controller", Claim) {
		return b.Done()
	}
	// The audit log's times are the API server's, the DELETED event's the host's.
	iv := rec.Between(evidence.OnHost(gone), atServer(released.ReceivedAt))
	after := iv.D
	if a, ok := rec.Action("delete-pvc", Claim); ok {
		b.ObserveInterval("kept_after_its_delete_seconds", rec.Between(rec.ActionStamp(a), atServer(released.ReceivedAt)))
	}
	b.ObserveInterval("finalizer_removed_after_pod_gone_seconds", iv)
	b.Observe("finalizer_removed_by", released.User)
	what := "the time from the pod's DELETED to the PVC protection controller's release of the claim"
	b.Require(b.WithinClocks(iv, -claims.WatchAllowance, claims.NoUpperBound, what), "the PVC protection controller let claim %s go %s before the pod's DELETED was seen: while the pod existed", Claim, claims.InSeconds(-after))
	b.Require(b.WithinClocks(iv, claims.NoLowerBound, claimGoneWithin, what), "the PVC protection controller let claim %s go %s after the pod's DELETED; it acts in the sync the pod's deletion triggers (%s)", Claim, claims.InSeconds(after), claims.InSeconds(claimGoneWithin))
	return b.Done()
}

func podsFirst(rec *evidence.Record) claims.Claim {
	ns := rec.Namespace
	b := claims.NewBuilder(idPodsFirst, fmt.Sprintf(
		"Namespace %s's delete: the namespace controller deletes pod %s first and deletes the claims only after the pod is gone; while the pod is there its conditions name no remaining content (it returns before it counts content); the namespace is gone within %s of the pod's DELETED (its look after the pod's 10 s estimate, one after the 15 s finalizer estimate, a pass each), finalized by the namespace controller.",
		ns, Pod, claims.InSeconds(podsFirstGoneWithin)), namespacesFile, eventsFile, actionsFile)
	h := holdOf(rec, ns, "", func(evidence.NamespaceEvent) bool { return false })
	if !b.Require(h.deleted != nil, "no successful delete of namespace %s is recorded", ns) {
		return b.Done()
	}
	gone, ok := podGone(rec)
	if !b.Require(ok, "pod %s was never seen DELETED", Pod) {
		return b.Done()
	}
	podAfter := gone.Sub(*h.deleted)
	b.Observe("pod_gone_after_delete_seconds", secs(podAfter))
	b.Require(podAfter >= podGoneEarliest && podAfter <= podGoneLatest, "pod %s gone %s after its namespace's delete; the controller's 5 s delay, the kubelet and the workload's 4 s allow %s–%s", Pod, claims.InSeconds(podAfter), claims.InSeconds(podGoneEarliest), claims.InSeconds(podGoneLatest))
	podsWatched(b, rec, *h.deleted, gone)
	endedItself(b, rec, *h.deleted)
	named, written := 0, 0
	for _, e := range rec.NamespaceEventsFor(ns) {
		if e.ObservedAt.Before(*h.deleted) || !e.ObservedAt.Before(gone) {
			continue
		}
		if len(e.Conditions) > 0 {
			written++
			if written == 1 {
				at := e.ObservedAt.Sub(*h.deleted)
				b.Observe("conditions_after_delete_seconds", secs(at))
				b.Require(at >= controllerDelay, "namespace %s's conditions were written %s after its delete: the controller takes it only %s after", ns, claims.InSeconds(at), claims.InSeconds(controllerDelay))
			}
		}
		if e.True(ContentRemaining) || e.True(FinalizersRemaining) {
			named++
			c, _ := e.Condition(ContentRemaining)
			b.Require(false, "at %s, with pod %s still there, namespace %s's conditions named remaining content: %s", e.ObservedAt.Format("15:04:05.000"), Pod, ns, c.Message)
		}
	}
	b.Observe("conditions_naming_content_while_pod_there", named)
	b.Observe("condition_writes_while_pod_there", written)
	b.Require(written > 0, "namespace %s's conditions were never written while pod %s was there: the controller's pass over it is not in the record", ns, Pod)
	h.complete(b, h.goneAt)
	if h.gone == nil {
		b.Require(false, "namespace %s was never seen gone (no DELETED)", ns)
	} else {
		after := h.goneAt.Sub(gone)
		b.Observe("namespace_gone_after_pod_seconds", secs(after))
		b.Require(after >= 0 && after <= podsFirstGoneWithin, "namespace %s gone %s after its pod; the controller's looks allow %s", ns, claims.InSeconds(after), claims.InSeconds(podsFirstGoneWithin))
	}
	if len(rec.Audit) == 0 {
		b.NotChecked(claims.NeedsAuditLog(rec, "when the namespace controller deleted the pod and the claim"))
		return b.Done()
	}
	b.Cite(auditFile)
	var podDelete, claimDelete *evidence.AuditEvent
	for _, e := range rec.Audit {
		if e.Namespace != ns || e.User != NamespaceController || (e.Verb != "delete" && e.Verb != "deletecollection") || !e.Succeeded() {
			continue
		}
		e := e
		switch {
		case e.Resource == "pods" && podDelete == nil:
			podDelete = &e
		case e.Resource == "persistentvolumeclaims" && claimDelete == nil:
			claimDelete = &e
		}
	}
	if b.Require(podDelete != nil, "the audit log has no delete of the pods by the namespace controller") {
		b.Observe("pod_deleted_by", podDelete.Describe())
	}
	if b.Require(claimDelete != nil, "the audit log has no delete of the claims by the namespace controller") {
		iv := rec.Between(evidence.OnHost(gone), atServer(claimDelete.ReceivedAt))
		b.ObserveInterval("claims_deleted_after_pod_gone_seconds", iv)
		b.Require(b.WithinClocks(iv, -claims.WatchAllowance, claims.NoUpperBound, "the time from pod "+Pod+"'s DELETED to the namespace controller's delete of the claims"),
			"the namespace controller deleted the claims at %s, before pod %s was gone", claimDelete.ReceivedAt.Format("15:04:05.000"), Pod)
	}
	if h.gone != nil {
		finalizedByController(b, rec, ns, evidence.OnHost(gone))
	}
	return b.Done()
}

// atServer is a time the API server read: an audit entry's.
func atServer(t time.Time) evidence.Stamp {
	return evidence.Stamp{Time: t, Clock: evidence.ClockAPIServer}
}

// podsWatched fails the claim when the pods watch was down between from
// and to: the pod's states and its DELETED may have been seen late.
func podsWatched(b *claims.Builder, rec *evidence.Record, from, to time.Time) {
	for _, g := range rec.GapsOverlapping(evidence.WatchPods, from, to) {
		b.Require(false, "the pods watch was down from %s to %s (%s): pod %s's end is not known to the moment", g.From.Format("15:04:05.000"), g.To.Format("15:04:05.000"), g.Why, Pod)
	}
}

// endedItself decides that the pod was running at its namespace's delete
// and that its container ended by itself, exit code 0 (the heartbeat's term
// delay, inside the grace period), as the last state before its DELETED:
// it held the claim for as long as it worked, not until a kill.
func endedItself(b *claims.Builder, rec *evidence.Record, deleted time.Time) {
	var before, last, marked, exited *evidence.PodEvent
	after := 0
	gone := false
	for _, e := range rec.EventsFor(Pod) {
		e := e
		switch {
		case gone:
			after++
			continue
		case e.Type == "DELETED":
			gone = true
			continue
		}
		if e.ObservedAt.Before(deleted) {
			before = &e
		}
		if marked == nil && e.DeletionTimestamp != nil && !e.ObservedAt.Before(deleted) {
			marked = &e
		}
		if c, ok := e.Container(""); exited == nil && ok && c.State == "terminated" {
			exited = &e
		}
		last = &e
	}
	b.Require(after == 0, "%d events of pod %s recorded after its DELETED", after, Pod)
	if !b.Require(before != nil && last != nil, "pod %s has no recorded state before its namespace's delete", Pod) {
		return
	}
	c, ok := before.Container("")
	b.Require(ok && c.State == "running", "pod %s's container was not running at its namespace's delete (%s)", Pod, c.State)
	b.Require(before.DeletionTimestamp == nil, "pod %s was already being deleted before its namespace's delete", Pod)
	if b.Require(marked != nil, "pod %s was never seen deleted (a deletionTimestamp) after its namespace's delete", Pod) {
		at := marked.ObservedAt.Sub(deleted)
		b.Observe("pod_deleted_after_namespace_delete_seconds", secs(at))
		b.Require(at >= controllerDelay && at <= controllerDelay+passAllowance, "the namespace controller deleted pod %s %s after the namespace's delete; its 5 s delay and a pass allow %s–%s", Pod, claims.InSeconds(at), claims.InSeconds(controllerDelay), claims.InSeconds(controllerDelay+passAllowance))
		g := marked.DeletionGracePeriodSeconds
		b.Require(g != nil && time.Duration(*g)*time.Second == podGrace, "pod %s was deleted with grace %v, not its own %s", Pod, g, claims.InSeconds(podGrace))
		if exited != nil {
			took := exited.ObservedAt.Sub(marked.ObservedAt)
			b.Observe("pod_exit_after_its_delete_seconds", secs(took))
			latest := termDelay + claims.KubeletSyncAllowance + claims.ExitAllowance + claims.WatchAllowance
			b.Require(took >= termDelay && took <= latest, "pod %s's container was seen terminated %s after its delete; the kubelet's SIGTERM and the workload's 4 s allow %s–%s", Pod, claims.InSeconds(took), claims.InSeconds(termDelay), claims.InSeconds(latest))
		}
	}
	c, ok = last.Container("")
	switch {
	case !ok || c.State != "terminated" || c.ExitCode == nil:
		b.Require(false, "pod %s's container's last state before its DELETED is %q, not terminated", Pod, c.State)
	default:
		b.Observe("pod_exit_code", *c.ExitCode)
		b.Require(*c.ExitCode == 0, "pod %s's container exited %d: it was killed, not ended by itself within its grace period", Pod, *c.ExitCode)
	}
}
