package claims

import (
	"reflect"
	"testing"
)

func TestDeletionTransitions(t *testing.T) {
	got := Strings(DeletionTransitions(finalizerOnKubelet().EventsFor("held")))
	want := []string{
		"deletionTimestamp=set", "deletionGracePeriodSeconds=30",
		"container/app=terminated(reason=Completed,exitCode=0)", "ready=False", "phase=Succeeded",
		"deletionGracePeriodSeconds=0",
		"finalizers=[]",
		"object=DELETED",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubelet sequence\n got %q\nwant %q", got, want)
	}

	old := Strings(DeletionTransitions(finalizerOnOldKwok().EventsFor("held")))
	wantOld := []string{"deletionTimestamp=set", "deletionGracePeriodSeconds=30", "finalizers=[]", "deletionGracePeriodSeconds=0", "object=DELETED"}
	if !reflect.DeepEqual(old, wantOld) {
		t.Fatalf("old kwok sequence\n got %q\nwant %q", old, wantOld)
	}
	i, differs := FirstDifference(DeletionTransitions(finalizerOnKubelet().EventsFor("held")), DeletionTransitions(finalizerOnOldKwok().EventsFor("held")))
	if !differs || i != 2 {
		t.Fatalf("first difference at %d (%v), want 2", i, differs)
	}
	if _, differs := FirstDifference(DeletionTransitions(finalizerOnKubelet().EventsFor("held")), DeletionTransitions(finalizerOnKubelet().EventsFor("held"))); differs {
		t.Fatal("a sequence differs from itself")
	}
}

func TestTransitionsGroupsByEventAndSkipsNoChange(t *testing.T) {
	rec := finalizerOnKubelet()
	events := rec.EventsFor("held")
	// A MODIFIED event that changes nothing deletion-relevant (e.g. a label) adds no transition.
	dup := append(append(events[:3:3], events[2]), events[3:]...)
	if !reflect.DeepEqual(Transitions(dup), Transitions(events)) {
		t.Fatal("a no-change event changed the sequence")
	}
	ts := Transitions(events)
	if ts[0].Event != 1 || ts[0].Field != FieldDeletionTimestamp || ts[0].Value != "unset" {
		t.Fatalf("first transition %+v", ts[0])
	}
	last := ts[len(ts)-1]
	if last.String() != "object=DELETED" || last.Event != len(events) {
		t.Fatalf("last transition %+v, %d events", last, len(events))
	}
}
