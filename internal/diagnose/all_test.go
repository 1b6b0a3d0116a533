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
	got, skipped, err := FindDeleting(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range got {
		names = append(names, d.String())
	}
	want := "namespace/gone-first namespace/going pod/live/held-early pod/live/held-late"
	if strings.Join(names, " ") != want || skipped != 1 {
		t.Errorf("found %v, skipped %d; want %s, skipped 1", names, skipped, want)
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
	if md := AllMarkdown(AllSummary{}); !strings.Contains(md, "No pod or namespace has a deletionTimestamp") {
		t.Errorf("nothing deleting:\n%s", md)
	}
	md := AllMarkdown(AllSummary{Rows: []AllRow{{Deleting: Deleting{Kind: KindPod, Namespace: "n", Name: "p"}, Code: ExitHeld, Why: "held; blocking: finalizer.a|b", Dir: "x"}}})
	if !strings.Contains(md, "| pod/n/p |") || !strings.Contains(md, `held; blocking: finalizer.a\|b`) || !strings.Contains(md, "(../x/report.md)") {
		t.Errorf("one held pod:\n%s", md)
	}
}
