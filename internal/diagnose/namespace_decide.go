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
// evidence. It never talks to the cluster.
func DecideNamespace(c NamespaceCollected) NamespaceReport {
	d := nsDecider{c: c}
	return d.decide()
}

type nsDecider struct {
	c        NamespaceCollected
	findings []Finding
	// removalRejected: a dry-run finalizer patch was refused by admission
	// (decided once, by dryRuns; the answer and advice read it).
	removalRejected bool
}

func (d *nsDecider) add(f Finding) { d.findings = append(d.findings, f) }

func (d *nsDecider) terminating() bool {
	return d.c.Namespace != nil && d.c.Namespace.DeletionTimestamp != nil
}

func (d *nsDecider) decide() NamespaceReport {
	c := d.c
	r := NamespaceReport{Namespace: c.Name, At: c.At}
	if c.Namespace == nil {
		r.Answer = fmt.Sprintf("Namespace %s does not exist: there is nothing left to delete.", c.Name)
		r.Advice = []string{"Nothing to do."}
		return r
	}
	r.Phase = string(c.Namespace.Status.Phase)
	d.deletion()
	d.conditions()
	d.nsFinalizers()
	d.discovery()
	d.apiServices()
	d.remaining()
	d.podsFirst()
	d.finalizers()
	d.dryRuns()
	d.pods()
	r.Findings = d.findings
	for _, t := range c.Types {
		if len(t.Objects) > 0 {
			if r.Remaining == nil {
				r.Remaining = map[string]int{}
			}
			r.Remaining[t.Resource] = len(t.Objects)
		}
	}
	for _, p := range c.Pods {
		if p.Err == "" {
			r.Pods = append(r.Pods, PodAnswer{Name: p.Name, Dir: PodDir(p.Name), Answer: p.Report.Answer})
		}
	}
	r.Answer = d.answer()
	r.Advice = d.advice()
	return r
}

func (d *nsDecider) deletion() {
	ns := d.c.Namespace
	ev := []string{NamespaceFile + ": metadata.deletionTimestamp, status.phase"}
	if ns.DeletionTimestamp == nil {
		d.add(Finding{ID: FindNSDeletion, Level: Info, Verdict: "not requested", Evidence: ev,
			Text: fmt.Sprintf("No deletion was requested: the namespace has no deletionTimestamp (phase %s).", ns.Status.Phase)})
		return
	}
	d.add(Finding{ID: FindNSDeletion, Level: Info, Verdict: "requested", Evidence: ev,
		Text: fmt.Sprintf("Deletion requested at %s, %s ago; phase %s. A namespace has no grace period: it goes once its content is gone and its finalizers are removed.",
			ns.DeletionTimestamp.UTC().Format(time.RFC3339), round(d.c.At.Sub(ns.DeletionTimestamp.Time)), ns.Status.Phase)})
}

func (d *nsDecider) conditions() {
	for _, cond := range d.c.Namespace.Status.Conditions {
		ev := []string{NamespaceFile + ": status.conditions[" + string(cond.Type) + "]"}
		if cond.Status != corev1.ConditionTrue {
			d.add(Finding{ID: FindNSCondition(cond.Type), Level: Info, Verdict: string(cond.Status), Evidence: ev,
				Text: fmt.Sprintf("%s is %s (%s).", cond.Type, cond.Status, cond.Reason)})
			continue
		}
		meaning := conditionMeaning[cond.Type]
		if meaning == "" {
			meaning = "a condition this diagnosis does not know"
		}
		d.add(Finding{ID: FindNSCondition(cond.Type), Level: Blocking, Verdict: "True", Evidence: ev,
			Text: fmt.Sprintf("%s (%s, since %s ago): %s. Its message: %s", cond.Type, cond.Reason,
				round(d.c.At.Sub(cond.LastTransitionTime.Time)), meaning, cond.Message)})
	}
}

func (d *nsDecider) nsFinalizers() {
	ns := d.c.Namespace
	var spec []string
	for _, f := range ns.Spec.Finalizers {
		spec = append(spec, string(f))
	}
	text := "spec.finalizers: none"
	if len(spec) > 0 {
		text = "spec.finalizers: " + strings.Join(spec, ", ")
	}
	text += "; metadata.finalizers: "
	if len(ns.Finalizers) == 0 {
		text += "none."
	} else {
		text += strings.Join(ns.Finalizers, ", ") + "."
	}
	if has(spec, string(corev1.FinalizerKubernetes)) {
		text += " The namespace controller removes kubernetes itself (through the finalize subresource) once nothing is left in the namespace and discovery works."
	}
	level := Info
	if d.terminating() && len(spec)+len(ns.Finalizers) > 0 {
		level = Warning
	}
	d.add(Finding{ID: FindNSFinalizers, Level: level, Verdict: fmt.Sprintf("%d", len(spec)+len(ns.Finalizers)), Text: text,
		Evidence: []string{NamespaceFile + ": spec.finalizers, metadata.finalizers, metadata.managedFields"}})
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *nsDecider) discovery() {
	dc := d.c.Discovery
	ev := []string{DiscoveryFile}
	switch {
	case dc.Err != "":
		d.add(Finding{ID: FindDiscovery, Level: NotChecked, Verdict: "not checked", Evidence: ev,
			Text: "Discovery of the namespaced types failed, so what remains could not be listed: " + dc.Err + "."})
	case len(dc.Failed) > 0:
		var parts []string
		for _, gv := range nsKeys(dc.Failed) {
			parts = append(parts, gv+" ("+dc.Failed[gv]+")")
		}
		d.add(Finding{ID: FindDiscovery, Level: Blocking, Verdict: "failed", Evidence: ev,
			Text: fmt.Sprintf("Discovery failed for %s. The namespace controller cannot list those types either, so it cannot know whether any of their objects remain and will not finish the deletion (NamespaceDeletionDiscoveryFailure); this diagnosis could not look into them. %d other types were listed.",
				strings.Join(parts, "; "), dc.Types)})
	default:
		d.add(Finding{ID: FindDiscovery, Level: Info, Verdict: "ok", Evidence: ev,
			Text: fmt.Sprintf("Discovery answered for every group: %d listable namespaced types.", dc.Types)})
	}
}

func nsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unavailable are the APIServices whose Available condition is not True.
func (d *nsDecider) unavailable() []APIServiceState {
	var out []APIServiceState
	for _, s := range d.c.APIServices {
		if s.Available != string(corev1.ConditionTrue) {
			out = append(out, s)
		}
	}
	return out
}

func (d *nsDecider) apiServices() {
	ev := []string{APIServicesFile}
	if d.c.APIServicesErr != "" {
		d.add(Finding{ID: FindAPIServices, Level: NotChecked, Verdict: "not checked", Evidence: ev,
			Text: "The APIServices could not be read: " + d.c.APIServicesErr + "."})
		return
	}
	bad := d.unavailable()
	if len(bad) == 0 {
		d.add(Finding{ID: FindAPIServices, Level: Info, Verdict: "available", Evidence: ev,
			Text: fmt.Sprintf("All %d APIServices are Available: no aggregated API blocks discovery.", len(d.c.APIServices))})
		return
	}
	for _, s := range bad {
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
		if _, failed := d.c.Discovery.Failed[s.Group+"/"+s.Version]; failed {
			text += " Discovery did fail for it here."
		}
		d.add(Finding{ID: FindAPIService(s.Name), Level: Blocking, Verdict: "unavailable", Evidence: ev, Text: text})
	}
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

func (d *nsDecider) remaining() {
	for _, t := range d.c.Types {
		id := FindRemaining(t.Resource)
		if t.ListErr != "" {
			d.add(Finding{ID: id, Level: NotChecked, Verdict: "not checked",
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
		case !d.terminating():
			d.add(Finding{ID: id, Level: Info, Verdict: "present", Evidence: ev, Text: text})
		case held > 0:
			d.add(Finding{ID: id, Level: Blocking, Verdict: "held", Evidence: ev,
				Text: text + fmt.Sprintf(" %d %s finalizers: the API server keeps each until its finalizers are removed.", held, carry)})
		default:
			d.add(Finding{ID: id, Level: Warning, Verdict: "no finalizer", Evidence: ev,
				Text: text + " None carries a finalizer: the namespace controller deletes them itself and they go once it has; if they stay, the namespace conditions say why (a failed deletion, a failed discovery)."})
		}
	}
}

// waitingOnPods are the remaining objects other than pods that have no
// deletionTimestamp while pods remain: the namespace controller deletes
// pods first and the rest only once every pod is gone (ordered namespace
// deletion), so those were never asked to go.
func (d *nsDecider) waitingOnPods() (pods []string, rest []string) {
	if !d.terminating() {
		return nil, nil
	}
	for _, t := range d.c.Types {
		for _, o := range t.Objects {
			switch {
			case t.GVR == podsGVR:
				pods = append(pods, o.Name)
			case o.DeletionTimestamp == nil:
				rest = append(rest, ObjectRef(t.Resource, o.Name))
			}
		}
	}
	if len(pods) == 0 {
		return nil, nil
	}
	return pods, rest
}

func (d *nsDecider) podsFirst() {
	pods, rest := d.waitingOnPods()
	if len(rest) == 0 {
		return
	}
	ev := []string{TypeFile("pods") + ": metadata.name"}
	for _, t := range d.c.Types {
		if t.GVR != podsGVR && len(t.Objects) > 0 {
			ev = append(ev, TypeFile(t.Resource)+": metadata.deletionTimestamp")
		}
	}
	d.add(Finding{ID: FindNSOrdered, Level: Blocking, Verdict: "waiting on pods", Evidence: ev,
		Text: fmt.Sprintf("%s %s no deletionTimestamp though the namespace's deletion was requested %s ago, while pods remain (%s): the namespace controller deletes pods first and deletes the rest only once every pod is gone (ordered namespace deletion). Until then the namespace conditions may say all content was removed; the pods hold everything.",
			firstOf(rest, 5), map[bool]string{true: "has", false: "have"}[len(rest) == 1], round(d.c.At.Sub(d.c.Namespace.DeletionTimestamp.Time)), strings.Join(pods, ", "))})
}

// holder is one finalizer and every object it is on.
type holder struct {
	finalizer string
	refs      []string
	managers  []string
	files     []string
}

// holders groups the finalizers of the remaining objects and of the
// namespace itself (metadata.finalizers), in the order first seen.
func (d *nsDecider) holders() []*holder {
	var out []*holder
	by := map[string]*holder{}
	add := func(f, ref, manager, file string) {
		h := by[f]
		if h == nil {
			h = &holder{finalizer: f}
			by[f] = h
			out = append(out, h)
		}
		h.refs = append(h.refs, ref)
		if manager != "" && !has(h.managers, manager) {
			h.managers = append(h.managers, manager)
		}
		if !has(h.files, file) {
			h.files = append(h.files, file)
		}
	}
	for _, t := range d.c.Types {
		for _, o := range t.Objects {
			for _, f := range o.Finalizers {
				add(f, ObjectRef(t.Resource, o.Name), o.Managers[f], TypeFile(t.Resource))
			}
		}
	}
	ns := d.c.Namespace
	for _, f := range ns.Finalizers {
		add(f, "namespace/"+ns.Name, ManagerOf(ns.ManagedFields, f), NamespaceFile)
	}
	return out
}

func (d *nsDecider) managerOf(h *holder) string {
	if m := d.c.Controllers[h.finalizer].Manager; m != "" {
		return m
	}
	if len(h.managers) > 0 {
		return h.managers[0]
	}
	return ""
}

func (d *nsDecider) finalizers() {
	for _, h := range d.holders() {
		ctl := d.c.Controllers[h.finalizer]
		who := "no managedFields entry names who added it"
		if m := d.managerOf(h); m != "" {
			who = "added by " + strings.Join(append([]string{m}, without(h.managers, m)...), ", ") + " (managedFields manager)"
		}
		text := fmt.Sprintf("Finalizer %s is on %s, %s. ", h.finalizer, strings.Join(h.refs, ", "), who) + ctl.Sentence()
		if h.finalizer == PVCProtection {
			text += " " + d.claimsInUse()
		}
		verdict, level := "set", Info
		if d.terminating() {
			verdict, level = "holds the namespace", Blocking
		}
		var ev []string
		for _, f := range h.files {
			ev = append(ev, f+": metadata.finalizers, metadata.managedFields")
		}
		d.add(Finding{ID: FindFinalizer(h.finalizer), Level: level, Verdict: verdict, Text: text, Evidence: ev})
	}
}

// claimsInUse says which pods keep the protected claims: the PVC
// protection controller removes its finalizer only once none uses a claim.
func (d *nsDecider) claimsInUse() string {
	c := d.c
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

func (d *nsDecider) dryRuns() {
	if len(d.c.DryRuns) == 0 {
		return
	}
	var accepted, rejected, unchecked []string
	for _, ref := range nsKeys(d.c.DryRuns) {
		dr := d.c.DryRuns[ref]
		switch dryRunStateOf(dr, true) {
		case dryRunSkipped:
			unchecked = append(unchecked, ref+" ("+dr.Skipped+")")
		case dryRunForbidden:
			unchecked = append(unchecked, ref+" (these credentials may not patch it: "+dr.Err+")")
		case dryRunAccepted:
			accepted = append(accepted, ref)
		default:
			rejected = append(rejected, fmt.Sprintf("%s by %s (HTTP %d: %s)", ref, RejectedBy(dr), dr.Code, dr.Err))
		}
	}
	d.removalRejected = len(rejected) > 0
	ev := []string{NSDryRunFile}
	var parts []string
	if len(accepted) > 0 {
		parts = append(parts, "accepted for "+strings.Join(accepted, ", "))
	}
	if len(rejected) > 0 {
		parts = append(parts, "rejected for "+strings.Join(rejected, "; "))
	}
	if len(unchecked) > 0 {
		parts = append(parts, "not checked for "+strings.Join(unchecked, "; "))
	}
	text := fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s, dryRun=All) was %s.", FinalizersPatch, strings.Join(parts, "; "))
	switch {
	case len(rejected) > 0:
		d.add(Finding{ID: FindDryRun, Level: Blocking, Verdict: "rejected", Evidence: ev, Text: text})
	case len(accepted) > 0:
		d.add(Finding{ID: FindDryRun, Level: Info, Verdict: "accepted", Evidence: ev, Text: text})
	default:
		d.add(Finding{ID: FindDryRun, Level: NotChecked, Verdict: "not checked", Evidence: ev, Text: text})
	}
}

func (d *nsDecider) pods() {
	for _, p := range d.c.Pods {
		if p.Err != "" {
			d.add(Finding{ID: FindPod(p.Name), Level: NotChecked, Verdict: "not checked",
				Text: fmt.Sprintf("Pod %s could not be diagnosed: %s.", p.Name, p.Err)})
			continue
		}
		level := Info
		for _, f := range p.Report.Findings {
			if f.Level == Blocking {
				level = Blocking
			}
		}
		verdict := "diagnosed"
		if level == Blocking {
			verdict = "held"
		}
		d.add(Finding{ID: FindPod(p.Name), Level: level, Verdict: verdict, Evidence: []string{PodDir(p.Name) + "/" + MarkdownFile},
			Text: p.Report.Answer})
	}
	if d.c.PodsSkipped > 0 {
		d.add(Finding{ID: FindPodsSkipped, Level: NotChecked, Verdict: "not checked",
			Text: fmt.Sprintf("%d more pods remain and were not diagnosed one by one (at most %d are).", d.c.PodsSkipped, maxPods)})
	}
}

// answer is the one paragraph that opens the report.
func (d *nsDecider) answer() string {
	c := d.c
	ns := c.Namespace
	var s []string
	total, held := 0, 0
	for _, t := range c.Types {
		total += len(t.Objects)
		for _, o := range t.Objects {
			if len(o.Finalizers) > 0 {
				held++
			}
		}
	}
	if !d.terminating() {
		s = append(s, fmt.Sprintf("Namespace %s is not being deleted (phase %s, no deletionTimestamp); it holds %s, %d of them with finalizers.", ns.Name, ns.Status.Phase, count(total, "object", "objects"), held))
		for _, a := range d.unavailable() {
			s = append(s, fmt.Sprintf("APIService %s is unavailable (%s): a deletion of this namespace would stop at discovery until it is fixed.", a.Name, a.Reason))
		}
		return strings.Join(s, " ")
	}
	head := fmt.Sprintf("Namespace %s is Terminating for %s", ns.Name, round(c.At.Sub(ns.DeletionTimestamp.Time)))
	// Each type's objects grouped by their first finalizer ("" for none).
	type part struct {
		text      string
		pod, held bool
		n         int
		resource  string
	}
	var parts []part
	for _, t := range c.Types {
		if len(t.Objects) == 0 {
			continue
		}
		byF := map[string][]RemainingObject{}
		var order []string
		for _, o := range t.Objects {
			f := ""
			if len(o.Finalizers) > 0 {
				f = o.Finalizers[0]
			}
			if _, ok := byF[f]; !ok {
				order = append(order, f)
			}
			byF[f] = append(byF[f], o)
		}
		for _, f := range order {
			objs := byF[f]
			verb := "remains"
			if len(objs) > 1 {
				verb = "remain"
			}
			text := fmt.Sprintf("%d %s (%s) %s", len(objs), t.Resource, objectList(objs, false), verb)
			if f == "" {
				text += " without a finalizer"
			} else {
				ctl := c.Controllers[f]
				text += ", held by finalizer " + strings.Join(objs[0].Finalizers, ", ")
				if m := ctl.Manager; m != "" {
					text += ", added by " + m
				} else if m := objs[0].Managers[f]; m != "" {
					text += ", added by " + m
				}
				text += ctl.Clause()
			}
			parts = append(parts, part{text: text, pod: t.GVR == podsGVR, held: f != "", n: len(objs), resource: t.Resource})
		}
	}
	texts := func(keep func(part) bool) []string {
		var out []string
		for _, p := range parts {
			if keep(p) {
				out = append(out, p.text)
			}
		}
		return out
	}
	pods, rest := d.waitingOnPods()
	switch {
	case len(rest) > 0:
		// The pods hold everything: name them first, then what waits behind them.
		s = append(s, head+": "+strings.Join(texts(func(p part) bool { return p.pod }), "; ")+".")
		s = append(s, fmt.Sprintf("Nothing else is being deleted yet: the namespace controller deletes pods first and waits until every pod is gone, so pod %s holds everything.", strings.Join(pods, ", ")))
		behind := texts(func(p part) bool { return !p.pod && p.held })
		free, types := 0, []string{}
		for _, p := range parts {
			if !p.pod && !p.held {
				free += p.n
				types = append(types, p.resource)
			}
		}
		if free > 0 {
			behind = append(behind, fmt.Sprintf("%s without finalizers (%s)", count(free, "object", "objects"), strings.Join(types, ", ")))
		}
		s = append(s, "Waiting behind it: "+strings.Join(behind, "; ")+".")
	case len(parts) > 0:
		s = append(s, head+": "+strings.Join(texts(func(part) bool { return true }), "; ")+".")
	case len(c.Discovery.Failed) > 0 || c.Discovery.Err != "":
		s = append(s, head+": nothing remains among the types that could be listed.")
	default:
		s = append(s, head+": nothing remains in it that could be listed.")
	}
	for _, f := range ns.Finalizers {
		ctl := c.Controllers[f]
		s = append(s, fmt.Sprintf("The namespace itself carries finalizer %s (metadata.finalizers)%s.", f, ctl.Clause()))
	}
	if len(c.Discovery.Failed) > 0 {
		s = append(s, fmt.Sprintf("Discovery failed for %s: the namespace controller cannot know what is left of those types and keeps the namespace.", strings.Join(nsKeys(c.Discovery.Failed), ", ")))
	}
	for _, a := range d.unavailable() {
		s = append(s, fmt.Sprintf("APIService %s is unavailable (%s).", a.Name, a.Reason))
	}
	for _, cond := range ns.Status.Conditions {
		if cond.Status == corev1.ConditionTrue && (cond.Type == corev1.NamespaceDeletionContentFailure || cond.Type == corev1.NamespaceDeletionGVParsingFailure) {
			s = append(s, fmt.Sprintf("%s: %s.", cond.Type, strings.TrimSuffix(cond.Message, ".")))
		}
	}
	if d.removalRejected {
		s = append(s, "Removing a finalizer by hand would be rejected for some of them (server-side dry run).")
	}
	if len(c.ClaimUsers) > 0 || c.ClaimUsersErr != "" {
		s = append(s, d.claimsInUse())
	}
	for _, p := range c.Pods {
		if p.Err == "" {
			s = append(s, p.Report.Answer)
		}
	}
	if has(specFinalizers(ns), string(corev1.FinalizerKubernetes)) {
		if total > 0 || len(c.Discovery.Failed) > 0 {
			s = append(s, "The namespace's own kubernetes finalizer stays until that is resolved.")
		} else {
			s = append(s, "Only the namespace's own kubernetes finalizer is left, which the namespace controller removes on its next pass.")
		}
	}
	return strings.Join(s, " ")
}

func specFinalizers(ns *corev1.Namespace) []string {
	var out []string
	for _, f := range ns.Spec.Finalizers {
		out = append(out, string(f))
	}
	return out
}

// advice says what to do, safest first, with each step's risk.
func (d *nsDecider) advice() []string {
	c := d.c
	ns := c.Namespace
	var out []string
	for _, a := range d.unavailable() {
		step := fmt.Sprintf("Safe: fix APIService %s", a.Name)
		if a.Service != "" {
			step += fmt.Sprintf(" — its backend, service %s, must answer (`kubectl get apiservice %s -o yaml`, then that service's endpoints and pods)", a.Service, a.Name)
		}
		step += fmt.Sprintf(". If that extension was uninstalled for good, deleting the leftover registration (`kubectl delete apiservice %s`) lets discovery and the namespace deletion go on; risk: whatever that extension stored can then no longer be read or cleaned up through the API.", a.Name)
		out = append(out, step)
	}
	if !d.terminating() {
		if len(out) == 0 {
			out = append(out, "Nothing to do: the namespace is not being deleted.")
		}
		return out
	}
	hs := d.holders()
	for _, h := range hs {
		ctl := c.Controllers[h.finalizer]
		if h.finalizer == PVCProtection && ctl.Present == Present && c.ClaimUsersErr == "" {
			var users []string
			for _, claim := range nsKeys(c.ClaimUsers) {
				users = append(users, c.ClaimUsers[claim]...)
			}
			if len(users) > 0 {
				out = append(out, fmt.Sprintf("Safe: delete (or let finish) the pods that still use the claims: %s; the PVC protection controller then removes %s by itself. Do not remove %s by hand: the volume could be deleted under a running pod.", strings.Join(users, ", "), PVCProtection, PVCProtection))
				continue
			}
		}
		by := ""
		if m := d.managerOf(h); m != "" {
			by = " (added by " + m + ")"
		}
		risk, step := controllerStep(h.finalizer, by, ctl, ", and the namespace controller then finishes by itself")
		out = append(out, risk.say(step))
	}
	risky := 0
	for _, t := range c.Types {
		if t.GVR == podsGVR {
			continue // each pod's own advice says it, below
		}
		for _, o := range t.Objects {
			if len(o.Finalizers) == 0 {
				continue
			}
			if users := c.ClaimUsers[o.Name]; t.Resource == "persistentvolumeclaims" && len(users) > 0 && slices.Equal(o.Finalizers, []string{PVCProtection}) {
				continue // never by hand while a pod uses the claim: said above
			}
			risky++
			if risky > 5 {
				continue
			}
			out = append(out, fmt.Sprintf("Risky: remove the finalizers of %s %s by hand (`kubectl patch %s %s -n %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`). This drops %s at once, and the cleanup it guards is skipped for good.",
				t.Resource, o.Name, t.Resource, o.Name, ns.Name, strings.Join(o.Finalizers, ", ")))
		}
	}
	if risky > 5 {
		out = append(out, fmt.Sprintf("(%d more objects carry finalizers: the same patch, one object at a time, with the same risk.)", risky-5))
	}
	if d.removalRejected {
		out = append(out, "Some finalizer patches would be refused today (see finalizers.dry_run): ask the owner of that webhook or policy; do not disable it to get one namespace out.")
	}
	for _, p := range c.Pods {
		if p.Err == "" && len(p.Report.Advice) > 0 {
			out = append(out, fmt.Sprintf("Pod %s: %s (all of its advice: %s/%s)", p.Name, p.Report.Advice[0], PodDir(p.Name), MarkdownFile))
		}
	}
	left := 0
	for _, t := range c.Types {
		left += len(t.Objects)
	}
	if has(specFinalizers(ns), string(corev1.FinalizerKubernetes)) {
		never := fmt.Sprintf("Never remove the namespace's own kubernetes finalizer through the finalize subresource (`kubectl replace --raw /api/v1/namespaces/%s/finalize -f <namespace with spec.finalizers emptied>`) without knowing what is left", ns.Name)
		switch {
		case left > 0:
			never += fmt.Sprintf(": here %s. The namespace would vanish, but they stay in storage with no namespace to list them by, the cleanup their finalizers guard never runs, and they come back if a namespace named %s is created again.", count(left, "object remains", "objects remain"), ns.Name)
		case len(c.Discovery.Failed) > 0 || c.Discovery.Err != "":
			never += ": here discovery failed, so what is left of those types is unknown, to this diagnosis and to the namespace controller alike."
		default:
			never += ": here nothing is left that could be listed, so the namespace controller removes it itself on its next pass — wait for it instead."
		}
		out = append(out, never)
	}
	if left == 0 && len(c.Discovery.Failed) == 0 && c.Discovery.Err == "" && len(d.unavailable()) == 0 && len(ns.Finalizers) == 0 {
		out = append(out, "Wait: nothing holds the namespace any more; the namespace controller finishes on its next pass.")
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
