package claims

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Fidelity fixtures: one record holding several pods of the same scenario,
// as lab:kwok records them side by side. Each builder appends one pod's
// events and the lab's requests on it; the times are those of the real run.

// kubeletFinalizer: SIGTERM, exit 0 → Succeeded, the kubelet's grace-0 delete,
// force delete (no change), finalizer removed → DELETED (no MODIFIED: the
// API server deletes as it removes the last finalizer of a grace-0 object).
func kubeletFinalizer(rec *evidence.Record, pod string) {
	p := &podSeq{rec: rec, state: evidence.PodState{Name: pod, Finalizers: []string{fin}}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(1.2, "MODIFIED", running)
	act(rec, "delete", pod, 10)
	p.event(10.05, "MODIFIED", deleting(30))
	p.event(11.3, "MODIFIED", terminated(0, "Completed"))
	p.event(11.4, "MODIFIED", deleting(0))
	act(rec, "force-delete", pod, 15)
	act(rec, "remove-finalizers", pod, 18)
	p.event(18.1, "DELETED", nil)
}

// fastV08Finalizer: kwok v0.8's fast pod-delete: grace 0 at once, never
// terminated; the finalizer holds the object until the lab removes it.
func fastV08Finalizer(rec *evidence.Record, pod string) {
	p := &podSeq{rec: rec, state: evidence.PodState{Name: pod, Finalizers: []string{fin}}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(0.3, "MODIFIED", running)
	act(rec, "delete", pod, 10)
	p.event(10.05, "MODIFIED", deleting(30))
	p.event(10.15, "MODIFIED", deleting(0))
	act(rec, "force-delete", pod, 15)
	act(rec, "remove-finalizers", pod, 18)
	p.event(18.1, "DELETED", nil)
}

// fastV07Finalizer: kwok ≤ v0.7: finalizers emptied, grace 0, DELETED.
func fastV07Finalizer(rec *evidence.Record, pod string) {
	p := &podSeq{rec: rec, state: evidence.PodState{Name: pod, Finalizers: []string{fin}}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(0.3, "MODIFIED", running)
	act(rec, "delete", pod, 10)
	p.event(10.05, "MODIFIED", deleting(30))
	p.event(10.1, "MODIFIED", noFinalizers)
	p.event(10.15, "MODIFIED", deleting(0))
	p.event(10.2, "DELETED", nil)
}

var reported = []string{"deletionTimestamp=set", "deletionGracePeriodSeconds=30", "finalizers=[]", "deletionGracePeriodSeconds=0", "object=DELETED"}

func fidelityRecord(builders map[string]func(*evidence.Record, string)) *evidence.Record {
	rec := newRecord()
	for pod, b := range builders {
		b(rec, pod)
	}
	return rec
}

func TestCompare(t *testing.T) {
	ref := []Transition{{1, "a", "1"}, {1, "b", "2"}, {2, "object", "DELETED"}}
	for _, tc := range []struct {
		name    string
		cand    []Transition
		differs bool
		want    Difference
	}{
		{"same", ref, false, Difference{}},
		{"same fields, other event grouping", []Transition{{1, "a", "1"}, {2, "b", "2"}, {3, "object", "DELETED"}}, false, Difference{}},
		{"other value", []Transition{{1, "a", "1"}, {1, "b", "3"}, {2, "object", "DELETED"}}, true, Difference{1, "b=2", "b=3"}},
		{"shorter", ref[:1], true, Difference{1, "b=2", ""}},
		{"longer", append(append([]Transition(nil), ref...), Transition{3, "c", "x"}), true, Difference{3, "", "c=x"}},
		{"empty", nil, true, Difference{0, "a=1", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, differs := Compare(ref, tc.cand)
			if differs != tc.differs || d != tc.want {
				t.Fatalf("Compare = %+v, %v; want %+v, %v", d, differs, tc.want, tc.differs)
			}
		})
	}
	if s := (Difference{2, "x=1", ""}).String(); s != "transition 3: x=1 vs (sequence ended)" {
		t.Errorf("String() = %q", s)
	}
}

func TestCompleteAndIsTermination(t *testing.T) {
	full := DeletionTransitions(finalizerOnKubelet().EventsFor("held"))
	if !Complete(full) {
		t.Errorf("a whole sequence is not Complete: %q", Strings(full))
	}
	if Complete(full[:len(full)-1]) || Complete(full[1:]) || Complete(nil) {
		t.Error("a cut sequence is Complete")
	}
	for s, want := range map[string]bool{
		"container/app=terminated(reason=Completed,exitCode=0)": true,
		"container/app=running":                                 false,
		"phase=Succeeded":                                       true,
		"phase=Failed":                                          true,
		"phase=Running":                                         false,
		"deletionGracePeriodSeconds=0":                          false,
	} {
		if IsTermination(s) != want {
			t.Errorf("IsTermination(%q) = %v", s, !want)
		}
	}
}

func TestSameDeletion(t *testing.T) {
	spec := Fidelity{ID: "same", Reference: "real", Candidate: "fake"}
	for _, tc := range []struct {
		name   string
		fake   func(*evidence.Record, string)
		mutate func(*evidence.Record)
		want   Verdict
		reason string
	}{
		{"a kubelet-faithful fake node", kubeletFinalizer, nil, Pass, ""},
		{"kwok v0.8 never terminates", fastV08Finalizer, nil, Fail, "transition 3: container/app=terminated(reason=Completed,exitCode=0) vs deletionGracePeriodSeconds=0"},
		{"kwok v0.7 strips the finalizer", fastV07Finalizer, nil, Fail, "vs finalizers=[]"},
		{"exit code 137 instead of 0", func(rec *evidence.Record, pod string) {
			kubeletFinalizer(rec, pod)
			for i, e := range rec.PodEvents {
				if e.Name == pod && len(e.Containers) > 0 && e.Containers[0].State == "terminated" {
					rec.PodEvents[i].Containers = []evidence.ContainerState{{Name: "app", State: "terminated", Reason: "Error", ExitCode: i32(137)}}
					rec.PodEvents[i].Phase = "Failed"
				}
			}
		}, nil, Fail, "exitCode=137"},
		{"the fake pod never DELETED", func(rec *evidence.Record, pod string) {
			kubeletFinalizer(rec, pod)
			rec.PodEvents = rec.PodEvents[:len(rec.PodEvents)-1]
		}, nil, Fail, "not observed whole"},
		{"the reference was never deleted: nothing to compare with", kubeletFinalizer, func(rec *evidence.Record) {
			var keep []evidence.PodEvent
			for _, e := range rec.PodEvents {
				if !(e.Name == "real" && e.DeletionTimestamp != nil) && !(e.Name == "real" && e.Type == "DELETED") {
					keep = append(keep, e)
				}
			}
			rec.PodEvents = keep
		}, Fail, "(the reference) was not observed whole"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fidelityRecord(map[string]func(*evidence.Record, string){"real": kubeletFinalizer, "fake": tc.fake})
			if tc.mutate != nil {
				tc.mutate(rec)
			}
			want(t, SameDeletion(rec, spec), tc.want, tc.reason)
		})
	}
}

// Equal sequences with the lab's requests elsewhere are another scenario: a
// deletion the lab never requested, or an object gone before the lab removed
// its finalizer (at grace 0 no transition shows the finalizer go).
func TestSameDeletionPlacesTheRequests(t *testing.T) {
	spec := Fidelity{ID: "same", Reference: "real", Candidate: "fake",
		Requests: []evidence.ActionKind{evidence.ActionDelete, evidence.ActionForceDelete, evidence.ActionRemoveFinalizers}}
	for _, tc := range []struct {
		name   string
		mutate func(*evidence.Record)
		want   Verdict
		reason string
	}{
		{"the same requests at the same places", nil, Pass, ""},
		{"the fake pod's delete was not the lab's", func(rec *evidence.Record) {
			rec.Actions = slices.DeleteFunc(rec.Actions, func(a evidence.Action) bool { return a.Target == "fake" && a.Kind == evidence.ActionDelete })
		}, Fail, "fell elsewhere"},
		{"the fake pod was DELETED before the lab removed its finalizer", func(rec *evidence.Record) {
			for i, a := range rec.Actions {
				if a.Target == "fake" && a.Kind == evidence.ActionRemoveFinalizers {
					rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at(19), at(19.01)
				}
			}
		}, Fail, `"remove-finalizers after transition 7"`},
		{"the force delete on the fake pod came before its termination", func(rec *evidence.Record) {
			for i, a := range rec.Actions {
				if a.Target == "fake" && a.Kind == evidence.ActionForceDelete {
					rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at(10.5), at(10.51)
				}
			}
		}, Fail, "fell elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fidelityRecord(map[string]func(*evidence.Record, string){"real": kubeletFinalizer, "fake": kubeletFinalizer})
			if tc.mutate != nil {
				tc.mutate(rec)
			}
			c := SameDeletion(rec, spec)
			want(t, c, tc.want, tc.reason)
			if tc.want == Pass && !reflect.DeepEqual(c.Observed["candidate_requests"], []string{"delete after transition 0", "force-delete after transition 6", "remove-finalizers after transition 6"}) {
				t.Errorf("candidate_requests = %v", c.Observed["candidate_requests"])
			}
		})
	}
}

func TestFinalizersStripped(t *testing.T) {
	spec := Stripped{ID: "stripped", Pod: "fake", Finalizer: fin, Delete: "delete", Release: "remove-finalizers", Want: reported}
	for _, tc := range []struct {
		name   string
		build  func(*evidence.Record, string)
		spec   func(Stripped) Stripped
		want   Verdict
		reason string
	}{
		{"kwok ≤ v0.7: the reported sequence", fastV07Finalizer, nil, Pass, ""},
		{"without Want, any stripping counts", fastV07Finalizer, func(s Stripped) Stripped { s.Want = nil; return s }, Pass, ""},
		{"kwok v0.8 keeps the finalizer", fastV08Finalizer, nil, Fail, "was not stripped"},
		{"the kubelet keeps the finalizer", kubeletFinalizer, nil, Fail, "was not stripped"},
		{"the lab removed the finalizer itself", func(rec *evidence.Record, pod string) {
			fastV07Finalizer(rec, pod)
			act(rec, "remove-finalizers", pod, 10.08)
		}, nil, Fail, "the lab itself removed"},
		{"stripped but never DELETED", func(rec *evidence.Record, pod string) {
			fastV07Finalizer(rec, pod)
			rec.PodEvents = rec.PodEvents[:len(rec.PodEvents)-1]
		}, nil, Fail, "no DELETED event"},
		{"stripped, but not in the reported order", func(rec *evidence.Record, pod string) {
			p := &podSeq{rec: rec, state: evidence.PodState{Name: pod, Finalizers: []string{fin}}}
			p.event(0.1, "ADDED", running)
			act(rec, "delete", pod, 10)
			p.event(10.05, "MODIFIED", deleting(30))
			p.event(10.1, "MODIFIED", deleting(0))
			p.event(10.15, "MODIFIED", noFinalizers)
			p.event(10.2, "DELETED", nil)
		}, nil, Fail, "not the reported"},
		{"no finalizer to begin with", func(rec *evidence.Record, pod string) {
			fastV07Finalizer(rec, pod)
			for i := range rec.PodEvents {
				rec.PodEvents[i].Finalizers = nil
			}
		}, nil, Fail, "did not carry finalizer"},
		{"no delete request recorded", func(rec *evidence.Record, pod string) {
			fastV07Finalizer(rec, pod)
			rec.Actions = nil
		}, nil, Fail, "no delete request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecord()
			tc.build(rec, "fake")
			s := spec
			if tc.spec != nil {
				s = tc.spec(s)
			}
			want(t, FinalizersStripped(rec, s), tc.want, tc.reason)
		})
	}
}

func TestGraceCollapsedUnterminated(t *testing.T) {
	spec := Collapsed{ID: "collapsed", Pod: "fake", Reference: "real", Delete: "delete", Within: 5 * time.Second, Finalizer: fin, Release: "remove-finalizers"}
	for _, tc := range []struct {
		name   string
		fake   func(*evidence.Record, string)
		spec   func(Collapsed) Collapsed
		want   Verdict
		reason string
	}{
		{"kwok v0.8 with a finalizer", fastV08Finalizer, nil, Pass, ""},
		{"kwok v0.8 without a finalizer", func(rec *evidence.Record, pod string) {
			p := &podSeq{rec: rec, state: evidence.PodState{Name: pod}}
			p.event(0.1, "ADDED", running)
			act(rec, "delete", pod, 10)
			p.event(10.05, "MODIFIED", deleting(30))
			p.event(10.1, "MODIFIED", deleting(0))
			p.event(10.15, "DELETED", nil)
		}, func(c Collapsed) Collapsed { c.Finalizer, c.Release = "", ""; return c }, Pass, ""},
		{"a faithful fake node terminates the pod", kubeletFinalizer, nil, Fail, "was shown terminated"},
		{"grace 0 only after 8 s", func(rec *evidence.Record, pod string) {
			fastV08Finalizer(rec, pod)
			for i, e := range rec.PodEvents {
				if e.Name == pod && e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0 {
					rec.PodEvents[i].ObservedAt = at(18)
				}
			}
		}, nil, Fail, "more than 5s"},
		{"the finalizer did not hold the object", func(rec *evidence.Record, pod string) {
			fastV08Finalizer(rec, pod)
			for i, e := range rec.PodEvents {
				if e.Name == pod && e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = at(12)
				}
			}
		}, nil, Fail, "before the lab removed finalizer"},
		{"kwok ≤ v0.7 strips the finalizer on the way", fastV07Finalizer, nil, Fail, "no longer carried finalizer"},
		{"the finalizer held the object through the force delete", fastV08Finalizer, func(c Collapsed) Collapsed { c.Force = "force-delete"; return c }, Pass, ""},
		{"the force delete was never sent", func(rec *evidence.Record, pod string) {
			fastV08Finalizer(rec, pod)
			rec.Actions = slices.DeleteFunc(rec.Actions, func(a evidence.Action) bool { return a.Target == pod && a.Kind == "force-delete" })
		}, func(c Collapsed) Collapsed { c.Force = "force-delete"; return c }, Fail, "no force-delete request on fake"},
		{"DELETED before the force delete", func(rec *evidence.Record, pod string) {
			fastV08Finalizer(rec, pod)
			for i, a := range rec.Actions {
				if a.Target == pod && a.Kind == "remove-finalizers" {
					rec.Actions[i].StartedAt, rec.Actions[i].FinishedAt = at(12), at(12.01)
				}
			}
			for i, e := range rec.PodEvents {
				if e.Name == pod && e.Type == "DELETED" {
					rec.PodEvents[i].ObservedAt = at(12.1)
				}
			}
		}, func(c Collapsed) Collapsed { c.Force = "force-delete"; return c }, Fail, "before the lab's force-delete request"},
		{"never DELETED", func(rec *evidence.Record, pod string) {
			fastV08Finalizer(rec, pod)
			rec.PodEvents = rec.PodEvents[:len(rec.PodEvents)-1]
		}, nil, Fail, "no DELETED event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fidelityRecord(map[string]func(*evidence.Record, string){"real": kubeletFinalizer, "fake": tc.fake})
			s := spec
			if tc.spec != nil {
				s = tc.spec(s)
			}
			c := GraceCollapsedUnterminated(rec, s)
			want(t, c, tc.want, tc.reason)
			if tc.want == Pass {
				d := c.Observed["first_difference"].(Difference)
				if d.Index != 2 || d.Candidate != "deletionGracePeriodSeconds=0" {
					t.Errorf("first difference %+v", d)
				}
			}
		})
	}
}

func TestPlayedBy(t *testing.T) {
	create := func(rec *evidence.Record, pod, set string) {
		body, _ := json.Marshal(map[string]any{"verb": "POST", "body": map[string]any{"metadata": map[string]any{"name": pod, "labels": map[string]string{"termlab.dev/stage-set": set}}}})
		rec.Actions = append(rec.Actions, evidence.Action{Kind: "create", Target: pod, Request: body, StartedAt: at(0), FinishedAt: at(0.01)})
		rec.PodEvents = append(rec.PodEvents, evidence.PodEvent{ObservedAt: at(0.2), Type: "MODIFIED", PodState: evidence.PodState{Name: pod, NodeName: "kwok-node-0"},
			Object: json.RawMessage(`{"metadata":{"labels":{"termlab.dev/stage-set":"` + set + `"}}}`)})
	}
	spec := Played{ID: "played", Label: "termlab.dev/stage-set", Pods: map[string]string{"a": "faithful", "b": "fast"}, FakeNodePrefix: "kwok-node-",
		Installed: map[string][]string{"faithful": {"faithful-pod-stop"}, "fast": {"fast-pod-delete"}}, Evidence: "kwok/status.json"}
	rec := newRecord()
	create(rec, "a", "faithful")
	create(rec, "b", "fast")
	c := PlayedBy(rec, spec)
	want(t, c, Pass, "")
	if got := c.Observed["stage_set_by_pod"]; !reflect.DeepEqual(got, map[string]string{"a": "faithful", "b": "fast"}) {
		t.Errorf("stage_set_by_pod = %v", got)
	}

	wrong := newRecord()
	create(wrong, "a", "faithful")
	create(wrong, "b", "faithful")
	want(t, PlayedBy(wrong, spec), Fail, `pod b was created with termlab.dev/stage-set="faithful", want "fast"`)

	missing := spec
	missing.Installed = map[string][]string{"faithful": {"faithful-pod-stop"}}
	want(t, PlayedBy(rec, missing), Fail, "no Stage object of set fast")

	real := newRecord()
	create(real, "a", "faithful")
	create(real, "b", "fast")
	real.PodEvents[1].NodeName = "termlab-worker"
	want(t, PlayedBy(real, spec), Fail, `pod b was bound to "termlab-worker"`)

	relabelled := newRecord()
	create(relabelled, "a", "faithful")
	create(relabelled, "b", "fast")
	relabelled.PodEvents[1].Object = json.RawMessage(`{"metadata":{"labels":{"termlab.dev/stage-set":"faithful"}}}`)
	want(t, PlayedBy(relabelled, spec), Fail, "the API object of pod b")

}
