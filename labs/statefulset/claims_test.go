package statefulset

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/ledger"
)

// recorded is a real lab:statefulset run on the termlab cluster (kubelet
// v1.37.2); the whole objects are left out of events.jsonl.
const recorded = "testdata/20261203-073332-6772"

func load(t *testing.T) *evidence.Record { return labtest.Load(t, recorded) }

// incarnations are the original's and the replacement's UIDs.
func incarnations(t *testing.T, rec *evidence.Record) (original, replacement string) {
	t.Helper()
	uids := rec.UIDsOf(pod)
	if len(uids) != 2 {
		t.Fatalf("the recorded run has %d UIDs for %s, want 2", len(uids), pod)
	}
	return uids[0], uids[1]
}

// ledgerEntries is the last ledger read's entries, to edit in place.
func ledgerEntries(rec *evidence.Record) *[]ledger.Entry {
	return &rec.Ledgers[len(rec.Ledgers)-1].Entries
}

func TestRecordedRunPasses(t *testing.T) {
	labtest.AllPass(t, Claims(load(t)), 9)
}

func TestContradictingRecordsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*testing.T, *evidence.Record)
		fails  []string
	}{
		{
			// A mutant that had no claim to kill it (internal/mutants).
			name: "the original container exited 0 by itself after the kubelet's return",
			mutate: func(t *testing.T, rec *evidence.Record) {
				for i, o := range rec.Containers {
					if o.ExitCode != nil {
						code := int32(0)
						rec.Containers[i].ExitCode = &code
					}
				}
			},
			fails: []string{"statefulset.old_container_killed_after_kubelet_restart"},
		},
		{
			// Recorded: 0.010–0.012 s; the claim allows 1 s (claims.WatchAllowance).
			name: "the ordinary delete's update was seen 2 s after the request",
			mutate: func(t *testing.T, rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				late := del.StartedAt.Add(2 * time.Second)
				for i, e := range rec.PodEvents {
					if e.Name == pod && e.DeletionTimestamp != nil && !e.ObservedAt.Before(del.StartedAt) && e.ObservedAt.Before(late) {
						rec.PodEvents[i].ObservedAt = late
					}
				}
			},
			fails: []string{"statefulset.stays_terminating"},
		},
		{
			name: "something finished the ordinary delete at its grace deadline",
			mutate: func(t *testing.T, rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				original, _ := incarnations(t, rec)
				for i, e := range rec.PodEvents {
					if e.UID == original && e.Type == "DELETED" {
						rec.PodEvents[i].ObservedAt = del.StartedAt.Add(grace)
					}
				}
			},
			fails: []string{"statefulset.stays_terminating", "statefulset.replaced_after_force_delete"},
		},
		{
			name: "the controller created the replacement while the original was Terminating",
			mutate: func(t *testing.T, rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				_, replacement := incarnations(t, rec)
				i := slices.IndexFunc(rec.PodEvents, func(e evidence.PodEvent) bool { return e.UID == replacement })
				rec.PodEvents[i].ObservedAt = del.StartedAt.Add(grace / 3)
			},
			fails: []string{"statefulset.no_replacement_while_terminating", "statefulset.replaced_after_force_delete"},
		},
		{
			name: "the ledger had a second writer while the original was Terminating",
			mutate: func(t *testing.T, rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				entries := ledgerEntries(rec)
				*entries = append(*entries, ledger.Entry{ReceivedAt: del.StartedAt.Add(grace / 3), Write: ledger.Write{Pod: pod, UID: "another-process", Node: "termlab-worker", Seq: 1}})
				slices.SortStableFunc(*entries, func(a, b ledger.Entry) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
			},
			fails: []string{"statefulset.no_replacement_while_terminating"},
		},
		{
			name: "the pod watch was down while the original was Terminating",
			mutate: func(t *testing.T, rec *evidence.Record) {
				del, _ := rec.Action("delete", pod)
				rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: del.FinishedAt, To: del.FinishedAt.Add(grace / 3), Why: "test: connection reset"})
			},
			fails: []string{"statefulset.stays_terminating", "statefulset.no_replacement_while_terminating"},
		},
		{
			name: "the node turned NotReady at once (not the node controller's grace period)",
			mutate: func(t *testing.T, rec *evidence.Record) {
				stop, _ := rec.Action("stop-kubelet", rec.TargetOf("stop-kubelet"))
				for i, e := range rec.NodeEvents {
					if e.Ready != "True" {
						rec.NodeEvents[i].ObservedAt = stop.StartedAt.Add(grace / 10)
					}
				}
			},
			fails: []string{"statefulset.node_not_ready", "statefulset.node_unreachable_taint"},
		},
		{
			name: "the node never got the unreachable taint",
			mutate: func(t *testing.T, rec *evidence.Record) {
				for i := range rec.NodeEvents {
					rec.NodeEvents[i].Taints = nil
				}
			},
			fails: []string{"statefulset.node_unreachable_taint"},
		},
		{
			name: "the replacement came late (a controller period or backoff, not the sync the DELETED triggers)",
			mutate: func(t *testing.T, rec *evidence.Record) {
				_, replacement := incarnations(t, rec)
				for i, e := range rec.PodEvents {
					if e.UID == replacement {
						rec.PodEvents[i].ObservedAt = e.ObservedAt.Add(2 * recreatedWithin)
					}
				}
			},
			fails: []string{"statefulset.replaced_after_force_delete"},
		},
		{
			name: "the original stopped writing when the replacement started (no overlap)",
			mutate: func(t *testing.T, rec *evidence.Record) {
				original, replacement := incarnations(t, rec)
				entries := ledgerEntries(rec)
				first := slices.IndexFunc(*entries, func(e ledger.Entry) bool { return e.UID == replacement })
				*entries = slices.DeleteFunc(*entries, func(e ledger.Entry) bool {
					return e.UID == original && e.ReceivedAt.After((*entries)[first].ReceivedAt)
				})
			},
			fails: []string{"statefulset.split_brain", "statefulset.one_writer_again"},
		},
		{
			name: "crictl never saw the replacement's container",
			mutate: func(t *testing.T, rec *evidence.Record) {
				original, _ := incarnations(t, rec)
				id, _, _ := containerIDOf(rec, original)
				rec.Containers = slices.DeleteFunc(rec.Containers, func(o evidence.ContainerObservation) bool { return o.ContainerID != id })
			},
			fails: []string{"statefulset.split_brain"},
		},
		{
			name: "the old container ran long after the kubelet came back",
			mutate: func(t *testing.T, rec *evidence.Record) {
				for i, o := range rec.Containers {
					if o.FinishedAt != nil {
						t := o.FinishedAt.Add(killedWithin * 2)
						rec.Containers[i].FinishedAt = &t
					}
				}
			},
			fails: []string{"statefulset.old_container_killed_after_kubelet_restart"},
		},
		{
			name: "the original kept writing after the kubelet came back",
			mutate: func(t *testing.T, rec *evidence.Record) {
				original, _ := incarnations(t, rec)
				entries := ledgerEntries(rec)
				var last ledger.Entry
				for _, e := range *entries {
					if e.UID == original {
						last = e
					}
				}
				late := last
				late.Seq++
				late.ReceivedAt = last.ReceivedAt.Add(2 * killedWithin)
				*entries = append(*entries, late)
				slices.SortStableFunc(*entries, func(a, b ledger.Entry) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
			},
			fails: []string{"statefulset.one_writer_again"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(t)
			tc.mutate(t, rec)
			labtest.OnlyFail(t, Claims(rec), tc.fails...)
		})
	}
}

// containerIDOf is the container the API reported for the incarnation.
func containerIDOf(rec *evidence.Record, uid string) (id, node string, ok bool) {
	for _, e := range rec.EventsFor(pod) {
		if c, found := e.Container(""); found && e.UID == uid && c.ContainerID != "" {
			return c.ContainerID, e.NodeName, true
		}
	}
	return "", "", false
}

func TestReportShowsBothWritersInTheLedger(t *testing.T) {
	rec := load(t)
	sections := Report(rec, Claims(rec))
	if len(sections) != 1 {
		t.Fatalf("%d sections, want 1", len(sections))
	}
	for _, want := range []string{"original `", "replacement `", "termlab-worker2", "termlab-worker "} {
		if !strings.Contains(sections[0].Body, want) {
			t.Errorf("the ledger section lacks %q:\n%s", want, sections[0].Body)
		}
	}
}

// A pod's watch events in an order a watch never sends fail statefulset.watch_order.
func TestWatchOrderBroken(t *testing.T) {
	labtest.BreaksWatchOrder(t, load, Claims, "statefulset")
}
