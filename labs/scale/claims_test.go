package scale

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

// recorded is a real lab:scale run on the termlab cluster (kubelet v1.37.2,
// kwok v0.8.0, faithful stage set) at a small size; the whole objects are
// left out of events.jsonl.
const recorded = "testdata/20261203-093925-ffa4"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

func TestRecordedRunPasses(t *testing.T) {
	rec := load(t)
	labtest.AllPass(t, Claims(rec), 7)
	fig := FiguresOf(rec)
	if fig.Size.Pods != 100 || fig.CreatePerSecond <= 0 || fig.RunningPerSecond <= 0 || fig.DeletedPerSecond <= 0 || fig.GoneAfterRelease <= 0 {
		t.Errorf("figures of the recorded run: %+v", fig)
	}
	// The same record with its pod events on disk: the same claims, to the
	// observed value, and the same figures.
	inMemory := Claims(rec)
	labtest.OnDisk(t, rec)
	if rec.PodEvents != nil || rec.PodEventCount() != fig.PodEvents {
		t.Fatalf("on disk: %d events in memory, count %d, want none and %d", len(rec.PodEvents), rec.PodEventCount(), fig.PodEvents)
	}
	onDisk := Claims(rec)
	a, _ := json.Marshal(inMemory)
	b, _ := json.Marshal(onDisk)
	if !bytes.Equal(a, b) {
		t.Errorf("claims decided from disk differ from those in memory:\n%s\n%s", a, b)
	}
	if got := FiguresOf(rec); !reflect.DeepEqual(got, fig) {
		t.Errorf("figures from disk %+v, in memory %+v", got, fig)
	}
}

// finalizerPod is the first pod of the record that carries the finalizer.
func finalizerPod(t *testing.T, rec *evidence.Record) string {
	for _, p := range rec.Lists[0].Pods {
		if hasFinalizer(p.Finalizers) {
			return p.Name
		}
	}
	t.Fatal("no finalizer pod in the recorded LIST")
	return ""
}

func plainPod(t *testing.T, rec *evidence.Record) string {
	for _, p := range rec.Lists[0].Pods {
		if !hasFinalizer(p.Finalizers) {
			return p.Name
		}
	}
	t.Fatal("no pod without finalizer in the recorded LIST")
	return ""
}

// dropEvent removes the pod's first event of the type.
func dropEvent(rec *evidence.Record, pod, typ string) {
	for i, e := range rec.PodEvents {
		if e.Name == pod && e.Type == typ {
			rec.PodEvents = append(rec.PodEvents[:i:i], rec.PodEvents[i+1:]...)
			return
		}
	}
}

func editNote(t *testing.T, rec *evidence.Record, prefix string, v any, edit func()) {
	t.Helper()
	for i, n := range rec.Notes {
		if rest, ok := strings.CutPrefix(n.Text, prefix); ok {
			if err := json.Unmarshal([]byte(rest), v); err != nil {
				t.Fatal(err)
			}
			edit()
			b, _ := json.Marshal(v)
			rec.Notes[i].Text = prefix + string(b)
			return
		}
	}
	t.Fatalf("no note %q", prefix)
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*testing.T, *evidence.Record)
		fails  []string
	}{
		{
			name: "a finalizer pod is DELETED before the lab released it",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := finalizerPod(t, rec)
				del := rec.Actions[0].StartedAt
				for _, a := range rec.Actions {
					if a.Kind == "delete-namespace" {
						del = a.StartedAt
					}
				}
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.Type == "DELETED" {
						rec.PodEvents[i].ObservedAt = del.Add(time.Second)
					}
				}
			},
			fails: []string{ClaimHeld},
		},
		{
			name: "a pod lost Ready while it ran (its fake node's lease lapsed)",
			mutate: func(t *testing.T, rec *evidence.Record) {
				unready(t, rec, plainPod(t, rec))
			},
			fails: []string{ClaimNodesReady},
		},
		{
			name: "a finalizer pod was never released, yet DELETED",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := finalizerPod(t, rec)
				for i, a := range rec.Actions {
					if a.Kind == "remove-finalizers" && a.Target == pod {
						rec.Actions = append(rec.Actions[:i:i], rec.Actions[i+1:]...)
						break
					}
				}
			},
			fails: []string{ClaimHeld},
		},
		{
			// A mutant that had no claim to kill it (internal/mutants).
			name: "a pod was marked deleting before the namespace delete was sent",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := plainPod(t, rec)
				for i, a := range rec.Actions {
					if a.Kind != "delete-namespace" {
						continue
					}
					for _, e := range rec.PodEvents {
						if e.Name == pod && e.DeletionTimestamp != nil {
							// The delete sent just after the pod's first marked event.
							rec.Actions[i].StartedAt = e.ObservedAt.Add(10 * time.Millisecond)
							break
						}
					}
				}
			},
			fails: []string{ClaimDeleted},
		},
		{
			name:   "a pod's DELETED event is lost",
			mutate: func(t *testing.T, rec *evidence.Record) { dropEvent(rec, plainPod(t, rec), "DELETED") },
			fails:  []string{ClaimDeleted, ClaimComplete},
		},
		{
			name:   "a pod's ADDED event is lost",
			mutate: func(t *testing.T, rec *evidence.Record) { dropEvent(rec, plainPod(t, rec), "ADDED") },
			fails:  []string{ClaimComplete},
		},
		{
			// A mutant that had no claim to kill it (internal/mutants).
			name: "a pod's last update came after its DELETED",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := plainPod(t, rec)
				last, prev := -1, -1
				for i, e := range rec.PodEvents {
					if e.Name == pod {
						prev, last = last, i
					}
				}
				if rec.PodEvents[last].Type != "DELETED" || rec.PodEvents[prev].Type != "MODIFIED" {
					t.Fatalf("pod %s does not end MODIFIED, DELETED", pod)
				}
				x, y := &rec.PodEvents[prev], &rec.PodEvents[last]
				*x, *y = *y, *x
				x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
			},
			fails: []string{claims.WatchOrderID("scale")},
		},
		{
			name: "a pod's ADDED event is recorded twice",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := plainPod(t, rec)
				for _, e := range rec.PodEvents {
					if e.Name == pod && e.Type == "ADDED" {
						rec.PodEvents = append(rec.PodEvents, e)
						break
					}
				}
			},
			fails: []string{ClaimComplete},
		},
		{
			name: "the pods watch was down for 20 ms while the pods were created and came back from the last resourceVersion it had delivered",
			mutate: func(t *testing.T, rec *evidence.Record) {
				at := rec.PodEvents[len(rec.PodEvents)/10].ObservedAt.Add(time.Microsecond)
				if !at.Before(rec.Lists[0].At) {
					t.Fatal("the tenth of the events is not before the LIST")
				}
				rv := lastVersionBefore(rec.PodEvents, at)
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond),
					Why: "the watch stream ended; watching again from resourceVersion " + rv, ResumedFrom: rv})
			},
			fails: nil, // nothing is missing: the server sent every change after rv
		},
		{
			name: "the pods watch was down for 20 ms and came back from an older resourceVersion than it had delivered",
			mutate: func(t *testing.T, rec *evidence.Record) {
				at := rec.Lists[0].At
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond),
					Why: "the watch stream ended; watching again from resourceVersion 1", ResumedFrom: "1"})
			},
			fails: []string{ClaimComplete},
		},
		{
			name: "the pods watch was down for 20 ms and the record does not say it resumed",
			mutate: func(t *testing.T, rec *evidence.Record) {
				at := rec.Lists[0].At
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond), Why: "the watch stream ended"})
			},
			fails: []string{ClaimComplete},
		},
		{
			name: "the pods watch was down while the finalizer pods were held",
			mutate: func(t *testing.T, rec *evidence.Record) {
				var at time.Time
				for _, a := range rec.Actions {
					if a.Kind == "delete-namespace" {
						at = a.FinishedAt
					}
				}
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(time.Second), Why: "re-listed"})
			},
			fails: []string{ClaimHeld, ClaimComplete},
		},
		{
			name: "the pods watch was down for 20 ms while the finalizers were released and came back from the last resourceVersion it had delivered",
			mutate: func(t *testing.T, rec *evidence.Record) {
				at := midRelease(t, rec)
				rv := lastVersionBefore(rec.PodEvents, at)
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond),
					Why: "the watch stream ended; watching again from resourceVersion " + rv, ResumedFrom: rv})
			},
			fails: nil, // nothing is missing, and every release was applied: no pod was gone before its own
		},
		{
			name: "the pods watch was down while the finalizers were released and came back from an older resourceVersion",
			mutate: func(t *testing.T, rec *evidence.Record) {
				at := midRelease(t, rec)
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond),
					Why: "the watch stream ended; watching again from resourceVersion 1", ResumedFrom: "1"})
			},
			fails: []string{ClaimHeld, ClaimComplete},
		},
		{
			name: "the API server answered a finalizer release 404: the pod was already gone",
			mutate: func(t *testing.T, rec *evidence.Record) {
				for i, a := range rec.Actions {
					if a.Kind == evidence.ActionRemoveFinalizers {
						rec.Actions[i].Error = `pods "` + a.Target + `" not found`
						return
					}
				}
				t.Fatal("no release in the record")
			},
			fails: []string{ClaimHeld},
		},
		{
			name: "a pod's state came from a re-list",
			mutate: func(t *testing.T, rec *evidence.Record) {
				for i, e := range rec.PodEvents {
					if e.Type == "MODIFIED" {
						rec.PodEvents[i].Type = "LISTED"
						break
					}
				}
			},
			fails: []string{ClaimComplete},
		},
		{
			name: "the record never held a pod's listed state",
			mutate: func(t *testing.T, rec *evidence.Record) {
				rec.Lists[0].Pods[3].ResourceVersion = "999999999"
			},
			fails: []string{ClaimComplete},
		},
		{
			name: "the final LIST still returns a pod",
			mutate: func(t *testing.T, rec *evidence.Record) {
				last := &rec.Lists[len(rec.Lists)-1]
				last.Pods = append(last.Pods, rec.Lists[0].Pods[0])
			},
			fails: []string{ClaimDeleted, ClaimComplete},
		},
		{
			name: "a pod never ran",
			mutate: func(t *testing.T, rec *evidence.Record) {
				pod := plainPod(t, rec)
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.Phase == "Running" {
						rec.PodEvents[i].Phase = "Pending"
					}
				}
			},
			fails: []string{ClaimRan},
		},
		{
			name: "the namespace went only a minute after the last release",
			mutate: func(t *testing.T, rec *evidence.Record) {
				var g NamespaceGone
				editNote(t, rec, namespaceNote, &g, func() { g.ObservedAt = g.ObservedAt.Add(time.Minute) })
			},
			fails: []string{ClaimNamespace},
		},
		{
			name: "the LIST before the delete holds fewer pods than the size",
			mutate: func(t *testing.T, rec *evidence.Record) {
				var s Size
				editNote(t, rec, sizeNote, &s, func() { s.Pods++ })
			},
			fails: []string{ClaimRan},
		},
	} {
		// Each record is decided twice: its pod events in memory, and read
		// back from an events.jsonl as a run of thousands of pods keeps them.
		for _, where := range []string{"in memory", "on disk"} {
			t.Run(tc.name+"/"+where, func(t *testing.T) {
				rec := load(t)
				tc.mutate(t, rec)
				if where == "on disk" {
					labtest.OnDisk(t, rec)
				}
				if len(tc.fails) == 0 { // a record that contradicts nothing: every claim holds
					labtest.OnlyFail(t, Claims(rec))
					return
				}
				labtest.MustFail(t, Claims(rec), tc.fails...)
			})
		}
	}
}

func TestSizes(t *testing.T) {
	if Default.Pods != 5000 || Default.FakeNodes != 100 || Default.Finalized() != 1000 || Default.Validate() != nil {
		t.Errorf("Default %+v: %d finalized, %v", Default, Default.Finalized(), Default.Validate())
	}
	if err := Quick.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Size{
		{FakeNodes: 1, Pods: 200, FinalizerPercent: 20, StageSet: Default.StageSet},
		{FakeNodes: 10, Pods: 100, FinalizerPercent: 120, StageSet: Default.StageSet},
		{FakeNodes: 10, Pods: 100, FinalizerPercent: 20, StageSet: "nope"},
		{FakeNodes: 10, Pods: 100, FinalizerPercent: 20, StageSet: Default.StageSet, Limits: "unlimited"},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	raised := Default
	raised.Limits = "raised"
	if err := raised.Validate(); err != nil {
		t.Error(err)
	}
	seven := 7
	if s := Flags(nil, &seven, nil, nil); s.Pods != 7 || s.FakeNodes != Default.FakeNodes {
		t.Errorf("Flags: %+v", s)
	}
}

// lastVersionBefore is the resourceVersion of the last watch event recorded
// before t ("" if none), re-lists' LISTED states left out: where a watch
// that broke at t had got to.
// midRelease is a moment while the lab released the finalizers: between
// the first release's start and the last one's end.
func midRelease(t *testing.T, rec *evidence.Record) time.Time {
	t.Helper()
	var first, last time.Time
	for _, a := range rec.Actions {
		if a.Kind != evidence.ActionRemoveFinalizers {
			continue
		}
		if first.IsZero() || a.StartedAt.Before(first) {
			first = a.StartedAt
		}
		if a.FinishedAt.After(last) {
			last = a.FinishedAt
		}
	}
	if !last.After(first) {
		t.Fatal("no releases in the record")
	}
	return first.Add(last.Sub(first) / 2)
}

func lastVersionBefore(events []evidence.PodEvent, t time.Time) string {
	last := ""
	for _, e := range events {
		if !e.ObservedAt.After(t) && e.Type != "LISTED" {
			last = e.ResourceVersion
		}
	}
	return last
}

func TestSpreadOf(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	got := spreadOf(xs)
	if want := (Spread{N: 10, P50: 5, P95: 10, P99: 10, Max: 10}); got != want {
		t.Errorf("spreadOf: %+v, want %+v", got, want)
	}
	if (spreadOf(nil) != Spread{}) {
		t.Error("spreadOf(nil) is not empty")
	}
}

// TestDeleters reads who deleted the committed reference run's pods from its
// audit log: the namespace controller marks them with collection deletes,
// kwok removes each one. Without kwok's requests, kwok is not named.
func TestDeleters(t *testing.T) {
	rec := labtest.Load(t, "../../results/reference/scale")
	by := map[string]Deleter{}
	for _, d := range FiguresOf(rec).Deleters {
		by[d.Sender] = d
	}
	kwok, ns := by["kwok-controller"], by["namespace-controller (kube-controller-manager)"]
	if kwok.Removed == 0 || kwok.NotFound == 0 || kwok.PerSecond <= 0 || !strings.HasPrefix(kwok.UserAgent, "kwok") {
		t.Errorf("kwok's deletes: %+v (all: %+v)", kwok, by)
	}
	if ns.Collections == 0 || ns.Removed != 0 {
		t.Errorf("the namespace controller's deletes: %+v (all: %+v)", ns, by)
	}
	var kept []evidence.AuditEvent
	for _, e := range rec.Audit {
		if !strings.HasPrefix(e.UserAgent, "kwok") {
			kept = append(kept, e)
		}
	}
	rec.Audit = kept
	for _, d := range FiguresOf(rec).Deleters {
		if d.Sender == "kwok-controller" {
			t.Errorf("kwok named as a deleter with none of its requests: %+v", d)
		}
	}
}

// unready inserts, after the pod's first Running and Ready event, the event
// the node lifecycle controller's write makes: the same pod Running, Ready
// False, not being deleted.
func unready(t *testing.T, rec *evidence.Record, pod string) {
	t.Helper()
	for i, e := range rec.PodEvents {
		if e.Name == pod && isRunning(e) {
			u := e
			u.Type, u.Ready, u.ResourceVersion = "MODIFIED", "False", e.ResourceVersion+"1"
			u.ObservedAt = e.ObservedAt.Add(time.Millisecond)
			rec.PodEvents = slices.Insert(rec.PodEvents, i+1, u)
			return
		}
	}
	t.Fatalf("no Running event of %s", pod)
}

// TestNodesReadyNamesWhoUnreadied: with an audit log, the claim says how
// many of the run's pods the node lifecycle controller wrote; without one,
// that it is not known.
func TestNodesReadyNamesWhoUnreadied(t *testing.T) {
	rec := load(t)
	pod := plainPod(t, rec)
	unready(t, rec, pod)
	c := labtest.ByID(Claims(rec))[ClaimNodesReady]
	if c.Passed() || !strings.Contains(c.Reason, "1 pods lost Ready") || !strings.Contains(c.Reason, pod) || !strings.Contains(c.Reason, "no audit log") {
		t.Errorf("without an audit log: %s: %s", c.Verdict, c.Reason)
	}
	// A run without an audit log has no audit.jsonl for the claim to cite
	// (a -kubeconfig run on a cluster without audit; CI caught it citing one).
	if slices.Contains(c.Evidence, evidence.AuditFile) {
		t.Errorf("without an audit log the claim cites %s: %v", evidence.AuditFile, c.Evidence)
	}
	rec.Audit = append(rec.Audit, evidence.AuditEvent{
		User: "system:serviceaccount:kube-system:node-controller", UserAgent: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/0000000/system:serviceaccount:kube-system:node-controller",
		Verb: "update", Resource: "pods", Subresource: "status", Namespace: rec.Namespace, Name: pod, Code: 200, ReceivedAt: rec.PodEvents[0].ObservedAt,
	})
	c = labtest.ByID(Claims(rec))[ClaimNodesReady]
	if c.Passed() || !strings.Contains(c.Reason, "the node lifecycle controller wrote 1 of the run's pods") {
		t.Errorf("with the controller's write in the audit log: %s: %s", c.Verdict, c.Reason)
	}
	if !slices.Contains(c.Evidence, evidence.AuditFile) {
		t.Errorf("with an audit log the claim does not cite %s: %v", evidence.AuditFile, c.Evidence)
	}
}

// A pod's watch events in an order a watch never sends fail scale.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "scale")
}
