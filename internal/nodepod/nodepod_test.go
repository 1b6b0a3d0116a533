package nodepod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pod in phase Running whose container the runtime failed to start
// cannot take an exec: the wait goes on until the container runs.
func TestContainerRunning(t *testing.T) {
	startFailed := corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "RunContainerError"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128}}}
	running := corev1.ContainerStatus{Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	for _, tc := range []struct {
		name string
		cs   []corev1.ContainerStatus
		want bool
	}{
		{"no status yet", nil, false},
		{"start failed, phase Running", []corev1.ContainerStatus{startFailed}, false},
		{"running", []corev1.ContainerStatus{running}, true},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: tc.cs}}
		if got := containerRunning(p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
