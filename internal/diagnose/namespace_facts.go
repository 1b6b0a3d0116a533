package diagnose

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// nsFacts is what a namespace's findings, answer and advice are decided
// from, built once from NamespaceCollected by nsFactsOf: every state the
// rules in namespace_decide.go and namespace_rules.go branch on is a typed
// value here, and no rule reads another rule's words.
type nsFacts struct {
	c  NamespaceCollected
	ns *corev1.Namespace // nil: the namespace does not exist

	// terminating: the namespace has a deletionTimestamp, age ago.
	terminating bool
	age         time.Duration

	spec []string // spec.finalizers
	// kubernetesFinalizer: spec.finalizers holds kubernetes, the namespace
	// controller's own; otherSpec are the rest of spec.finalizers.
	kubernetesFinalizer bool
	otherSpec           []string

	discovery   discoveryState
	unavailable []APIServiceState // APIServices not Available (none when they could not be read)

	// total objects remain, held of them with finalizers.
	total, held int
	// groups are each type's remaining objects by first finalizer.
	groups []objectGroup
	// waitingPods are the remaining pods and waitingRest the other objects
	// with no deletionTimestamp behind them (ordered namespace deletion;
	// both empty unless objects wait on pods).
	waitingPods, waitingRest []string
	holders                  []*holder
	// handRemovals are the non-pod objects with finalizers that a person
	// might remove by hand (a claim a pod still uses is not one).
	handRemovals []handRemoval

	dryRuns nsDryRuns
	// failedConditions are the True conditions that say a deletion step
	// failed (content deletion, group/version parsing).
	failedConditions []corev1.NamespaceCondition
	// claimUsers are the pods still using protected claims, every claim's
	// in order; claimsLooked: the claims' users were looked up or failed to be.
	claimUsers   []string
	claimsLooked bool
	// pvcController is what was found of the PVC protection controller
	// when its finalizer holds something ("" when it holds nothing).
	pvcController Presence
	// pods are the remaining pods that were diagnosed.
	pods []PodDiagnosis
}

// discoveryState is what discovery said of the namespaced types.
type discoveryState int

const (
	discoveryOK      discoveryState = iota
	discoveryPartial                // some group/versions failed (Discovery.Failed)
	discoveryFailed                 // nothing was listed (Discovery.Err)
)

// objectGroup is a type's remaining objects that share a first finalizer
// ("" for none).
type objectGroup struct {
	resource  string
	pod       bool
	finalizer string
	objects   []RemainingObject
}

// holder is one finalizer and every object it is on.
type holder struct {
	finalizer string
	refs      []string
	managers  []string
	files     []string
	manager   string // who added it: the controller check's word, else the first managedFields one
	ctl       ControllerCheck
}

// handRemoval is an object whose finalizers a patch could drop.
type handRemoval struct {
	resource, name string
	finalizers     []string
}

// nsDryRuns are the dry-run finalizer patches, sorted by how they came out.
type nsDryRuns struct {
	asked                         bool
	accepted, rejected, unchecked []string
}

func nsFactsOf(c NamespaceCollected) *nsFacts {
	f := &nsFacts{c: c, ns: c.Namespace}
	if f.ns == nil {
		return f
	}
	ns := f.ns
	if ns.DeletionTimestamp != nil {
		f.terminating = true
		f.age = c.At.Sub(ns.DeletionTimestamp.Time)
	}
	for _, fz := range ns.Spec.Finalizers {
		f.spec = append(f.spec, string(fz))
		if fz == corev1.FinalizerKubernetes {
			f.kubernetesFinalizer = true
		} else {
			f.otherSpec = append(f.otherSpec, string(fz))
		}
	}
	switch {
	case c.Discovery.Err != "":
		f.discovery = discoveryFailed
	case len(c.Discovery.Failed) > 0:
		f.discovery = discoveryPartial
	}
	if c.APIServicesErr == "" {
		for _, s := range c.APIServices {
			if s.Available != string(corev1.ConditionTrue) {
				f.unavailable = append(f.unavailable, s)
			}
		}
	}
	for _, t := range c.Types {
		f.total += len(t.Objects)
		for _, o := range t.Objects {
			if len(o.Finalizers) > 0 {
				f.held++
			}
		}
		f.groups = append(f.groups, groupsOf(t)...)
	}
	f.waitingPods, f.waitingRest = waitingOnPods(f)
	f.holders = holdersOf(c)
	for _, h := range f.holders {
		if h.finalizer == PVCProtection {
			f.pvcController = h.ctl.Present
		}
	}
	f.handRemovals = handRemovalsOf(c)
	f.dryRuns = dryRunsOf(c.DryRuns)
	for _, cond := range ns.Status.Conditions {
		if cond.Status == corev1.ConditionTrue && (cond.Type == corev1.NamespaceDeletionContentFailure || cond.Type == corev1.NamespaceDeletionGVParsingFailure) {
			f.failedConditions = append(f.failedConditions, cond)
		}
	}
	f.claimsLooked = len(c.ClaimUsers) > 0 || c.ClaimUsersErr != ""
	for _, claim := range nsKeys(c.ClaimUsers) {
		f.claimUsers = append(f.claimUsers, c.ClaimUsers[claim]...)
	}
	for _, p := range c.Pods {
		if p.Err == "" {
			f.pods = append(f.pods, p)
		}
	}
	return f
}

// groupsOf groups a type's objects by their first finalizer, in the order
// first seen.
func groupsOf(t TypeRemains) []objectGroup {
	var out []objectGroup
	for _, o := range t.Objects {
		fz := ""
		if len(o.Finalizers) > 0 {
			fz = o.Finalizers[0]
		}
		i := slices.IndexFunc(out, func(g objectGroup) bool { return g.finalizer == fz })
		if i < 0 {
			out = append(out, objectGroup{resource: t.Resource, pod: t.GVR == podsGVR, finalizer: fz})
			i = len(out) - 1
		}
		out[i].objects = append(out[i].objects, o)
	}
	return out
}

// waitingOnPods are the remaining objects other than pods that have no
// deletionTimestamp while pods remain: the namespace controller deletes
// pods first and the rest only once every pod is gone (ordered namespace
// deletion), so those were never asked to go.
func waitingOnPods(f *nsFacts) (pods []string, rest []string) {
	if !f.terminating {
		return nil, nil
	}
	for _, t := range f.c.Types {
		for _, o := range t.Objects {
			switch {
			case t.GVR == podsGVR:
				pods = append(pods, o.Name)
			case o.DeletionTimestamp == nil:
				rest = append(rest, ObjectRef(t.Resource, o.Name))
			}
		}
	}
	if len(pods) == 0 || len(rest) == 0 {
		return nil, nil
	}
	return pods, rest
}

// holdersOf groups the finalizers of the remaining objects and of the
// namespace itself (metadata.finalizers), in the order first seen.
func holdersOf(c NamespaceCollected) []*holder {
	var out []*holder
	by := map[string]*holder{}
	add := func(fz, ref, manager, file string) {
		h := by[fz]
		if h == nil {
			h = &holder{finalizer: fz, ctl: c.Controllers[fz]}
			by[fz] = h
			out = append(out, h)
		}
		h.refs = append(h.refs, ref)
		if manager != "" && !slices.Contains(h.managers, manager) {
			h.managers = append(h.managers, manager)
		}
		if !slices.Contains(h.files, file) {
			h.files = append(h.files, file)
		}
	}
	for _, t := range c.Types {
		for _, o := range t.Objects {
			for _, fz := range o.Finalizers {
				add(fz, ObjectRef(t.Resource, o.Name), o.Managers[fz], TypeFile(t.Resource))
			}
		}
	}
	ns := c.Namespace
	for _, fz := range ns.Finalizers {
		add(fz, "namespace/"+ns.Name, ManagerOf(ns.ManagedFields, fz), NamespaceFile)
	}
	for _, h := range out {
		h.manager = h.ctl.Manager
		if h.manager == "" && len(h.managers) > 0 {
			h.manager = h.managers[0]
		}
	}
	return out
}

// pvcInUse: the PVC protection controller keeps this claim's finalizer
// while a pod uses it, so it is never one to remove by hand.
func pvcInUse(c NamespaceCollected, t TypeRemains, o RemainingObject) bool {
	return t.Resource == "persistentvolumeclaims" && len(c.ClaimUsers[o.Name]) > 0 && slices.Equal(o.Finalizers, []string{PVCProtection})
}

func handRemovalsOf(c NamespaceCollected) []handRemoval {
	var out []handRemoval
	for _, t := range c.Types {
		if t.GVR == podsGVR {
			continue // each pod's own advice says it
		}
		for _, o := range t.Objects {
			if len(o.Finalizers) > 0 && !pvcInUse(c, t, o) {
				out = append(out, handRemoval{resource: t.Resource, name: o.Name, finalizers: o.Finalizers})
			}
		}
	}
	return out
}

func dryRunsOf(runs map[string]DryRun) nsDryRuns {
	out := nsDryRuns{asked: len(runs) > 0}
	for _, ref := range nsKeys(runs) {
		dr := runs[ref]
		switch dryRunStateOf(dr, true) {
		case dryRunSkipped:
			out.unchecked = append(out.unchecked, ref+" ("+dr.Skipped+")")
		case dryRunForbidden:
			out.unchecked = append(out.unchecked, ref+" (these credentials may not patch it: "+dr.Err+")")
		case dryRunAccepted:
			out.accepted = append(out.accepted, ref)
		default:
			out.rejected = append(out.rejected, fmt.Sprintf("%s by %s (HTTP %d: %s)", ref, RejectedBy(dr), dr.Code, dr.Err))
		}
	}
	return out
}

// Facts derived from the ones above, named for what the rules ask.

func (f *nsFacts) exists() bool { return f.ns != nil }

// notDeleting: the namespace exists and no deletion was requested.
func (f *nsFacts) notDeleting() bool { return f.ns != nil && !f.terminating }

// removalRejected: a dry-run finalizer patch was refused by admission.
func (f *nsFacts) removalRejected() bool { return len(f.dryRuns.rejected) > 0 }

// discoveryIncomplete: what remains of some types is unknown.
func (f *nsFacts) discoveryIncomplete() bool { return f.discovery != discoveryOK }

// deletionFailed: the namespace controller's last pass says it failed to
// delete the content or to parse a group/version.
func (f *nsFacts) deletionFailed() bool { return len(f.failedConditions) > 0 }

// ownFinalizers counts spec.finalizers and metadata.finalizers.
func (f *nsFacts) ownFinalizers() int { return len(f.spec) + len(f.ns.Finalizers) }
