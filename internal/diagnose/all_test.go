package diagnose

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// FindDeleting lists only objects with a deletionTimestamp (listing, not
// deletion, is what the fake clientset serves here), namespaces first,
// oldest first, and leaves out pods of namespaces being deleted.
func TestFindDeletingListsWhatHasADeletionTimestamp(t *testing.T) {
	at := func(min int) *metav1.Time {
		t := metav1.NewTime(time.Date(2026, 12, 7, 15, min, 0, 0, time.UTC))
		return &t
	}
	ns := func(name string, del *metav1.Time) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, DeletionTimestamp: del}}
	}
	pod := func(ns, name string, del *metav1.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, DeletionTimestamp: del}}
	}
	client := fake.NewClientset(
		ns("live", nil), ns("going", at(3)), ns("gone-first", at(1)),
		pod("live", "running", nil), pod("live", "held-late", at(9)), pod("live", "held-early", at(2)),
		pod("going", "inside", at(4)),
	)
	now := at(10).Time
	for _, tc := range []struct {
		scope            Scope
		want             string
		skipped, younger int
	}{
		{Scope{}, "namespace/gone-first namespace/going pod/live/held-early pod/live/held-late", 1, 0},
		// 90 s: held-late's deletionTimestamp (a minute ago) is too young.
		{Scope{OlderThan: 90 * time.Second}, "namespace/gone-first namespace/going pod/live/held-early", 1, 1},
		{Scope{Namespace: "live"}, "pod/live/held-early pod/live/held-late", 0, 0},
		// A namespace being deleted: itself, its pods left to its report.
		{Scope{Namespace: "going"}, "namespace/going", 1, 0},
		{Scope{Namespace: "going", OlderThan: 8 * time.Minute}, "", 1, 1},
	} {
		got, err := FindDeleting(context.Background(), client, tc.scope, now)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range got.Objects {
			names = append(names, d.String())
		}
		if strings.Join(names, " ") != tc.want || got.SkippedPods != tc.skipped || got.Younger != tc.younger {
			t.Errorf("%s: found %v, skipped %d, younger %d; want %q, skipped %d, younger %d", tc.scope, names, got.SkippedPods, got.Younger, tc.want, tc.skipped, tc.younger)
		}
	}
}

// The safest step is the lowest risk's first, notes and dishonest steps
// never; who can release a held object is named per cause.
func TestSafestStepAndWhoCanRelease(t *testing.T) {
	advice := []string{
		"bring back nothing: a note",
		RiskRisky.say("remove finalizer a by hand"),
		RiskNotHonest.say("the out-of-service taint"),
		RiskSafe.say("start the kubelet on w1"),
		RiskSafe.say("a second safe step"),
	}
	if got := SafestStep(advice); got != "Safe: start the kubelet on w1" {
		t.Errorf("SafestStep = %q", got)
	}
	if got := SafestStep([]string{"a note", RiskNotHonest.say("x")}); got != "" {
		t.Errorf("SafestStep of notes = %q, want none", got)
	}
	r := Report{Node: "w1", Findings: []Finding{
		{ID: "deletion", Level: Blocking},
		{ID: "finalizer.example.com/a", Level: Blocking},
		{ID: "node.ready", Level: Blocking},
		{ID: "node.lease", Level: Blocking},
		{ID: "finalizer.example.com/b", Level: Warning},
	}}
	if got := strings.Join(WhoCanRelease(r), "; "); got != "the controller of example.com/a; the kubelet on w1" {
		t.Errorf("WhoCanRelease = %q", got)
	}
}

func TestAllExitIsTheWorst(t *testing.T) {
	row := func(code int) AllRow {
		return AllRow{Deleting: Deleting{Kind: KindPod, Namespace: "n", Name: fmt.Sprint(code)}, Code: code}
	}
	for _, tc := range []struct {
		rows []AllRow
		want int
	}{
		{nil, ExitClear},
		{[]AllRow{row(ExitClear)}, ExitClear},
		{[]AllRow{row(ExitClear), row(ExitUndecided)}, ExitUndecided},
		{[]AllRow{row(ExitUndecided), row(ExitHeld), row(ExitClear)}, ExitHeld},
	} {
		if got, why := (AllSummary{Rows: tc.rows}).Exit(); got != tc.want {
			t.Errorf("%v: exit %d (%s), want %d", tc.rows, got, why, tc.want)
		}
	}
	if md := AllMarkdown(AllSummary{}); !strings.Contains(md, "No pod or namespace in scope has an older deletionTimestamp") {
		t.Errorf("nothing deleting:\n%s", md)
	}
	md := AllMarkdown(AllSummary{Rows: []AllRow{{Deleting: Deleting{Kind: KindPod, Namespace: "n", Name: "p"}, Code: ExitHeld, Why: "held; blocking: finalizer.a|b", Dir: "x"}}})
	if !strings.Contains(md, "| pod/n/p |") || !strings.Contains(md, `held; blocking: finalizer.a\|b`) || !strings.Contains(md, "(../x/report.md)") {
		t.Errorf("one held pod:\n%s", md)
	}
}
