package evidence

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *corev1.Pod {
	dt := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC))
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "held", Namespace: "ns", UID: "u1", ResourceVersion: "42",
			DeletionTimestamp: &dt, DeletionGracePeriodSeconds: &grace, Finalizers: []string{"lab.example.com/cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{NodeName: "w1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodSucceeded,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "heartbeat", ContainerID: "containerd://abc123",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
			}},
		},
	}
}

func TestStateOf(t *testing.T) {
	s := StateOf(testPod())
	if s.DeletionTimestamp == nil || *s.DeletionGracePeriodSeconds != 30 || !s.HasFinalizer("lab.example.com/cleanup") || !s.Terminal() || s.Ready != "False" {
		t.Fatalf("state %+v", s)
	}
	c, ok := s.Container("heartbeat")
	if !ok || c.ContainerID != "abc123" || c.State != "terminated" || *c.ExitCode != 0 || c.Reason != "Completed" {
		t.Fatalf("container %+v", c)
	}
}

func TestParseInspect(t *testing.T) {
	raw := []byte(`{"status":{"id":"abc","metadata":{"attempt":0,"name":"heartbeat"},"state":"CONTAINER_EXITED","createdAt":"2026-12-02T10:00:00.1Z","startedAt":"2026-12-02T10:00:00.2Z","finishedAt":"2026-12-02T10:00:31.5Z","exitCode":137,"reason":"Error"},"info":{"pid":0}}`)
	in, err := ParseInspect(raw)
	if err != nil {
		t.Fatal(err)
	}
	if in.ID != "abc" || in.State != ContainerExited || in.ExitCode != 137 || in.FinishedAt == nil || in.FinishedAt.Second() != 31 {
		t.Fatalf("%+v", in)
	}
	running := []byte(`[{"status":{"id":"abc","state":"CONTAINER_RUNNING","startedAt":"2026-12-02T10:00:00.2Z","finishedAt":"0001-01-01T00:00:00Z","exitCode":0},"info":{"pid":4242}}]`)
	in, err = ParseInspect(running)
	if err != nil {
		t.Fatal(err)
	}
	if in.State != ContainerRunning || in.FinishedAt != nil || in.PID != 4242 {
		t.Fatalf("%+v", in)
	}
	if _, err := ParseInspect([]byte(`{"status":{}}`)); err == nil {
		t.Fatal("an empty status must not parse")
	}
}

func TestSummariseLog(t *testing.T) {
	raw := "start pid=1 interval=1s term_delay=0s time=2026-12-02T10:00:00Z\n" +
		"heartbeat seq=1 time=2026-12-02T10:00:01Z\nheartbeat seq=2 time=2026-12-02T10:00:02Z\n" +
		"signal=SIGTERM received time=2026-12-02T10:00:02.5Z exiting_in=0s\nexit code=0 time=2026-12-02T10:00:02.6Z\n"
	s := SummariseLog([]byte(raw))
	if s == nil || !s.Started || s.LastSeq != 2 || s.Signal != "SIGTERM" || !s.ExitLogged || *s.ExitCodeLogged != 0 {
		t.Fatalf("%+v", s)
	}
}
