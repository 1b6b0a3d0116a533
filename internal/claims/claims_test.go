package claims

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

const fin = "lab.example.com/cleanup"

func want(t *testing.T, c Claim, v Verdict, reasonHas string) {
	t.Helper()
	if c.Verdict != v {
		t.Fatalf("%s: verdict %s (reason %q), want %s; observed %v", c.ID, c.Verdict, c.Reason, v, c.Observed)
	}
	if reasonHas != "" && !strings.Contains(c.Reason, reasonHas) {
		t.Fatalf("%s: reason %q does not mention %q", c.ID, c.Reason, reasonHas)
	}
	if v == Pass && len(c.Evidence) == 0 {
		t.Fatalf("%s passed without citing evidence", c.ID)
	}
}

func TestDeletionHeld(t *testing.T) {
	ordinary := Held{ID: "held", Pod: "held", Finalizer: fin, Delete: "delete", Release: "remove-finalizers", MinHold: 5 * time.Second}
	force := ordinary
	force.Delete, force.GracePeriod = "force-delete", i64(0)
	for _, tc := range []struct {
		name   string
		rec    func() *evidence.Record
		spec   Held
		want   Verdict
		reason string
	}{
		{"kubelet keeps the object after an ordinary delete", finalizerOnKubelet, ordinary, Pass, ""},
		{"kubelet keeps the object after a force delete (snapshot, no new event)", finalizerOnKubelet, force, Pass, ""},
		{"old kwok strips the finalizer and deletes", finalizerOnOldKwok, ordinary, Fail, "DELETED event arrived"},
		{"no delete request recorded", func() *evidence.Record { r := finalizerOnKubelet(); r.Actions = r.Actions[1:]; return r }, ordinary, Fail, "no delete request"},
		{"wrong grace period", finalizerOnKubelet, func() Held { h := force; h.GracePeriod = i64(30); return h }(), Fail, "want 30"},
		{"released sooner than the hold termlab states", finalizerOnKubelet, func() Held { h := force; h.MinHold = time.Minute; return h }(), NotChecked, "precondition not met"},
		{"nothing observed after the request", func() *evidence.Record {
			r := finalizerOnKubelet()
			r.PodEvents = r.PodEvents[:2]
			r.Snapshots = nil
			return r
		}, ordinary, Fail, "nothing was observed"},
		{"failed request", func() *evidence.Record { r := finalizerOnKubelet(); r.Actions[0].Error = "forbidden"; return r }, ordinary, Fail, "forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Statement = "s"
			want(t, DeletionHeld(tc.rec(), tc.spec), tc.want, tc.reason)
		})
	}
}

// The watch must show what the delete asks for within the bound: the
// request's update, or an event before it that already showed it (the
// kubelet's own grace-0 delete, as finalizerOnKubelet has it).
func TestDeletionHeldUpdateSeen(t *testing.T) {
	ordinary := Held{ID: "held", Statement: "s", Pod: "held", Finalizer: fin, Delete: "delete", Release: "remove-finalizers", MinHold: 5 * time.Second, UpdateSeenWithin: time.Second}
	force := ordinary
	force.Delete, force.GracePeriod = "force-delete", i64(0)

	c := DeletionHeld(finalizerOnKubelet(), ordinary)
	want(t, c, Pass, "")
	if c.Observed["update_seen_after_seconds"] != 0.05 {
		t.Fatalf("update_seen_after_seconds = %v, want 0.05", c.Observed["update_seen_after_seconds"])
	}
	c = DeletionHeld(finalizerOnKubelet(), force)
	want(t, c, Pass, "")
	if c.Observed["update_seen_before_request"] == nil {
		t.Fatalf("grace 0 was shown before the force delete; observed %v", c.Observed)
	}

	// The kubelet's grace-0 delete never seen by the watch: only the GET
	// after the force delete shows grace 0.
	gotByGetOnly := finalizerOnKubelet()
	gotByGetOnly.PodEvents = slices.DeleteFunc(gotByGetOnly.PodEvents, func(e evidence.PodEvent) bool {
		return e.DeletionGracePeriodSeconds != nil && *e.DeletionGracePeriodSeconds == 0 && e.Type != "DELETED"
	})
	want(t, DeletionHeld(gotByGetOnly, force), Fail, "no watch event of pod held after the force-delete request showed a deletionTimestamp with deletionGracePeriodSeconds 0")

	// The delete's update, and what followed it, seen 3 s later.
	late := finalizerOnKubelet()
	for i, e := range late.PodEvents {
		if !e.ObservedAt.Before(at(10)) && e.ObservedAt.Before(at(12)) {
			late.PodEvents[i].ObservedAt = e.ObservedAt.Add(3 * time.Second)
		}
	}
	want(t, DeletionHeld(late, ordinary), Fail, "later than 1s")
}

func TestDeletedWithin(t *testing.T) {
	spec := Deleted{ID: "deleted", Pod: "held", After: "remove-finalizers", Within: 10 * time.Second}
	want(t, DeletedWithin(finalizerOnKubelet(), spec), Pass, "")

	late := spec
	late.Within = 100 * time.Millisecond
	want(t, DeletedWithin(finalizerOnKubelet(), late), Fail, "later than")

	noDeleted := finalizerOnKubelet()
	noDeleted.PodEvents = noDeleted.PodEvents[:len(noDeleted.PodEvents)-1]
	want(t, DeletedWithin(noDeleted, spec), Fail, "no DELETED event")

	// Old kwok deleted before the force delete was even sent.
	early := Deleted{ID: "gone", Pod: "held", After: "force-delete", Within: 2 * time.Second}
	want(t, DeletedWithin(finalizerOnOldKwok(), early), Fail, "before the force-delete request")

	gone := Deleted{ID: "gone", Pod: "orphan-process", After: "force-delete", Within: 2 * time.Second, RequireGone: true}
	c := DeletedWithin(orphan(), gone)
	want(t, c, Pass, "")
	if c.Observed["api_object_exists"] != false {
		t.Fatalf("api_object_exists = %v", c.Observed["api_object_exists"])
	}
	stillThere := orphan()
	stillThere.Snapshots[0].Found = true
	want(t, DeletedWithin(stillThere, gone), Fail, "still found")
	noGet := orphan()
	noGet.Snapshots = nil
	want(t, DeletedWithin(noGet, gone), Fail, "no GET")

	// A pod's deletion is written as an update before the object goes,
	// even at grace 0: a DELETED with no such update before it fails.
	withUpdate := gone
	withUpdate.UpdateBeforeDeleted = i64(0)
	want(t, DeletedWithin(orphan(), withUpdate), Fail, "no watch event between the force-delete request and the DELETED showed its update")
	updated := orphan()
	p := &podSeq{rec: updated, state: updated.PodEvents[1].PodState}
	p.event(10.02, "MODIFIED", deleting(0))
	slices.SortStableFunc(updated.PodEvents, func(a, b evidence.PodEvent) int { return a.ObservedAt.Compare(b.ObservedAt) })
	want(t, DeletedWithin(updated, withUpdate), Pass, "")

	// Without RequireGone no GET is asked for, so none is observed: a
	// DELETED followed by a GET that still found the pod (it was there, or
	// back under its name) must not report api_object_exists false.
	noGetAsked := gone
	noGetAsked.RequireGone = false
	for _, r := range []*evidence.Record{stillThere, orphan(), noDeleted} {
		if v, ok := DeletedWithin(r, noGetAsked).Observed["api_object_exists"]; ok {
			t.Errorf("without RequireGone the claim observed api_object_exists = %v, which no GET said", v)
		}
	}
}

func TestContainerStopped(t *testing.T) {
	whileHeld := Stops{ID: "stops", Pod: "held", After: "delete", Within: 45 * time.Second, WhileObjectExists: true}
	c := ContainerStopped(finalizerOnKubelet(), whileHeld)
	want(t, c, Pass, "")
	if c.Observed["how"] != "graceful: SIGTERM logged, exit code 0" || c.Observed["pod_phase"] != "Succeeded" {
		t.Fatalf("observed %v", c.Observed)
	}
	sig := whileHeld
	sig.WantSIGTERM = true
	want(t, ContainerStopped(finalizerOnKubelet(), sig), Pass, "")

	tooSlow := whileHeld
	tooSlow.Within = time.Second
	want(t, ContainerStopped(finalizerOnKubelet(), tooSlow), Fail, "later than")

	neverStopped := finalizerOnKubelet()
	neverStopped.Containers[0].State, neverStopped.Containers[0].ExitCode, neverStopped.Containers[0].FinishedAt = evidence.ContainerRunning, nil, nil
	want(t, ContainerStopped(neverStopped, whileHeld), Fail, "no crictl observation")

	otherContainer := finalizerOnKubelet()
	otherContainer.Containers[0].ContainerID = "ffff"
	want(t, ContainerStopped(otherContainer, whileHeld), Fail, "no crictl observation")

	// Another pod's delete, sent at the same moment, is not this pod's: a
	// lab that deletes several pods at once (lab:kwok) must not time the
	// stop from theirs when the pod's own delete is missing.
	othersDelete := finalizerOnKubelet()
	for i, a := range othersDelete.Actions {
		if a.Kind == evidence.ActionDelete {
			othersDelete.Actions[i].Target = "neighbour"
		}
	}
	want(t, ContainerStopped(othersDelete, whileHeld), Fail, "no delete request on held was recorded")

	noPhase := finalizerOnKubelet()
	for i := range noPhase.PodEvents {
		noPhase.PodEvents[i].Phase = "Running"
	}
	want(t, ContainerStopped(noPhase, whileHeld), Fail, "Succeeded or Failed")

	// A look before the delete that saw the container exited: the delete
	// did not stop it.
	exitedBefore := finalizerOnKubelet()
	observe(exitedBefore, "held", 5, evidence.ContainerExited, i32(0), tp(4), nil)
	want(t, ContainerStopped(exitedBefore, whileHeld), Fail, "before the delete request: the request did not stop it")
	runningBefore := finalizerOnKubelet()
	observe(runningBefore, "held", 5, evidence.ContainerRunning, nil, nil, nil)
	want(t, ContainerStopped(runningBefore, whileHeld), Pass, "")

	// The pod's status reported the container terminated before the delete.
	terminatedBefore := finalizerOnKubelet()
	terminatedBefore.PodEvents[1].Containers = []evidence.ContainerState{{Name: "app", ContainerID: cid, State: "terminated"}}
	want(t, ContainerStopped(terminatedBefore, whileHeld), Fail, "reported container app terminated")

	// Phase Succeeded reported with the container still running: no status
	// the kubelet writes.
	runningInTerminal := finalizerOnKubelet()
	for i, e := range runningInTerminal.PodEvents {
		if e.Terminal() {
			runningInTerminal.PodEvents[i].Containers = []evidence.ContainerState{{Name: "app", ContainerID: cid, State: "running"}}
			break
		}
	}
	want(t, ContainerStopped(runningInTerminal, whileHeld), Fail, "with container app running, not terminated")

	afterKubeletStart := Stops{ID: "stops", Pod: "orphan-process", After: "start-kubelet", Within: 30 * time.Second}
	c = ContainerStopped(orphan(), afterKubeletStart)
	want(t, c, Pass, "")
	if c.Observed["exit_code"] != int32(137) || c.Observed["sigterm_logged"] != false {
		t.Fatalf("observed %v", c.Observed)
	}
	killed := afterKubeletStart
	killed.WantSIGTERM = true
	want(t, ContainerStopped(orphan(), killed), Fail, "no SIGTERM")

	// An orphan check must not pass on a container that stopped before the kubelet came back.
	early := orphan()
	early.Containers[3].FinishedAt = tp(60)
	want(t, ContainerStopped(early, afterKubeletStart), Fail, "before the start-kubelet request")

	// Objects deleted before the container stopped contradict "while the object exists".
	deletedFirst := orphan()
	deletedFirst.Actions = append(deletedFirst.Actions, evidence.Action{Kind: "delete", Target: "orphan-process", StartedAt: at(9), FinishedAt: at(9.1)})
	whileExists := Stops{ID: "stops", Pod: "orphan-process", After: "delete", Within: time.Minute, WhileObjectExists: true}
	want(t, ContainerStopped(deletedFirst, whileExists), Fail, "deleted")
}

func TestRunningAfterDeleted(t *testing.T) {
	spec := Orphaned{ID: "running", Pod: "orphan-process", Until: "start-kubelet", All: true, MinObservations: 2}
	c := RunningAfterDeleted(orphan(), spec)
	want(t, c, Pass, "")
	if c.Observed["container_state"] != evidence.ContainerRunning || c.Observed["deleted_at"] == nil {
		t.Fatalf("observed %v", c.Observed)
	}
	if v, ok := c.Observed["api_object_exists"]; ok {
		t.Errorf("observed api_object_exists = %v from a DELETED event: only a GET says it", v)
	}
	exited := orphan()
	exited.Containers[1].State = evidence.ContainerExited
	want(t, RunningAfterDeleted(exited, spec), Fail, "CONTAINER_EXITED")

	notDeleted := orphan()
	notDeleted.PodEvents = notDeleted.PodEvents[:2]
	want(t, RunningAfterDeleted(notDeleted, spec), Fail, "no DELETED event")

	noLook := orphan()
	noLook.Containers = noLook.Containers[3:]
	want(t, RunningAfterDeleted(noLook, spec), Fail, "0 crictl observation")

	// Without a window end, one running observation after DELETED is enough (lab:force).
	any := Orphaned{ID: "running", Pod: "orphan-process", MinObservations: 1}
	want(t, RunningAfterDeleted(orphan(), any), Pass, "")
	onlyExited := orphan()
	for i := range onlyExited.Containers {
		onlyExited.Containers[i].State = evidence.ContainerExited
	}
	want(t, RunningAfterDeleted(onlyExited, any), Fail, "CONTAINER_RUNNING")
}

func TestHeartbeatAdvancing(t *testing.T) {
	spec := Beating{ID: "beats", Pod: "orphan-process", Until: "start-kubelet", MinBeats: 2}
	c := HeartbeatAdvancing(orphan(), spec)
	want(t, c, Pass, "")
	if c.Observed["advanced_by"] != 45 {
		t.Fatalf("observed %v", c.Observed)
	}
	stuck := orphan()
	for i := range stuck.Containers {
		stuck.Containers[i].Log = beats(9, 10.0, "", false)
	}
	want(t, HeartbeatAdvancing(stuck, spec), Fail, "advanced by 0")

	oneRead := orphan()
	oneRead.Containers = oneRead.Containers[:1]
	want(t, HeartbeatAdvancing(oneRead, spec), Fail, "needs 2")

	unreadable := orphan()
	for i := range unreadable.Containers {
		unreadable.Containers[i].Log = nil
	}
	want(t, HeartbeatAdvancing(unreadable, spec), Fail, "0 readable")
}

func TestNodeNotReady(t *testing.T) {
	spec := NotReady{ID: "notready", Node: "worker2", After: "stop-kubelet", Within: 120 * time.Second}
	c := NodeNotReady(orphan(), spec)
	want(t, c, Pass, "")
	if c.Observed["not_ready_after_seconds"] != 50.0 {
		t.Fatalf("observed %v", c.Observed)
	}
	late := spec
	late.Within = 10 * time.Second
	want(t, NodeNotReady(orphan(), late), Fail, "later than")
	never := orphan()
	never.NodeEvents = never.NodeEvents[:1]
	want(t, NodeNotReady(never, spec), Fail, "no change")
	noStop := orphan()
	noStop.Actions = noStop.Actions[1:]
	want(t, NodeNotReady(noStop, spec), Fail, "no stop-kubelet request")
}

func TestOverall(t *testing.T) {
	if Overall(nil) != Fail {
		t.Fatal("no claims must not pass")
	}
	if Overall([]Claim{{Verdict: Pass}, {Verdict: Fail}}) != Fail || Overall([]Claim{{Verdict: Pass}}) != Pass {
		t.Fatal("Overall")
	}
	if c := newCheck("x", "s").done(); c.Verdict != Fail {
		t.Fatal("a claim that checked nothing must fail")
	}
}
