package claims

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// withGap adds a gap of the source's watch from sec a to sec b (b < 0: still open).
func withGap(rec *evidence.Record, source string, a, b float64) *evidence.Record {
	g := evidence.WatchGap{Source: source, From: at(a), Why: "the watch stream ended after resourceVersion 3; watching again from resourceVersion 3"}
	if b >= 0 {
		g.To = at(b)
	}
	rec.Gaps = append(rec.Gaps, g)
	return rec
}

// playedRecord is two fake-node pods created at 0 s and DELETED at 20 s.
func playedRecord() *evidence.Record {
	rec := newRecord()
	for pod, set := range map[string]string{"a": "faithful", "b": "fast"} {
		body, _ := json.Marshal(map[string]any{"body": map[string]any{"metadata": map[string]any{"name": pod, "labels": map[string]string{"termlab.dev/stage-set": set}}}})
		rec.Actions = append(rec.Actions, evidence.Action{Kind: "create", Target: pod, Request: body, StartedAt: at(0), FinishedAt: at(0.01)})
		obj := json.RawMessage(`{"metadata":{"labels":{"termlab.dev/stage-set":"` + set + `"}}}`)
		rec.PodEvents = append(rec.PodEvents,
			evidence.PodEvent{ObservedAt: at(0.2), Type: "ADDED", PodState: evidence.PodState{Name: pod, NodeName: "kwok-node-0"}, Object: obj},
			evidence.PodEvent{ObservedAt: at(20), Type: "DELETED", PodState: evidence.PodState{Name: pod, NodeName: "kwok-node-0"}, Object: obj})
	}
	return rec
}

// Every claim that passes because something was NOT seen in a window fails
// when a watch of the source it rests on was down inside that window, saying
// so and citing the gaps file, and still passes with a gap outside it.
func TestAbsenceClaimsFailOnBlindWindows(t *testing.T) {
	heldSpec := Held{ID: "held", Statement: "s", Pod: "held", Finalizer: fin, Delete: "delete", Release: "remove-finalizers", MinHold: 5 * time.Second}
	fidelity := func(fake func(*evidence.Record, string)) func() *evidence.Record {
		return func() *evidence.Record {
			return fidelityRecord(map[string]func(*evidence.Record, string){"real": kubeletFinalizer, "fake": fake})
		}
	}
	v07 := func() *evidence.Record { rec := newRecord(); fastV07Finalizer(rec, "fake"); return rec }
	for _, tc := range []struct {
		name   string
		rec    func() *evidence.Record
		decide func(*evidence.Record) Claim
		source string
		// inside and outside are gaps (seconds) inside and outside the claim's window.
		inside, outside [2]float64
		window          string // the window the failure names
	}{
		{
			"DeletionHeld: no DELETED between the delete and the release", finalizerOnKubelet,
			func(r *evidence.Record) Claim { return DeletionHeld(r, heldSpec) },
			evidence.WatchPods, [2]float64{15, 18}, [2]float64{40, 45}, "10–30",
		},
		{
			"DeletedWithin: no DELETED before the request", finalizerOnKubelet,
			func(r *evidence.Record) Claim {
				return DeletedWithin(r, Deleted{ID: "deleted", Statement: "s", Pod: "held", After: "remove-finalizers", Within: 10 * time.Second})
			},
			// A gap after the request only delays the DELETED: "within" still holds.
			evidence.WatchPods, [2]float64{29.5, 30.005}, [2]float64{30.05, 30.15}, "30–30.01",
		},
		{
			"ContainerStopped: no DELETED before the container was seen stopped", finalizerOnKubelet,
			func(r *evidence.Record) Claim {
				return ContainerStopped(r, Stops{ID: "stops", Statement: "s", Pod: "held", After: "delete", Within: 45 * time.Second, WhileObjectExists: true})
			},
			evidence.WatchPods, [2]float64{10.5, 11}, [2]float64{40, 45}, "10–11.5",
		},
		{
			"NodeNotReady: no change away from Ready before the stop", orphan,
			func(r *evidence.Record) Claim {
				return NodeNotReady(r, NotReady{ID: "notready", Statement: "s", Node: "worker2", After: "stop-kubelet", Within: 120 * time.Second})
			},
			evidence.WatchNodes, [2]float64{4, 6}, [2]float64{20, 30}, "5–5.01",
		},
		{
			"SameDeletion: no other transition between", fidelity(kubeletFinalizer),
			func(r *evidence.Record) Claim {
				return SameDeletion(r, Fidelity{ID: "same", Statement: "s", Reference: "real", Candidate: "fake"})
			},
			evidence.WatchPods, [2]float64{12, 13}, [2]float64{19, 25}, "1.2–18.1",
		},
		{
			"GraceCollapsedUnterminated: never shown terminated", fidelity(fastV08Finalizer),
			func(r *evidence.Record) Claim {
				return GraceCollapsedUnterminated(r, Collapsed{ID: "collapsed", Statement: "s", Pod: "fake", Reference: "real", Delete: "delete", Within: 5 * time.Second, Finalizer: fin, Release: "remove-finalizers"})
			},
			evidence.WatchPods, [2]float64{5, 6}, [2]float64{19, 25}, "0–18.1",
		},
		{
			"FinalizersStripped: exactly the reported transitions", v07,
			func(r *evidence.Record) Claim {
				return FinalizersStripped(r, Stripped{ID: "stripped", Statement: "s", Pod: "fake", Finalizer: fin, Delete: "delete", Release: "remove-finalizers", Want: reported})
			},
			evidence.WatchPods, [2]float64{10.12, 10.13}, [2]float64{11, 12}, "0.3–10.2",
		},
		{
			"PlayedBy: the label was kept", playedRecord,
			func(r *evidence.Record) Claim {
				return PlayedBy(r, Played{ID: "played", Statement: "s", Label: "termlab.dev/stage-set", Pods: map[string]string{"a": "faithful", "b": "fast"}, FakeNodePrefix: "kwok-node-",
					Installed: map[string][]string{"faithful": {"faithful-pod-stop"}, "fast": {"fast-pod-delete"}}, Evidence: "kwok/status.json"})
			},
			evidence.WatchPods, [2]float64{10, 11}, [2]float64{30, 40}, "0–20",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want(t, tc.decide(tc.rec()), Pass, "")

			in := tc.decide(withGap(tc.rec(), tc.source, tc.inside[0], tc.inside[1]))
			from, to, _ := strings.Cut(tc.window, "–")
			wantReason := "the " + tc.source + " watch was down from " + stamp(at(tc.inside[0])) + " to " + stamp(at(tc.inside[1])) +
				", inside the window " + stamp(at(num(t, from))) + "–" + stamp(at(num(t, to))) + ": an absence cannot be shown"
			want(t, in, Fail, wantReason)
			if !slices.Contains(in.Evidence, evidence.WatchGapsFile) {
				t.Errorf("the failure cites %v, not %s", in.Evidence, evidence.WatchGapsFile)
			}
			if strings.Count(in.Reason, "watch was down") != 1 {
				t.Errorf("one gap, reported more than once: %s", in.Reason)
			}

			open := tc.decide(withGap(tc.rec(), tc.source, tc.inside[0], -1))
			want(t, open, Fail, "to the end of the record, inside the window")

			want(t, tc.decide(withGap(tc.rec(), tc.source, tc.outside[0], tc.outside[1])), Pass, "")
			other := evidence.WatchNodes
			if tc.source == evidence.WatchNodes {
				other = evidence.WatchPods
			}
			want(t, tc.decide(withGap(tc.rec(), other, tc.inside[0], tc.inside[1])), Pass, "")
		})
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	d, err := time.ParseDuration(s + "s")
	if err != nil {
		t.Fatal(err)
	}
	return d.Seconds()
}
