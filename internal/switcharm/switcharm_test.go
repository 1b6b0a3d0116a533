package switcharm

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/termlab/termlab/internal/clusterswitch"
)

// The switch may touch only what it undoes and itself, each by name.
func TestRulesNameEveryObject(t *testing.T) {
	for _, tc := range []struct {
		undo clusterswitch.Undo
		want string
	}{
		{clusterswitch.Undo{Node: "w2", TaintKey: "k", TaintEffect: "NoExecute", TaintedBy: "termlab.dev/tainted-by-run"}, "namespaces/ns clusterroles/cr nodes/w2"},
		{clusterswitch.Undo{APIService: "v1.x.unavailable.termlab.dev"}, "namespaces/ns clusterroles/cr apiservices/v1.x.unavailable.termlab.dev"},
		{clusterswitch.Undo{NodePods: "termlab-nodes-x"}, "namespaces/ns,termlab-nodes-x clusterroles/cr"},
	} {
		spec := clusterswitch.Spec{LeaseName: "termlab-run-lock", Undo: tc.undo, Self: clusterswitch.Self{Namespace: "ns", ClusterRole: "cr", ClusterRoleBinding: "crb"}}
		var touched []string
		for _, r := range Rules(spec) {
			if len(r.ResourceNames) == 0 {
				t.Errorf("%s: rule %+v names no object: it would grant every one", tc.undo.What(), r)
			}
			for _, v := range r.Verbs {
				if v == "list" || v == "watch" || v == "create" || v == "*" {
					t.Errorf("%s: rule %+v grants %s", tc.undo.What(), r, v)
				}
			}
			touched = append(touched, r.Resources[0]+"/"+strings.Join(r.ResourceNames, ","))
		}
		if got, want := strings.Join(touched, " "), "leases/termlab-run-lock "+tc.want; got != want {
			t.Errorf("rules touch %s, want %s", got, want)
		}
	}
}

// A switch's names carry no run id (the run's audit tail keeps what is
// named with it) and differ by switch.
func TestName(t *testing.T) {
	id := "20261207-000000-abcd"
	a, b := Name(id, 1), Name(id, 2)
	if a == b || strings.Contains(a, id) || len(a) > 63 || !strings.HasPrefix(a, "termlab-switch-") {
		t.Errorf("switch names %q, %q for run %s", a, b, id)
	}
}

// A switch that exited, now or before a restart, is not armed, however
// Ready its container looks for a moment.
func TestExitedOnce(t *testing.T) {
	refused := &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}
	startErr := &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128, Message: "failed to create containerd task: runc create failed\n"}
	for _, tc := range []struct {
		name string
		cs   corev1.ContainerStatus
		want string
	}{
		{"running", corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, ""},
		{"exited", corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Terminated: refused}}, "Error, code 2"},
		{"running again after exiting", corev1.ContainerStatus{Ready: true, RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: corev1.ContainerState{Terminated: refused}}, "Error, code 2"},
		{"never started", corev1.ContainerStatus{State: corev1.ContainerState{Terminated: startErr}}, ""},
		{"started on the kubelet's second try", corev1.ContainerStatus{Ready: true, RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: corev1.ContainerState{Terminated: startErr}}, ""},
		{"ran and exited after a failed start", corev1.ContainerStatus{RestartCount: 1, State: corev1.ContainerState{Terminated: refused}, LastTerminationState: corev1.ContainerState{Terminated: startErr}}, "Error, code 2"},
		{"restarted, its end not kept", corev1.ContainerStatus{RestartCount: 3, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, "restarted 3 times"},
	} {
		if got := exitedOnce(tc.cs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// While the runtime fails to start the switch, the wait says why, in the
// runtime's words.
func TestStartFailed(t *testing.T) {
	cs := corev1.ContainerStatus{RestartCount: 1, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128, Message: "unable to freeze\n"}}}
	if got, want := startFailed(cs), "StartError, code 128: unable to freeze"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := startFailed(corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}); got != "" {
		t.Errorf("a process that ran and exited: %q, want none", got)
	}
}
