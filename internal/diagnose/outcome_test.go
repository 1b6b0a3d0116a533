package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOutcome(t *testing.T) {
	f := func(id string, level Level, verdict string) Finding {
		return Finding{ID: id, Level: level, Verdict: verdict}
	}
	requested := f(FindDeletion, Info, "requested")
	notRequested := f(FindDeletion, Info, verdictNotRequested)
	tests := []struct {
		name     string
		findings []Finding
		want     int
		why      string
	}{
		{"no findings (a namespace that does not exist)", nil, ExitClear, "nothing holds it"},
		{"terminating within its grace period, all checked", []Finding{requested, f(FindKubelet, Info, "active")}, ExitClear, "nothing holds it"},
		{"a warning alone decides nothing", []Finding{requested, f(FindNodeTaints, Warning, "unreachable")}, ExitClear, "nothing holds it"},
		{"a finalizer holds it", []Finding{requested, f(FindFinalizer("x"), Blocking, "holds the object")}, ExitHeld, "finalizer.x"},
		// Contradicting: a blocking finding wins over what was not checked.
		{"blocking and not checked", []Finding{requested, f(FindKubelet, NotChecked, "not checked"), f(FindFinalizer("x"), Blocking, "holds the object")}, ExitHeld, "finalizer.x"},
		{"deleted, kubelet not checked", []Finding{requested, f(FindKubelet, NotChecked, "not checked")}, ExitUndecided, "node.kubelet"},
		// Contradicting: the same unknown kubelet does not matter when nobody deletes the pod.
		{"not deleted, kubelet not checked", []Finding{notRequested, f(FindKubelet, NotChecked, "not checked")}, ExitClear, "not requested"},
		// ... but a blocking finding still does (a NotReady node would hold it).
		{"not deleted, node NotReady", []Finding{notRequested, f(FindNodeReady, Blocking, "NotReady")}, ExitHeld, "node.ready"},
		{"deleted, no finalizer, dry run skipped", []Finding{requested, f(FindDryRun, NotChecked, "not checked")}, ExitClear, "nothing holds it"},
		// Contradicting: with a finalizer (here only a warning) the dry run's answer matters.
		{"deleted, finalizer, dry run not checked", []Finding{requested, f(FindFinalizer("x"), Warning, "set"), f(FindDryRun, NotChecked, "not checked")}, ExitUndecided, FindDryRun},
		{"namespace deleted, a type not listed", []Finding{f(FindNSDeletion, Info, "requested"), f(FindRemaining("widgets.example.com"), NotChecked, "not checked")}, ExitUndecided, "remaining.widgets.example.com"},
		{"namespace not deleted, a type not listed", []Finding{f(FindNSDeletion, Info, verdictNotRequested), f(FindRemaining("widgets.example.com"), NotChecked, "not checked")}, ExitClear, "not requested"},
		{"gone, container runs", []Finding{f(FindGone, Info, "gone"), f(FindLeftover("w1"), Blocking, "running")}, ExitHeld, "leftover.w1"},
		{"gone, containers exited", []Finding{f(FindGone, Info, "gone"), f(FindLeftover("w1"), Info, "exited")}, ExitClear, "nothing holds it"},
		{"gone, node not searched", []Finding{f(FindGone, Info, "gone"), f(FindLeftover("w1"), NotChecked, "not checked")}, ExitUndecided, "leftover.w1"},
		// Contradicting: no leftover finding at all is not "nothing runs".
		{"gone, no node known", []Finding{f(FindGone, Info, "gone")}, ExitUndecided, "no node was searched"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, why := Outcome(tc.findings)
			if code != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("Outcome = %d %q, want %d and a reason naming %q", code, why, tc.want, tc.why)
			}
		})
	}
}

// TestOutcomeOfDecide runs Outcome on what Decide and DecideNamespace say
// about constructed objects: it ties verdictNotRequested and the finding ids
// Outcome reads to the deciders that write them.
func TestOutcomeOfDecide(t *testing.T) {
	at := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	past := metav1.NewTime(at.Add(-time.Minute))
	grace := int64(30)
	pod := func(deleted bool, finalizers ...string) Collected {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Finalizers: finalizers}}
		if deleted {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &past, &grace
		}
		c := Collected{At: at, Namespace: "ns", Name: "p", Pod: p, Controllers: map[string]ControllerCheck{}}
		if len(finalizers) == 0 {
			c.DryRun = DryRun{Skipped: "the pod has no finalizers"}
		}
		return c
	}
	ns := func(deleted bool) NamespaceCollected {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
		if deleted {
			n.DeletionTimestamp = &past
		}
		return NamespaceCollected{At: at, Name: "ns", Namespace: n, Discovery: DiscoveryCheck{Types: 1}}
	}
	tests := []struct {
		name     string
		findings []Finding
		want     int
	}{
		{"pod not deleted, unscheduled", Decide(pod(false)).Findings, ExitClear},
		{"pod not deleted, with a finalizer", Decide(pod(false, "example.com/f")).Findings, ExitClear},
		{"pod deleted, held by a finalizer", Decide(pod(true, "example.com/f")).Findings, ExitHeld},
		{"pod gone, no node known", Decide(Collected{At: at, Namespace: "ns", Name: "p", Gone: &GoneCheck{}}).Findings, ExitUndecided},
		{"pod gone, its container runs", Decide(Collected{At: at, Namespace: "ns", Name: "p", Gone: &GoneCheck{Searched: []NodeSearch{{
			Node: "w1", NodeCheck: NodeCheck{Command: "crictl ps"}, Containers: []RuntimeContainer{{ID: "c1", Name: "app", State: ContainerRunning}},
		}}}}).Findings, ExitHeld},
		{"namespace not deleted", DecideNamespace(ns(false)).Findings, ExitClear},
		{"namespace does not exist", DecideNamespace(NamespaceCollected{At: at, Name: "ns"}).Findings, ExitClear},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, why := Outcome(tc.findings); code != tc.want {
				t.Errorf("Outcome = %d (%s), want %d; findings %+v", code, why, tc.want, tc.findings)
			}
		})
	}
	// The deciders spell the verdict Outcome reads.
	for name, findings := range map[string][]Finding{"pod": Decide(pod(false)).Findings, "namespace": DecideNamespace(ns(false)).Findings} {
		if !notRequested(findings) {
			t.Errorf("%s without a deletionTimestamp: no deletion finding with verdict %q in %+v", name, verdictNotRequested, findings)
		}
	}
}
