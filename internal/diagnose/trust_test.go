package diagnose

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What diagnose could not read is "not checked", never a finding: a user
// limited to one namespace may not read nodes or their Leases.
func TestForbiddenNodeIsNotCheckedNeverMissing(t *testing.T) {
	c := withFinalizer(exited(terminating()), Absent)
	c.Node, c.Lease = nil, nil
	c.NodeErr = `reading node termlab-worker2: nodes "termlab-worker2" is forbidden: User "system:serviceaccount:ns:viewer" cannot get resource "nodes"`
	c.LeaseErr = `reading lease kube-node-lease/termlab-worker2: leases.coordination.k8s.io "termlab-worker2" is forbidden`
	c.Kubelet = NodeCheck{NotChecked: "no node access was given"}
	r := Decide(c)
	n := mustFind(t, r, FindNodeReady)
	if n.Level != NotChecked || n.Verdict != "not checked" {
		t.Errorf("node.ready %s/%s, want not checked", n.Level, n.Verdict)
	}
	contains(t, "node.ready", n.Text, "forbidden")
	if l := mustFind(t, r, FindNodeLease); l.Level != NotChecked {
		t.Errorf("node.lease %s, want not checked: %s", l.Level, l.Text)
	}
	for _, f := range r.Findings {
		lacks(t, f.ID, f.Text, "does not exist", "missing")
	}
	lacks(t, "the answer", r.Answer, "no longer exists", "does not exist", "NotReady")
}

// Only NotFound says the node is gone; then the answer says so, and why
// the pod garbage collector has not removed the pod.
func TestGoneNodeIsNamedWithThePodGC(t *testing.T) {
	gone := func(c Collected) Collected {
		c.Node, c.Lease, c.NodeGone = nil, nil, true
		c.Kubelet = NodeCheck{NotChecked: "node termlab-worker2 does not exist (NotFound): there is no node to ask"}
		c.Containers[0].NodeCheck = NodeCheck{NotChecked: c.Kubelet.NotChecked}
		c.Containers[0].State = ""
		return c
	}
	t.Run("held by a finalizer", func(t *testing.T) {
		c := gone(withFinalizer(terminating(), Absent))
		c.ControllerManager = ControllerCheck{Manager: "kube-controller-manager", Present: Present, Evidence: "Lease kube-system/kube-controller-manager was renewed 1s ago"}
		r := Decide(c)
		if n := mustFind(t, r, FindNodeReady); n.Level != Blocking || n.Verdict != "missing" {
			t.Errorf("node.ready %s/%s, want blocking/missing", n.Level, n.Verdict)
		}
		contains(t, "the answer", r.Answer, "node termlab-worker2 no longer exists", "pod garbage collector", "finalizers stay: "+finalizer)
		for _, a := range r.Advice {
			lacks(t, "advice", a, "-nodeaccess", "start the kubelet")
		}
	})
	t.Run("no finalizer, kube-controller-manager down", func(t *testing.T) {
		c := gone(terminating())
		c.ControllerManager = ControllerCheck{Manager: "kube-controller-manager", Present: Absent, Evidence: "Lease kube-system/kube-controller-manager was last renewed 5m0s ago"}
		r := Decide(c)
		contains(t, "the answer", r.Answer, "no longer exists", "kube-controller-manager is not running")
		found := false
		for _, a := range r.Advice {
			lacks(t, "advice", a, "-nodeaccess")
			found = found || strings.Contains(a, "look on the machine itself")
		}
		if !found {
			t.Errorf("no advice for a node that is gone: %v", r.Advice)
		}
	})
}

// A kubelet unit that is not active, on a node whose Lease is fresh and
// which is Ready, is not judged stopped; a node with no unit named kubelet
// (k3s, RKE2) is not checked.
func TestKubeletUnitReadAgainstTheLease(t *testing.T) {
	t.Run("inactive unit, fresh Lease, Ready", func(t *testing.T) {
		c := terminating()
		c.Kubelet = NodeCheck{Command: "systemctl show kubelet …", Output: "inactive"}
		r := Decide(c)
		k := mustFind(t, r, FindKubelet)
		if k.Level == Blocking {
			t.Errorf("kubelet judged stopped: %s", k.Text)
		}
		lacks(t, "the answer", r.Answer, "not running")
		for _, a := range r.Advice {
			lacks(t, "advice", a, "start the kubelet")
		}
	})
	t.Run("inactive unit, stale Lease", func(t *testing.T) {
		c := terminating()
		c.Kubelet = NodeCheck{Command: "systemctl show kubelet …", Output: "inactive"}
		c.Lease.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-2 * time.Minute)}
		r := Decide(c)
		if k := mustFind(t, r, FindKubelet); k.Level != Blocking {
			t.Errorf("a stopped kubelet with a stale Lease: %s %s", k.Level, k.Text)
		}
		contains(t, "the answer", r.Answer, "is not running")
	})
	t.Run("no unit named kubelet", func(t *testing.T) {
		c := terminating()
		c.Kubelet = NodeCheck{Command: "systemctl show kubelet …", NotChecked: "node termlab-worker2 has no systemd unit named kubelet (LoadState=not-found)"}
		r := Decide(c)
		if k := mustFind(t, r, FindKubelet); k.Level != NotChecked {
			t.Errorf("kubelet %s, want not checked", k.Level)
		}
		lacks(t, "the answer", r.Answer, "not running")
	})
}

// A controller found but failing is "running, but failing", never "runs".
func TestFailingControllerIsItsOwnFinding(t *testing.T) {
	c := withFinalizer(exited(terminating()), Failing)
	c.Controllers[finalizer] = ControllerCheck{Manager: "manager", Present: Failing, Evidence: "pod ops/widget-operator-5d8f7c9b4-x7kqz (container manager) container manager is waiting (CrashLoopBackOff)"}
	r := Decide(c)
	f := mustFind(t, r, FindFinalizer(finalizer))
	contains(t, "the finding", f.Text, "running, but failing", "CrashLoopBackOff")
	contains(t, "the answer", r.Answer, "whose controller is running, but failing")
	lacks(t, "the answer", r.Answer, "whose controller runs (")
}

func TestControllerPodMatchIsExact(t *testing.T) {
	pod := func(ns, name string, labels map[string]string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	for _, tc := range []struct {
		pod   *corev1.Pod
		m     string
		match bool
	}{
		// kubebuilder's default field manager must not match kube-controller-manager.
		{pod("kube-system", "kube-controller-manager-termlab-control-plane", map[string]string{"component": "kube-controller-manager"}, "kube-controller-manager"), "manager", false},
		{pod("ops", "manager-5d8f7c9b4-x7kqz", nil, "app"), "manager", true},
		{pod("ops", "widget-operator-5d8f7c9b4-x7kqz", nil, "manager"), "manager", true},
		{pod("ops", "widget-0", nil, "app"), "widget", true},
		{pod("ops", "widgetmaker-0", nil, "app"), "widget", false},
		{pod("ops", "x", map[string]string{"app.kubernetes.io/name": "widget"}, "app"), "widget", true},
		{pod("ops", "cert-manager-cainjector-5d8f7c9b4-x7kqz", nil, "cert-manager-cainjector"), "cert-manager", false},
	} {
		if got := ControllerPodMatch(tc.pod, tc.m) != ""; got != tc.match {
			t.Errorf("%s/%s against %q: match %v, want %v", tc.pod.Namespace, tc.pod.Name, tc.m, got, tc.match)
		}
	}
	holder := "termlab-control-plane_0d2c…"
	kcm := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-controller-manager"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if LeaseMatch(kcm, "manager") {
		t.Error("manager matched kube-controller-manager's Lease")
	}
	// kind names the control plane <cluster>-control-plane: a client whose
	// field manager is the cluster's name is not kube-controller-manager.
	if LeaseMatch(kcm, "termlab") {
		t.Error("termlab matched kube-controller-manager's Lease held by termlab-control-plane")
	}
	op := "widget-operator-5d8f7c9b4-x7kqz_1234"
	if !LeaseMatch(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "1a2b3c.example.com"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &op}}, "widget-operator") {
		t.Error("a Lease held by widget-operator's pod did not match widget-operator")
	}
}

// A pod in CrashLoopBackOff, or one that restarted recently, is not a
// controller that runs.
func TestPodTrouble(t *testing.T) {
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	healthy := &corev1.Pod{Status: corev1.PodStatus{Conditions: ready, ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", RestartCount: 2,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-time.Hour))}}}}}}
	if got := podTrouble(healthy, now); got != "" {
		t.Errorf("a Ready pod whose last restart was an hour ago: %q", got)
	}
	crashing := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", RestartCount: 5,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-20 * time.Second))}}}}}}
	got := podTrouble(crashing, now)
	contains(t, "trouble", got, "not Ready", "CrashLoopBackOff", "restarted 5 times")
	flapping := healthy.DeepCopy()
	flapping.Status.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt = metav1.NewTime(now.Add(-2 * time.Minute))
	if podTrouble(flapping, now) == "" {
		t.Error("a Ready pod that restarted 2 minutes ago counted as healthy")
	}
}

// A controller that runs but reported a Warning about the held object fails.
func TestWarningOnTheHeldObjectMakesItFailing(t *testing.T) {
	cc := ControllerCheck{Manager: "widget-operator", Present: Present, Evidence: "pod ops/widget-operator-0 is Ready"}
	ev := []corev1.Event{
		{Type: corev1.EventTypeNormal, Reason: "Cleaning", Source: corev1.EventSource{Component: "widget-operator"}, LastTimestamp: metav1.NewTime(now.Add(-time.Minute))},
		{Type: corev1.EventTypeWarning, Reason: "CleanupFailed", Message: "bucket not empty", Source: corev1.EventSource{Component: "widget-operator"}, LastTimestamp: metav1.NewTime(now.Add(-30 * time.Second)), Count: 4},
	}
	got := failingOnObject(cc, ev)
	if got.Present != Failing {
		t.Fatalf("%s, want failing", got.Present)
	}
	contains(t, "evidence", got.Evidence, "CleanupFailed bucket not empty (×4")
	other := failingOnObject(cc, []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "FailedKillPod", Source: corev1.EventSource{Component: "kubelet"}}})
	if other.Present != Present {
		t.Errorf("another component's Warning made the controller %s", other.Present)
	}
}

// A pod whose status names no container (never started, or a kwok pod) is
// not said to have an exited container, nor one that "runs on it now".
func TestNoContainerIsNotSaidToHaveExited(t *testing.T) {
	c := withFinalizer(terminating(), Absent)
	c.Containers, c.Pod.Status.ContainerStatuses = nil, nil
	c.Node, c.Lease, c.NodeGone = nil, nil, true
	r := Decide(c)
	for _, a := range r.Advice {
		lacks(t, "advice", a, "already exited", "runs on it now", "out-of-service taint is honest")
	}
	c = withFinalizer(terminating(), Absent)
	c.Containers, c.Pod.Status.ContainerStatuses, c.Pod.Spec.NodeName = nil, nil, ""
	for _, a := range Decide(c).Advice {
		lacks(t, "advice", a, "already exited")
	}
}

// Between two starts of a crash loop the status shows the last exit: it is said.
func TestPodTroubleSaysTheCurrentExit(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", RestartCount: 2,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-3 * time.Second))}}}}}}
	contains(t, "trouble", podTrouble(p, now), "exited 3s ago (exit 2, Error)")
}
