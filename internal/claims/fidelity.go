package claims

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Fidelity: is a pod's deletion on a kwok fake node the deletion a kubelet
// gives the same pod? Both are reduced to DeletionTransitions and compared
// transition by transition; the first difference says where they part.

// Difference is where two deletion sequences first part: Index (from 0) of
// the first transition that differs, and each side's transition there ("" when
// that side had already ended).
type Difference struct {
	Index     int    `json:"index"`
	Reference string `json:"reference"`
	Candidate string `json:"candidate"`
}

func (d Difference) String() string {
	return fmt.Sprintf("transition %d: %s vs %s", d.Index+1, orEnded(d.Reference), orEnded(d.Candidate))
}

func orEnded(s string) string {
	if s == "" {
		return "(sequence ended)"
	}
	return s
}

// Compare compares a candidate's transitions with a reference's, field by
// field; differs is false when they are the same.
func Compare(ref, cand []Transition) (d Difference, differs bool) {
	i, differs := FirstDifference(ref, cand)
	if !differs {
		return Difference{}, false
	}
	d.Index = i
	if i < len(ref) {
		d.Reference = ref[i].String()
	}
	if i < len(cand) {
		d.Candidate = cand[i].String()
	}
	return d, true
}

// Complete reports whether a deletion sequence was observed whole: it starts
// with deletionTimestamp=set and ends with object=DELETED.
func Complete(ts []Transition) bool {
	return len(ts) >= 2 && ts[0].String() == FieldDeletionTimestamp+"=set" && ts[len(ts)-1].String() == FieldObject+"=DELETED"
}

// IsTermination reports whether a transition shows the pod or a container
// terminated: a container state terminated(…) or phase Succeeded/Failed.
func IsTermination(t string) bool {
	field, value, _ := strings.Cut(t, "=")
	switch {
	case strings.HasPrefix(field, FieldContainer):
		return strings.HasPrefix(value, "terminated")
	case field == FieldPhase:
		return value == "Succeeded" || value == "Failed"
	}
	return false
}

// sequences observes and checks the whole deletion sequences of both pods.
func sequences(k *check, rec *evidence.Record, ref, cand string) (r, c []Transition, ok bool) {
	k.cite(eventsFile)
	r = DeletionTransitions(rec.EventsFor(ref))
	c = DeletionTransitions(rec.EventsFor(cand))
	k.observe("reference_pod", ref)
	k.observe("candidate_pod", cand)
	k.observe("reference_transitions", Strings(r))
	k.observe("candidate_transitions", Strings(c))
	okR := k.require(Complete(r), "the deletion of %s (the reference) was not observed whole, from deletionTimestamp=set to object=DELETED: %q", ref, Strings(r))
	okC := k.require(Complete(c), "the deletion of %s was not observed whole, from deletionTimestamp=set to object=DELETED: %q", cand, Strings(c))
	// Equal sequences show that no other transition came between: an absence,
	// so the pod watch must have been up through each pod's deletion.
	watched := true
	for _, pod := range []string{ref, cand} {
		if from, to, ok := deletionWindow(rec.EventsFor(pod)); ok {
			watched = k.watchedThroughout(rec, evidence.WatchPods, from, to) && watched
		}
	}
	return r, c, okR && okC && watched
}

// Fidelity names two pods that went through the same scenario: Reference on a
// real worker, Candidate on a kwok fake node.
type Fidelity struct {
	ID, Statement        string
	Reference, Candidate string
	// Requests, if set, are the kinds of the lab's requests on each pod
	// (its create, delete, force delete, finalizer removal): each pod must have had
	// the same ones, in the same order, each at the same place among its
	// transitions (after as many of them as on the other pod). Equal
	// sequences alone do not say the two pods went through the same
	// scenario: a deletion nobody requested, or a finalizer that went
	// before the lab removed it (at grace 0 the API server deletes as the
	// last finalizer goes: no transition shows it), gives the same ones.
	Requests []evidence.ActionKind
}

// requestPlaces lists the lab's requests of the kinds on the pod, each with
// the number of the pod's deletion transitions observed before it was sent
// (as Sequence in labs/kwok places them).
func requestPlaces(rec *evidence.Record, pod string, kinds []evidence.ActionKind) []string {
	events := rec.EventsFor(pod)
	var acts []evidence.Action
	for _, a := range rec.Actions {
		if a.Target == pod && slices.Contains(kinds, a.Kind) {
			acts = append(acts, a)
		}
	}
	// In the order they were sent: a delete sent before the create is
	// another scenario, whichever order the record lists them in.
	slices.SortStableFunc(acts, func(a, b evidence.Action) int { return a.StartedAt.Compare(b.StartedAt) })
	var out []string
	for _, a := range acts {
		n := 0
		for n < len(events) && events[n].ObservedAt.Before(a.StartedAt) {
			n++
		}
		out = append(out, fmt.Sprintf("%s after transition %d", a.Kind, len(DeletionTransitions(events[:n]))))
	}
	return out
}

// SameDeletion decides that the candidate's deletion went through exactly the
// reference's transitions (times, UIDs and resourceVersions aside), both
// observed from deletionTimestamp to DELETED.
func SameDeletion(rec *evidence.Record, f Fidelity) Claim {
	k := newCheck(f.ID, f.Statement)
	r, c, ok := sequences(k, rec, f.Reference, f.Candidate)
	if !ok {
		return k.done()
	}
	d, differs := Compare(r, c)
	if differs {
		k.observe("first_difference", d)
	} else {
		k.observe("first_difference", nil)
	}
	k.require(!differs, "%s departs from %s at %s (reference: %s, %s: %s)", f.Candidate, f.Reference, d, orEnded(d.Reference), f.Candidate, orEnded(d.Candidate))
	if len(f.Requests) > 0 {
		k.cite(actionsFile)
		rp, cp := requestPlaces(rec, f.Reference, f.Requests), requestPlaces(rec, f.Candidate, f.Requests)
		k.observe("reference_requests", rp)
		k.observe("candidate_requests", cp)
		k.require(slices.Equal(rp, cp), "the lab's requests on %s fell elsewhere among its transitions than on %s (the reference): %q, reference %q", f.Candidate, f.Reference, cp, rp)
	}
	return k.done()
}

// Stripped: a finalizer that the object loses to something other than the
// lab, after which the object is deleted — kwok ≤ v0.7's fast pod-delete.
type Stripped struct {
	ID, Statement  string
	Pod, Finalizer string
	// Delete is the action kind of the delete that sets it off ("delete").
	Delete evidence.ActionKind
	// Release is the action kind by which the lab removes finalizers; the lab
	// must not have done so before the object was DELETED.
	Release evidence.ActionKind
	// Want, if set, is the whole deletion sequence required (DeletionTransitions as strings).
	Want []string
}

// FinalizersStripped decides that the pod carried the finalizer when the lab
// deleted it, that a later event showed the object without it although the
// lab had not removed it, and that the object was then DELETED (and, with
// Want, that the deletion went exactly through Want).
func FinalizersStripped(rec *evidence.Record, s Stripped) Claim {
	k := newCheck(s.ID, s.Statement)
	del, ok := action(k, rec, s.Delete, s.Pod)
	if !ok {
		return k.done()
	}
	k.cite(eventsFile)
	seq := Strings(DeletionTransitions(rec.EventsFor(s.Pod)))
	k.observe("transitions", seq)
	before, ok := rec.Latest(s.Pod, del.StartedAt)
	if !k.require(ok && before.Type != "DELETED" && before.HasFinalizer(s.Finalizer), "pod %s did not carry finalizer %s when the %s request was sent", s.Pod, s.Finalizer, s.Delete) {
		return k.done()
	}
	stripped, ok := rec.FirstEvent(s.Pod, del.StartedAt, func(e evidence.PodEvent) bool {
		return e.Type != "DELETED" && !e.HasFinalizer(s.Finalizer)
	})
	if !k.require(ok, "no event after the %s request showed pod %s without finalizer %s: it was not stripped", s.Delete, s.Pod, s.Finalizer) {
		return k.done()
	}
	k.observeInterval("stripped_after_seconds", since(rec, del, stripped.ObservedAt))
	k.observe("stripped_event", fmt.Sprintf("%s rv=%s", stripped.Type, stripped.ResourceVersion))
	gone, ok := rec.Deleted(s.Pod)
	if !k.require(ok, "pod %s lost its finalizer but no DELETED event was observed", s.Pod) {
		return k.done()
	}
	k.observeInterval("deleted_after_seconds", since(rec, del, gone.ObservedAt))
	released := false
	if rel, ok := rec.Action(s.Release, s.Pod); ok {
		k.cite(actionsFile)
		released = rel.StartedAt.Before(gone.ObservedAt)
	}
	k.observe("lab_removed_finalizer_before_deleted", released)
	k.require(!released, "the lab itself removed the finalizers of %s before it was DELETED: the stripping is not kwok's", s.Pod)
	if s.Want != nil {
		k.observe("want_transitions", s.Want)
		k.require(slices.Equal(seq, s.Want), "the deletion of %s went %q, not the reported %q", s.Pod, seq, s.Want)
		// "Exactly these transitions" says no other came between: the pod watch must have been up.
		if from, to, ok := deletionWindow(rec.EventsFor(s.Pod)); ok {
			k.watchedThroughout(rec, evidence.WatchPods, from, to)
		}
	}
	return k.done()
}

// Collapsed: a delete that a kwok fake node plays by setting the grace period
// to 0 at once, without ever reporting the pod or a container terminated.
type Collapsed struct {
	ID, Statement string
	Pod           string
	// Reference is the same scenario's pod on a real worker: the candidate
	// must part from it exactly where the kubelet reports the termination.
	Reference string
	// Delete is the action kind of the ordinary delete; grace 0 must follow within Within.
	Delete evidence.ActionKind
	Within time.Duration
	// Finalizer, if set, must be kept at grace 0 and hold the object until
	// the lab's Release action.
	Finalizer string
	Release   evidence.ActionKind
	// Force, if set, is the action kind of the lab's force delete between
	// the two: the finalizer must hold the object through it.
	Force evidence.ActionKind
}

// GraceCollapsedUnterminated decides that after the delete the pod's
// deletionGracePeriodSeconds became 0 within Within, that no event before or
// with DELETED showed a container terminated or the phase Succeeded/Failed,
// that the object was DELETED (with a finalizer: only after the lab removed
// it), and that its sequence parts from the reference's where the reference
// shows the termination and the candidate shows deletionGracePeriodSeconds=0.
func GraceCollapsedUnterminated(rec *evidence.Record, c Collapsed) Claim {
	k := newCheck(c.ID, c.Statement)
	del, ok := action(k, rec, c.Delete, c.Pod)
	if !ok {
		return k.done()
	}
	k.cite(eventsFile)
	// The delete is the one that set the deletion off: the pod was there
	// when it was sent.
	if before, ok := rec.Latest(c.Pod, del.StartedAt); !k.require(ok && before.Type != "DELETED", "pod %s was not there when the %s request was sent", c.Pod, c.Delete) {
		return k.done()
	}
	zero, ok := rec.FirstEvent(c.Pod, del.StartedAt, func(e evidence.PodEvent) bool {
		return e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0
	})
	if !k.require(ok, "no event after the %s request showed pod %s with deletionGracePeriodSeconds 0", c.Delete, c.Pod) {
		return k.done()
	}
	after := since(rec, del, zero.ObservedAt)
	k.observeInterval("grace_zero_after_seconds", after)
	k.require(k.withinClocks(after, noLowerBound, c.Within, fmt.Sprintf("the time from the %s request to deletionGracePeriodSeconds 0", c.Delete)), "deletionGracePeriodSeconds became 0 %s after the %s request, more than %s", after.D.Round(time.Millisecond), c.Delete, c.Within)
	var shown []string
	for _, e := range rec.EventsFor(c.Pod) {
		if e.Terminal() {
			shown = append(shown, fmt.Sprintf("%s rv=%s phase %s", e.Type, e.ResourceVersion, e.Phase))
		}
		for _, cs := range e.Containers {
			if cs.State == "terminated" {
				shown = append(shown, fmt.Sprintf("%s rv=%s container %s terminated (exit %s, %s)", e.Type, e.ResourceVersion, cs.Name, exitString(cs.ExitCode), cs.Reason))
			}
		}
	}
	k.observe("terminated_shown", len(shown) > 0)
	k.require(len(shown) == 0, "pod %s was shown terminated: %s", c.Pod, strings.Join(shown, "; "))
	gone, ok := rec.Deleted(c.Pod)
	if !k.require(ok, "no DELETED event of pod %s was observed", c.Pod) {
		return k.done()
	}
	// "Never shown terminated" is an absence: the pod watch must have been up
	// from the pod's creation to its DELETED event.
	k.watchedThroughout(rec, evidence.WatchPods, existedFrom(rec, c.Pod), gone.ObservedAt)
	k.observeInterval("deleted_after_seconds", since(rec, del, gone.ObservedAt))
	if c.Finalizer != "" {
		k.require(zero.Type != "DELETED" && zero.HasFinalizer(c.Finalizer), "at deletionGracePeriodSeconds 0 pod %s no longer carried finalizer %s", c.Pod, c.Finalizer)
		if c.Force != "" {
			if force, ok := action(k, rec, c.Force, c.Pod); ok {
				k.require(gone.ObservedAt.After(force.StartedAt), "pod %s was DELETED at %s, before the lab's %s request at %s", c.Pod, stamp(gone.ObservedAt), c.Force, stamp(force.StartedAt))
			}
		}
		rel, ok := action(k, rec, c.Release, c.Pod)
		if ok {
			k.require(!gone.ObservedAt.Before(rel.StartedAt), "pod %s was DELETED at %s, before the lab removed finalizer %s at %s", c.Pod, stamp(gone.ObservedAt), c.Finalizer, stamp(rel.StartedAt))
			// A DELETED seen after the release may have come before it if the watch was down then.
			k.watchedThroughout(rec, evidence.WatchPods, rel.StartedAt, rel.FinishedAt)
		}
	}
	r, cand, ok := sequences(k, rec, c.Reference, c.Pod)
	if !ok {
		return k.done()
	}
	d, differs := Compare(r, cand)
	if !k.require(differs, "the deletion of %s is the same as the kubelet's (%s)", c.Pod, c.Reference) {
		return k.done()
	}
	k.observe("first_difference", d)
	k.require(IsTermination(d.Reference) && d.Candidate == FieldGracePeriod+"=0",
		"%s parts from %s at %s, not where the kubelet reports the termination and kwok sets deletionGracePeriodSeconds=0", c.Pod, c.Reference, d)
	return k.done()
}

// Played names the kwok stage set that must play each pod on a fake node.
type Played struct {
	ID, Statement string
	// Label is the pod label that picks the stage set (termlab.dev/stage-set).
	Label string
	// Pods maps each fake-node pod to the stage set it must be played by.
	Pods map[string]string
	// FakeNodePrefix is how fake node names begin (kwok-node-).
	FakeNodePrefix string
	// Installed maps each stage set present in the cluster to its Stage
	// objects, as the run recorded them (empty: not recorded); Evidence is
	// the file it was recorded in.
	Installed map[string][]string
	Evidence  string
}

// PlayedBy decides that each pod was created with its stage set's label, that
// the API object carried it (on every watch event: evidence.RecordedLabels), that the pod
// was bound to a fake node, and that the set's Stage objects were installed.
func PlayedBy(rec *evidence.Record, p Played) Claim {
	k := newCheck(p.ID, p.Statement)
	k.cite(actionsFile, eventsFile, p.Evidence)
	sets, nodes := map[string]string{}, map[string]string{}
	pods := make([]string, 0, len(p.Pods))
	for pod := range p.Pods {
		pods = append(pods, pod)
	}
	slices.Sort(pods)
	for _, pod := range pods {
		want := p.Pods[pod]
		create, ok := rec.Action(evidence.ActionCreate, pod)
		if !k.require(ok && create.Succeeded(), "no successful create of pod %s was recorded", pod) {
			continue
		}
		sent, err := labelsOfRequest(create.Request)
		if !k.require(err == nil, "reading the labels pod %s was created with: %v", pod, err) {
			continue
		}
		sets[pod] = sent[p.Label]
		k.require(sent[p.Label] == want, "pod %s was created with %s=%q, want %q", pod, p.Label, sent[p.Label], want)
		for _, e := range rec.EventsFor(pod) {
			if e.NodeName != "" && nodes[pod] == "" {
				nodes[pod] = e.NodeName
			}
			got, err := e.Labels, error(nil)
			if got == nil { // a record from before PodState kept labels
				if len(e.Object) == 0 {
					continue
				}
				got, err = labelsOfObject(e.Object)
			}
			if err == nil && got[p.Label] != want {
				k.require(false, "the API object of pod %s (%s rv=%s) carried %s=%q, want %q", pod, e.Type, e.ResourceVersion, p.Label, got[p.Label], want)
				break
			}
		}
		// "Kept the label" is an absence of another label: the pod watch must have been up while the pod existed.
		until := rec.EndedAt
		if gone, ok := rec.Deleted(pod); ok {
			until = gone.ObservedAt
		}
		k.watchedThroughout(rec, evidence.WatchPods, create.StartedAt, until)
		k.require(strings.HasPrefix(nodes[pod], p.FakeNodePrefix), "pod %s was bound to %q, not to a fake node (%s…)", pod, nodes[pod], p.FakeNodePrefix)
		k.require(len(p.Installed[want]) > 0, "no Stage object of set %s was recorded as installed", want)
	}
	k.observe("stage_set_by_pod", sets)
	k.observe("node_by_pod", nodes)
	if len(p.Installed) > 0 {
		k.observe("stages_by_set", p.Installed)
	}
	return k.done()
}

func labelsOfRequest(raw json.RawMessage) (map[string]string, error) {
	var req struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	if len(req.Body) == 0 {
		return nil, fmt.Errorf("the recorded request has no body")
	}
	return labelsOfObject(req.Body)
}

func labelsOfObject(raw json.RawMessage) (map[string]string, error) {
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	return obj.Metadata.Labels, nil
}
