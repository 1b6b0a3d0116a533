package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NamespaceReport is what DecideNamespace returns: answer first, then
// findings, then advice, as for a pod.
type NamespaceReport struct {
	Namespace string    `json:"namespace"`
	At        time.Time `json:"at"`
	Phase     string    `json:"phase,omitempty"`
	Answer    string    `json:"answer"`
	Findings  []Finding `json:"findings"`
	Advice    []string  `json:"advice"`
	// Remaining is how many objects are left of each type (resource.group).
	Remaining map[string]int `json:"remaining,omitempty"`
	// Pods are the remaining pods' own answers, each with its folder.
	Pods []PodAnswer `json:"pods,omitempty"`
	// rules are the finding, answer and advice rules that spoke, in order
	// (for TestEveryNamespaceRuleIsExercised).
	rules []string
}

// PodAnswer is a remaining pod's answer and where its diagnosis is.
type PodAnswer struct {
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Answer string `json:"answer"`
}

// Finding returns the finding with the id.
func (r NamespaceReport) Finding(id string) (Finding, bool) { return r.asReport().Finding(id) }

// asReport is the namespace report in the pod report's shape (Pod empty),
// so the same Markdown body and callers that print an answer serve both.
func (r NamespaceReport) asReport() Report {
	return Report{At: r.At, Answer: r.Answer, Findings: r.Findings, Advice: r.Advice}
}

// Namespace finding ids; a remaining object's finalizer is FindFinalizer(name).
const (
	FindNSDeletion   = "namespace.deletion"
	FindNSFinalizers = "namespace.finalizers"
	FindDiscovery    = "discovery"
	FindAPIServices  = "apiservices"
	FindPodsSkipped  = "pods.skipped"
	FindNSOrdered    = "namespace.pods_first"
)

// FindNSCondition is the id of a namespace condition's finding.
func FindNSCondition(t corev1.NamespaceConditionType) string {
	return "namespace.condition." + string(t)
}

// FindAPIService is the id of an unavailable APIService's finding.
func FindAPIService(name string) string { return "apiservice." + name }

// FindRemaining is the id of a resource type's leftovers' finding.
func FindRemaining(resource string) string { return "remaining." + resource }

// FindPod is the id of a remaining pod's finding.
func FindPod(name string) string { return "pod." + name }

// What each namespace deletion condition means, when its status is True.
var conditionMeaning = map[corev1.NamespaceConditionType]string{
	corev1.NamespaceDeletionDiscoveryFailure: "the namespace controller could not discover every API group, so it cannot know the namespace is empty and keeps its finalizer",
	corev1.NamespaceDeletionGVParsingFailure: "the namespace controller could not parse a group/version it found",
	corev1.NamespaceDeletionContentFailure:   "deleting some of the content failed",
	corev1.NamespaceContentRemaining:         "objects are still there; the namespace controller waits for them to go",
	corev1.NamespaceFinalizersRemaining:      "objects left in the namespace carry finalizers; only whoever owns each finalizer may remove it",
}

// DecideNamespace decides the findings about a namespace from the collected
// evidence. It never talks to the cluster: the facts are decided once
// (nsFactsOf), then the findings, answer and advice from them, by the
// tables here and in namespace_rules.go.
func DecideNamespace(c NamespaceCollected) NamespaceReport {
	f := nsFactsOf(c)
	r := NamespaceReport{Namespace: c.Name, At: c.At}
	var found, answered, advised []string
	if f.exists() {
		r.Phase = string(f.ns.Status.Phase)
		r.Findings, found = findingsFrom(nsFindings, f)
	}
	for _, t := range c.Types {
		if len(t.Objects) > 0 {
			if r.Remaining == nil {
				r.Remaining = map[string]int{}
			}
			r.Remaining[t.Resource] = len(t.Objects)
		}
	}
	for _, p := range f.pods {
		r.Pods = append(r.Pods, PodAnswer{Name: p.Name, Dir: PodDir(p.Name), Answer: p.Report.Answer})
	}
	r.Answer, answered = nsAnswerOf(f, r.Findings)
	r.Advice, advised = stepsFrom(nsAdvice, f)
	r.rules = slices.Concat(found, answered, advised)
	return r
}

// nsFindings is the order of a namespace's findings (the namespace exists).
var nsFindings = []findingStep[*nsFacts]{
	{rules: nsDeletionRules},
	{each: conditionFindings, name: "conditions"},
	{rules: nsFinalizerRules},
	{rules: discoveryRules},
	{rules: apiServicesRules},
	{each: unavailableFindings, name: "apiservices-unavailable"},
	{each: remainingFindings, name: "remaining"},
	{rules: podsFirstRules},
	{each: holderFindings, name: "finalizers"},
	{rules: nsDryRunRules},
	{each: podFindingsOf, name: "pods"},
	{rules: podsSkippedRules},
}

func (f *nsFacts) notTerminating() bool { return !f.terminating }
func nsAlways(*nsFacts) bool            { return true }

var nsDeletionEvidence = []string{NamespaceFile + ": metadata.deletionTimestamp, status.phase"}

var nsDeletionRules = []findingRule[*nsFacts]{
	{id: FindNSDeletion, when: (*nsFacts).notTerminating, level: Info, verdict: verdictNotRequested, evidence: nsDeletionEvidence,
		text: func(f *nsFacts) string {
			return fmt.Sprintf("No deletion was requested: the namespace has no deletionTimestamp (phase %s).", f.ns.Status.Phase)
		}},
	{id: FindNSDeletion, when: nsAlways, level: Info, verdict: "requested", evidence: nsDeletionEvidence,
		text: func(f *nsFacts) string {
			return fmt.Sprintf("Deletion requested at %s, %s ago; phase %s. A namespace has no grace period: it goes once its content is gone and its finalizers are removed.",
				f.ns.DeletionTimestamp.UTC().Format(time.RFC3339), round(f.age), f.ns.Status.Phase)
		}},
}

func conditionFindings(f *nsFacts) []Finding {
	var out []Finding
	for _, cond := range f.ns.Status.Conditions {
		ev := []string{NamespaceFile + ": status.conditions[" + string(cond.Type) + "]"}
		if cond.Status != corev1.ConditionTrue {
			out = append(out, Finding{ID: FindNSCondition(cond.Type), Level: Info, Verdict: string(cond.Status), Evidence: ev,
				Text: fmt.Sprintf("%s is %s (%s).", cond.Type, cond.Status, cond.Reason)})
			continue
		}
		meaning := conditionMeaning[cond.Type]
		if meaning == "" {
			meaning = "a condition this diagnosis does not know"
		}
		out = append(out, Finding{ID: FindNSCondition(cond.Type), Level: Blocking, Verdict: "True", Evidence: ev,
			Text: fmt.Sprintf("%s (%s, since %s ago): %s. Its message: %s", cond.Type, cond.Reason,
				round(f.c.At.Sub(cond.LastTransitionTime.Time)), meaning, cond.Message)})
	}
	return out
}

var nsFinalizersEvidence = []string{NamespaceFile + ": spec.finalizers, metadata.finalizers, metadata.managedFields"}

// nsFinalizerRules: the namespace's own finalizers are a cause to weigh
// once its deletion was requested.
var nsFinalizerRules = []findingRule[*nsFacts]{
	{id: FindNSFinalizers, when: func(f *nsFacts) bool { return f.terminating && f.ownFinalizers() > 0 }, level: Warning,
		verdictOf: nsFinalizerCount, evidence: nsFinalizersEvidence, text: nsFinalizersText},
	{id: FindNSFinalizers, when: nsAlways, level: Info,
		verdictOf: nsFinalizerCount, evidence: nsFinalizersEvidence, text: nsFinalizersText},
}

func nsFinalizerCount(f *nsFacts) string { return fmt.Sprintf("%d", f.ownFinalizers()) }

func nsFinalizersText(f *nsFacts) string {
	text := "spec.finalizers: none"
	if len(f.spec) > 0 {
		text = "spec.finalizers: " + strings.Join(f.spec, ", ")
	}
	text += "; metadata.finalizers: "
	if len(f.ns.Finalizers) == 0 {
		text += "none."
	} else {
		text += strings.Join(f.ns.Finalizers, ", ") + "."
	}
	if f.kubernetesFinalizer {
		text += " The namespace controller removes kubernetes itself (through the finalize subresource) once nothing is left in the namespace and discovery works."
	}
	return text
}

func has(list []string, s string) bool { return slices.Contains(list, s) }

func discoveryIs(s discoveryState) func(*nsFacts) bool {
	return func(f *nsFacts) bool { return f.discovery == s }
}

var discoveryRules = []findingRule[*nsFacts]{
	{id: FindDiscovery, when: discoveryIs(discoveryFailed), level: NotChecked, verdict: "not checked", evidence: []string{DiscoveryFile},
		text: func(f *nsFacts) string {
			return "Discovery of the namespaced types failed, so what remains could not be listed: " + f.c.Discovery.Err + "."
		}},
	{id: FindDiscovery, when: discoveryIs(discoveryPartial), level: Blocking, verdict: "failed", evidence: []string{DiscoveryFile},
		text: func(f *nsFacts) string {
			dc := f.c.Discovery
			var parts []string
			for _, gv := range nsKeys(dc.Failed) {
				parts = append(parts, gv+" ("+dc.Failed[gv]+")")
			}
			return fmt.Sprintf("Discovery failed for %s. The namespace controller cannot list those types either, so it cannot know whether any of their objects remain and will not finish the deletion (NamespaceDeletionDiscoveryFailure); this diagnosis could not look into them. %d other types were listed.",
				strings.Join(parts, "; "), dc.Types)
		}},
	{id: FindDiscovery, when: discoveryIs(discoveryOK), level: Info, verdict: "ok", evidence: []string{DiscoveryFile},
		text: func(f *nsFacts) string {
			return fmt.Sprintf("Discovery answered for every group: %d listable namespaced types.", f.c.Discovery.Types)
		}},
}

func nsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// apiServicesRules: the APIServices as a whole; each unavailable one has
// its own finding (unavailableFindings).
var apiServicesRules = []findingRule[*nsFacts]{
	{id: FindAPIServices, when: func(f *nsFacts) bool { return f.c.APIServicesErr != "" }, level: NotChecked, verdict: "not checked", evidence: []string{APIServicesFile},
		text: func(f *nsFacts) string { return "The APIServices could not be read: " + f.c.APIServicesErr + "." }},
	{id: FindAPIServices, when: func(f *nsFacts) bool { return len(f.unavailable) == 0 }, level: Info, verdict: "available", evidence: []string{APIServicesFile},
		text: func(f *nsFacts) string {
			return fmt.Sprintf("All %d APIServices are Available: no aggregated API blocks discovery.", len(f.c.APIServices))
		}},
}

func unavailableFindings(f *nsFacts) []Finding {
	var out []Finding
	for _, s := range f.unavailable {
		backend := "a local API"
		if s.Service != "" {
			backend = "service " + s.Service
		}
		status := s.Available
		if status == "" {
			status = "no condition"
		}
		text := fmt.Sprintf("APIService %s (%s/%s, served by %s) is not Available (%s, %s: %s): discovery of %s/%s fails while it is down, in every namespace's deletion.",
			s.Name, s.Group, s.Version, backend, status, s.Reason, s.Message, s.Group, s.Version)
		if _, failed := f.c.Discovery.Failed[s.Group+"/"+s.Version]; failed {
			text += " Discovery did fail for it here."
		}
		out = append(out, Finding{ID: FindAPIService(s.Name), Level: Blocking, Verdict: "unavailable", Evidence: []string{APIServicesFile}, Text: text})
	}
	return out
}

// objectList names up to five objects, with their finalizers.
func objectList(objs []RemainingObject, withFinalizers bool) string {
	var parts []string
	for i, o := range objs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(objs)-5))
			break
		}
		s := o.Name
		if withFinalizers {
			if len(o.Finalizers) > 0 {
				s += " [" + strings.Join(o.Finalizers, ", ") + "]"
			} else {
				s += " [no finalizer]"
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// remainingFindings: each listed type's leftovers (or why it could not be
// listed). Without a finalizer, leftovers of a namespace being deleted are
// a warning: they should have gone.
func remainingFindings(f *nsFacts) []Finding {
	var out []Finding
	for _, t := range f.c.Types {
		id := FindRemaining(t.Resource)
		if t.ListErr != "" {
			out = append(out, Finding{ID: id, Level: NotChecked, Verdict: "not checked",
				Text: fmt.Sprintf("%s could not be listed: %s.", t.Resource, t.ListErr)})
			continue
		}
		held := 0
		for _, o := range t.Objects {
			if len(o.Finalizers) > 0 {
				held++
			}
		}
		ev := []string{TypeFile(t.Resource) + ": metadata.finalizers, metadata.deletionTimestamp"}
		verb, carry := "remain", "of them carry"
		if len(t.Objects) == 1 {
			verb = "remains"
		}
		if held == 1 {
			carry = "of them carries"
		}
		text := fmt.Sprintf("%d %s %s: %s.", len(t.Objects), t.Resource, verb, objectList(t.Objects, true))
		switch {
		case !f.terminating:
			out = append(out, Finding{ID: id, Level: Info, Verdict: "present", Evidence: ev, Text: text})
		case held > 0:
			out = append(out, Finding{ID: id, Level: Blocking, Verdict: "held", Evidence: ev,
				Text: text + fmt.Sprintf(" %d %s finalizers: the API server keeps each until its finalizers are removed.", held, carry)})
		default:
			out = append(out, Finding{ID: id, Level: Warning, Verdict: "no finalizer", Evidence: ev,
				Text: text + " None carries a finalizer: the namespace controller deletes them itself and they go once it has; if they stay, the namespace conditions say why (a failed deletion, a failed discovery)."})
		}
	}
	return out
}

var podsFirstRules = []findingRule[*nsFacts]{
	{id: FindNSOrdered, when: waitOnPods, level: Blocking, verdict: "waiting on pods", evidenceOf: podsFirstEvidence,
		text: func(f *nsFacts) string {
			return fmt.Sprintf("%s %s no deletionTimestamp though the namespace's deletion was requested %s ago, while pods remain (%s): the namespace controller deletes pods first and deletes the rest only once every pod is gone (ordered namespace deletion). Until then the namespace conditions may say all content was removed; the pods hold everything.",
				firstOf(f.waitingRest, 5), map[bool]string{true: "has", false: "have"}[len(f.waitingRest) == 1], round(f.age), strings.Join(f.waitingPods, ", "))
		}},
}

// podsFirstEvidence: the pods' names and every other type's deletionTimestamps.
func podsFirstEvidence(f *nsFacts) []string {
	ev := []string{TypeFile("pods") + ": metadata.name"}
	for _, t := range f.c.Types {
		if t.GVR != podsGVR && len(t.Objects) > 0 {
			ev = append(ev, TypeFile(t.Resource)+": metadata.deletionTimestamp")
		}
	}
	return ev
}

// waitOnPods: objects wait behind the remaining pods (ordered deletion).
func waitOnPods(f *nsFacts) bool { return len(f.waitingRest) > 0 }

func holderFindings(f *nsFacts) []Finding {
	var out []Finding
	for _, h := range f.holders {
		who := "no managedFields entry names who added it"
		if h.manager != "" {
			who = "added by " + strings.Join(append([]string{h.manager}, without(h.managers, h.manager)...), ", ") + " (managedFields manager)"
		}
		text := fmt.Sprintf("Finalizer %s is on %s, %s. ", h.finalizer, strings.Join(h.refs, ", "), who) + h.ctl.Sentence()
		if h.finalizer == PVCProtection {
			text += " " + claimsInUse(f.c)
		}
		verdict, level := "set", Info
		if f.terminating {
			verdict, level = "holds the namespace", Blocking
		}
		var ev []string
		for _, file := range h.files {
			ev = append(ev, file+": metadata.finalizers, metadata.managedFields")
		}
		out = append(out, Finding{ID: FindFinalizer(h.finalizer), Level: level, Verdict: verdict, Text: text, Evidence: ev})
	}
	return out
}

// claimsInUse says which pods keep the protected claims: the PVC
// protection controller removes its finalizer only once none uses a claim.
func claimsInUse(c NamespaceCollected) string {
	if c.ClaimUsersErr != "" {
		return "Which pods still use the claims was not checked: " + c.ClaimUsersErr + "."
	}
	var used, free []string
	for _, claim := range nsKeys(c.ClaimUsers) {
		if users := c.ClaimUsers[claim]; len(users) > 0 {
			used = append(used, fmt.Sprintf("persistentvolumeclaims/%s is in use by %s", claim, strings.Join(users, ", ")))
		} else {
			free = append(free, "persistentvolumeclaims/"+claim)
		}
	}
	var s []string
	if len(used) > 0 {
		s = append(s, "The PVC protection controller keeps it while a pod uses the claim: "+strings.Join(used, "; ")+"; it goes once those pods are gone.")
	}
	if len(free) > 0 {
		s = append(s, "No pod uses "+strings.Join(free, ", ")+" now, so the controller should remove it at its next look.")
	}
	return strings.Join(s, " ")
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

var nsDryRunEvidence = []string{NSDryRunFile}

// nsDryRunRules: one finding for every dry-run patch; a rejection anywhere
// decides it.
var nsDryRunRules = []findingRule[*nsFacts]{
	{id: FindDryRun, when: (*nsFacts).removalRejected, level: Blocking, verdict: "rejected", evidence: nsDryRunEvidence, text: dryRunText},
	{id: FindDryRun, when: func(f *nsFacts) bool { return len(f.dryRuns.accepted) > 0 }, level: Info, verdict: "accepted", evidence: nsDryRunEvidence, text: dryRunText},
	{id: FindDryRun, when: func(f *nsFacts) bool { return f.dryRuns.asked }, level: NotChecked, verdict: "not checked", evidence: nsDryRunEvidence, text: dryRunText},
}

func dryRunText(f *nsFacts) string {
	d := f.dryRuns
	var parts []string
	if len(d.accepted) > 0 {
		parts = append(parts, "accepted for "+strings.Join(d.accepted, ", "))
	}
	if len(d.rejected) > 0 {
		parts = append(parts, "rejected for "+strings.Join(d.rejected, "; "))
	}
	if len(d.unchecked) > 0 {
		parts = append(parts, "not checked for "+strings.Join(d.unchecked, "; "))
	}
	return fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s, dryRun=All) was %s.", FinalizersPatch, strings.Join(parts, "; "))
}

// podFindingsOf: each remaining pod's own answer, held when one of its
// findings blocks.
func podFindingsOf(f *nsFacts) []Finding {
	var out []Finding
	for _, p := range f.c.Pods {
		if p.Err != "" {
			out = append(out, Finding{ID: FindPod(p.Name), Level: NotChecked, Verdict: "not checked",
				Text: fmt.Sprintf("Pod %s could not be diagnosed: %s.", p.Name, p.Err)})
			continue
		}
		level, verdict := Info, "diagnosed"
		if slices.ContainsFunc(p.Report.Findings, func(fd Finding) bool { return fd.Level == Blocking }) {
			level, verdict = Blocking, "held"
		}
		out = append(out, Finding{ID: FindPod(p.Name), Level: level, Verdict: verdict, Evidence: []string{PodDir(p.Name) + "/" + MarkdownFile},
			Text: p.Report.Answer})
	}
	return out
}

var podsSkippedRules = []findingRule[*nsFacts]{
	{id: FindPodsSkipped, when: func(f *nsFacts) bool { return f.c.PodsSkipped > 0 }, level: NotChecked, verdict: "not checked",
		text: func(f *nsFacts) string {
			return fmt.Sprintf("%d more pods remain and were not diagnosed one by one (at most %d are).", f.c.PodsSkipped, maxPods)
		}},
}

func specFinalizers(ns *corev1.Namespace) []string {
	var out []string
	for _, f := range ns.Spec.Finalizers {
		out = append(out, string(f))
	}
	return out
}

// count is "1 object", "2 objects".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// firstOf joins up to n items and says how many more there are.
func firstOf(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
