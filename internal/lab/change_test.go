package lab

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
)

// A run undoes in changeKinds' order whatever order the lab declares its
// changes in: what is on the nodes first (it needs no API server, and an
// interrupt leaves mage five seconds), the run's namespace last.
func TestRunChangesInUndoOrder(t *testing.T) {
	got := runChanges(Uses{Changes: []Change{UnavailableAPIService{}, OutOfServiceTaint{}, HeldMount{}, KubeletStop{DownAtMost: time.Minute}}})
	var names []string
	for _, c := range got {
		names = append(names, reflect.TypeOf(c).Name())
	}
	if want := "KubeletStop HeldMount OutOfServiceTaint UnavailableAPIService runNamespace"; strings.Join(names, " ") != want {
		t.Errorf("undo order %s, want %s", strings.Join(names, " "), want)
	}
	if got[0].(KubeletStop).DownAtMost != time.Minute {
		t.Errorf("the declared value lost its bound: %+v", got[0])
	}
	if got := runChanges(Uses{}); len(got) != 1 || !sameKind(got[0], runNamespace{}) {
		t.Errorf("a lab that declares nothing still has its namespace undone: %v", got)
	}
}

// A change the lab did not declare, or beyond its declared bound, is not
// made: canRun never guarded it and cleanup would not undo it.
func TestAChangeNotDeclaredIsNotMade(t *testing.T) {
	node := namedNode("termlab-worker")
	client := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.String()}})
	run := func(u Uses) *Run {
		return &Run{ID: "20261204-000000-abcd", Lab: "x", Env: &cluster.Env{Client: client}, changes: runChanges(u)}
	}
	oos := corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute}
	ctx := context.Background()
	for _, tc := range []struct {
		what string
		err  error
		want string
	}{
		{"a kubelet stop", run(Uses{}).StopKubelet(ctx, node, time.Minute), "lab:x stops a kubelet without declaring it: list lab.KubeletStop"},
		{"a longer kubelet stop", run(Uses{Changes: []Change{KubeletStop{DownAtMost: time.Minute}}}).StopKubelet(ctx, node, 2*time.Minute), "later than the 1m0s the lab declares"},
		{"a held mount", run(Uses{}).HoldMount(ctx, node, "/var/lib/kubelet/pods/x", time.Minute), "list lab.HeldMount"},
		{"a longer held mount", run(Uses{Changes: []Change{HeldMount{AtMost: time.Minute}}}).HoldMount(ctx, node, "/x", 2*time.Minute), "later than the 1m0s the lab declares"},
		{"a taint", run(Uses{}).TaintNode(ctx, node.String(), oos), "list lab.OutOfServiceTaint"},
		{"another taint", run(Uses{Changes: []Change{OutOfServiceTaint{}}}).TaintNode(ctx, node.String(), corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), "a run adds only node.kubernetes.io/out-of-service:NoExecute"},
		{"an APIService", run(Uses{}).ArmAPIServiceSwitch(ctx, "v1.x.unavailable.termlab.dev"), "list lab.UnavailableAPIService"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.what, tc.err, tc.want)
		}
	}
	if acts := client.Actions(); len(acts) > 0 {
		t.Errorf("refused changes sent requests: %v", acts)
	}
}

// Repair walks every kind, whichever lab left the leftover: a killed run's
// taint, its namespace and its pod's finalizer go; another run's kept
// namespace and a node no run marked stay.
func TestRemoveLeftoversOfEveryKind(t *testing.T) {
	killed := "20261204-000000-dead"
	client := fake.NewSimpleClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w2", Annotations: map[string]string{TaintedByAnnotation: killed}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute}}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "termlab-stuck-" + killed, Labels: map[string]string{RunIDLabel: killed}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "termlab-force-kept", Labels: map[string]string{RunIDLabel: "20261204-000000-keep", KeepLabel: "true"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: "termlab-stuck-" + killed, Labels: map[string]string{RunIDLabel: killed}, Finalizers: []string{"example.com/hold"}}},
	)
	ctx := context.Background()
	repairs, err := RemoveLeftovers(ctx, &cluster.Env{Client: client}, progress.New(io.Discard), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"node w2 still carried the node.kubernetes.io/out-of-service taint of run " + killed,
		"pods of an earlier run in termlab-stuck-" + killed + " still had finalizers",
		"namespace termlab-stuck-" + killed + " of an earlier run was still there: deleted it",
	}
	if len(repairs) != len(want) {
		t.Fatalf("repairs %q, want %d", repairs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(repairs[i], w) {
			t.Errorf("repair %d: %q, want it to begin %q", i, repairs[i], w)
		}
	}
	for name, tainted := range map[string]bool{"w2": false, "w1": true} {
		n, _ := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if got := len(n.Spec.Taints) > 0; got != tainted {
			t.Errorf("node %s tainted after the repair: %v, want %v", name, got, tainted)
		}
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, "termlab-force-kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the kept namespace: %v", err)
	}
	if again, err := RemoveLeftovers(ctx, &cluster.Env{Client: client}, progress.New(io.Discard), ""); err != nil || len(again) > 0 {
		t.Errorf("a second repair: %q, %v; want nothing left to repair", again, err)
	}
}
