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

func TestGapsOverlapping(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	rec := &Record{Gaps: []WatchGap{
		{Source: WatchPods, From: at(10), To: at(13), Why: "stream ended"},
		{Source: WatchNodes, From: at(10), To: at(13), Why: "stream ended"},
		{Source: WatchPods, From: at(50)}, // still open
	}}
	for _, tc := range []struct {
		name     string
		source   string
		from, to time.Time
		want     int
	}{
		{"window inside the gap", WatchPods, at(11), at(12), 1},
		{"gap inside the window", WatchPods, at(5), at(20), 1},
		{"window ends as the gap begins", WatchPods, at(0), at(10), 1},
		{"window begins as the gap ends", WatchPods, at(13), at(20), 1},
		{"window before the gap", WatchPods, at(0), at(9), 0},
		{"window between the gaps", WatchPods, at(14), at(49), 0},
		{"an open gap lasts to the end", WatchPods, at(90), at(95), 1},
		{"an instant inside a gap", WatchPods, at(12), at(12), 1},
		{"other source", WatchEvents, at(0), at(100), 0},
		{"both pods gaps", WatchPods, at(0), at(100), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rec.GapsOverlapping(tc.source, tc.from, tc.to); len(got) != tc.want {
				t.Fatalf("%d gaps (%+v), want %d", len(got), got, tc.want)
			}
		})
	}
}
