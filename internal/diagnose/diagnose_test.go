package diagnose

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	finalizer = "lab.example.com/cleanup"
	nodeName  = "termlab-worker2"
	manager   = "e2e.test"
)

var now = time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// terminating is a pod deleted with a 30 s grace period whose deadline
// passed 20 s before now, on a Ready node with a fresh lease and an active
// kubelet, container still running: each test turns one thing around.
func terminating() Collected {
	deadline := metav1.NewTime(now.Add(-20 * time.Second))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "ns", UID: "uid-1",
			DeletionTimestamp: &deadline, DeletionGracePeriodSeconds: ptr(int64(30)),
		},
		Spec: corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", ContainerID: "containerd://0123456789abcdef0123",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-time.Minute))}},
		}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(now.Add(-5 * time.Second)),
	}}}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-3 * time.Second)}}}
	return Collected{
		At: now, Pod: pod, Node: node, Lease: lease, Controllers: map[string]ControllerCheck{},
		DryRun:     DryRun{Skipped: "the pod has no finalizers"},
		Kubelet:    NodeCheck{Command: "systemctl is-active kubelet", Output: "active"},
		Containers: []ContainerCheck{{Name: "app", ID: "0123456789abcdef0123", NodeCheck: NodeCheck{Command: "crictl inspect 0123456789abcdef0123", Output: ContainerRunning}, State: ContainerRunning, PID: 42}},
	}
}

// withFinalizer adds the lab's finalizer, added by manager.
func withFinalizer(c Collected, present Presence) Collected {
	c.Pod.Finalizers = []string{finalizer}
	c.Pod.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{}}}`)}},
		{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:finalizers":{".":{},"v:\"` + finalizer + `\"":{}}}}`)}},
	}
	c.Controllers = map[string]ControllerCheck{finalizer: {Manager: manager, Present: present, Evidence: "evidence of the controller"}}
	c.DryRun = DryRun{Patch: FinalizersPatch}
	return c
}

func exited(c Collected) Collected {
	c.Containers[0].State, c.Containers[0].Output, c.Containers[0].PID = ContainerExited, ContainerExited, 0
	c.Pod.Status.Phase = corev1.PodSucceeded
	c.Pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(now.Add(-25 * time.Second))}}
	return c
}

func mustFind(t *testing.T, r Report, id string) Finding {
	t.Helper()
	f, ok := r.Finding(id)
	if !ok {
		t.Fatalf("no finding %s in %+v", id, r.Findings)
	}
	return f
}

func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

func lacks(t *testing.T, what, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("%s says %q, and must not:\n%s", what, w, s)
		}
	}
}

func TestFinalizerHeldWithItsManager(t *testing.T) {
	r := Decide(exited(withFinalizer(terminating(), Absent)))
	f := mustFind(t, r, FindFinalizer(finalizer))
	if f.Level != Blocking || f.Verdict != "holds the object" {
		t.Errorf("finding %+v, want blocking 'holds the object'", f)
	}
	contains(t, "the finding", f.Text, "added by "+manager, "No controller that could remove it")
	contains(t, "the answer", r.Answer, "held by finalizer "+finalizer+", added by "+manager+", whose controller is not running", "already exited")
	contains(t, "the advice", strings.Join(r.Advice, "\n"), "remove finalizer "+finalizer, "A force delete does not help")
}

func TestFinalizerContradicted(t *testing.T) {
	t.Run("no finalizer", func(t *testing.T) {
		r := Decide(terminating())
		if _, ok := r.Finding(FindFinalizer(finalizer)); ok {
			t.Error("a finalizer finding for a pod without finalizers")
		}
		lacks(t, "the answer", r.Answer, "finalizer")
	})
	t.Run("its controller runs", func(t *testing.T) {
		r := Decide(exited(withFinalizer(terminating(), Present)))
		contains(t, "the answer", r.Answer, "whose controller runs")
		lacks(t, "the answer", r.Answer, "not running")
	})
	t.Run("not deleted: carried, not holding", func(t *testing.T) {
		c := withFinalizer(terminating(), Absent)
		c.Pod.DeletionTimestamp, c.Pod.DeletionGracePeriodSeconds = nil, nil
		f := mustFind(t, Decide(c), FindFinalizer(finalizer))
		if f.Level == Blocking {
			t.Errorf("a finalizer on a pod nobody deletes holds nothing: %+v", f)
		}
	})
}

func TestFinalizerManagerFromManagedFields(t *testing.T) {
	c := withFinalizer(terminating(), Absent)
	if got := FinalizerManager(c.Pod, finalizer); got != manager {
		t.Errorf("FinalizerManager = %q, want %q", got, manager)
	}
	if got := FinalizerManager(c.Pod, "other.example.com/x"); got != "" {
		t.Errorf("FinalizerManager of a finalizer no entry owns = %q, want empty", got)
	}
}

func TestDeletionDeadlinePassed(t *testing.T) {
	r := Decide(terminating())
	f := mustFind(t, r, FindDeletion)
	if f.Verdict != "requested" || f.Level != Blocking {
		t.Errorf("finding %+v, want requested, blocking", f)
	}
	contains(t, "the finding", f.Text, "30 s grace period", "passed 20s ago", "07:59:10Z")
	contains(t, "the answer", r.Answer, "Terminating", "grace deadline passed 20s ago")
}

func TestDeletionDeadlineContradicted(t *testing.T) {
	t.Run("deadline ahead", func(t *testing.T) {
		c := terminating()
		c.Pod.DeletionTimestamp = ptr(metav1.NewTime(now.Add(10 * time.Second)))
		r := Decide(c)
		f := mustFind(t, r, FindDeletion)
		if f.Level == Blocking {
			t.Errorf("a deadline 10 s ahead is not passed: %+v", f)
		}
		contains(t, "the answer", r.Answer, "10s away")
		// A running container before the deadline is the kubelet's business, not a problem.
		if c := mustFind(t, r, FindContainer("app")); c.Level == Blocking {
			t.Errorf("running before the deadline flagged: %+v", c)
		}
	})
	t.Run("no deletion", func(t *testing.T) {
		c := terminating()
		c.Pod.DeletionTimestamp = nil
		r := Decide(c)
		if f := mustFind(t, r, FindDeletion); f.Verdict != "not requested" {
			t.Errorf("finding %+v, want not requested", f)
		}
		contains(t, "the answer", r.Answer, "not being deleted")
	})
}

// nodeDown makes the node NotReady, tainted unreachable, with a lease 50 s old.
func nodeDown(c Collected) Collected {
	c.Node.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(now.Add(-8 * time.Second)), LastHeartbeatTime: metav1.NewTime(now.Add(-50 * time.Second))}
	c.Node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}, {Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}
	c.Lease.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-50 * time.Second)}
	return c
}

func TestNodeNotReadyUnreachableOldLease(t *testing.T) {
	r := Decide(nodeDown(terminating()))
	if f := mustFind(t, r, FindNodeReady); f.Verdict != "NotReady" || f.Level != Blocking {
		t.Errorf("ready finding %+v", f)
	}
	if f := mustFind(t, r, FindNodeTaints); f.Verdict != "unreachable" {
		t.Errorf("taints finding %+v", f)
	}
	f := mustFind(t, r, FindNodeLease)
	if f.Verdict != "stale" {
		t.Errorf("lease finding %+v", f)
	}
	contains(t, "the lease finding", f.Text, "50s ago")
}

func TestNodeHealthyContradicts(t *testing.T) {
	r := Decide(terminating())
	for id, want := range map[string]string{FindNodeReady: "Ready", FindNodeTaints: "none", FindNodeLease: "fresh", FindKubelet: "active"} {
		if f := mustFind(t, r, id); f.Verdict != want || f.Level == Blocking {
			t.Errorf("%s: %+v, want %s and not blocking", id, f, want)
		}
	}
	lacks(t, "the answer", r.Answer, "NotReady", "not running")
}

func TestOutOfServiceTaint(t *testing.T) {
	c := nodeDown(terminating())
	c.Node.Spec.Taints = append(c.Node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
	f := mustFind(t, Decide(c), FindNodeTaints)
	if f.Verdict != "out-of-service" {
		t.Errorf("taints finding %+v", f)
	}
	contains(t, "the finding", f.Text, "force-deletes")
}

// stuck is lab:stuck's moment: ordinary delete, kubelet stopped, node
// NotReady and tainted, container running past the deadline.
func stuck() Collected {
	c := nodeDown(terminating())
	c.Pod.Name = "stuck"
	c.Kubelet.Output = "inactive"
	return c
}

func TestKubeletInactive(t *testing.T) {
	r := Decide(stuck())
	f := mustFind(t, r, FindKubelet)
	if f.Verdict != "inactive" || f.Level != Blocking {
		t.Errorf("kubelet finding %+v", f)
	}
	contains(t, "the answer", r.Answer, "kubelet on "+nodeName+" is not running", "NotReady", "cannot finish", "still running")
	advice := strings.Join(r.Advice, "\n")
	contains(t, "the advice", advice, "Safe: start the kubelet", "keeps running", "out-of-service taint", "Not honest here")
}

func TestKubeletActiveContradicts(t *testing.T) {
	r := Decide(terminating())
	lacks(t, "the advice", strings.Join(r.Advice, "\n"), "start the kubelet")
}

func TestContainerRunningPastDeadline(t *testing.T) {
	r := Decide(stuck())
	f := mustFind(t, r, FindContainer("app"))
	if f.Verdict != "running" || f.Level != Blocking {
		t.Errorf("container finding %+v", f)
	}
	contains(t, "the finding", f.Text, "still runs", "pid 42")
}

func TestContainerExitedContradicts(t *testing.T) {
	for _, state := range []string{ContainerExited, ContainerNotFound} {
		c := exited(stuck())
		c.Containers[0].State = state
		r := Decide(c)
		f := mustFind(t, r, FindContainer("app"))
		if f.Level == Blocking {
			t.Errorf("%s: %+v", state, f)
		}
		contains(t, "the answer", r.Answer, "already exited")
		lacks(t, "the answer", r.Answer, "still running")
		advice := strings.Join(r.Advice, "\n")
		contains(t, "the advice", advice, "no container of the pod runs")
		lacks(t, "the advice", advice, "Not honest here")
	}
}

func TestTerminationEvents(t *testing.T) {
	c := stuck()
	c.Events = []corev1.Event{
		{Reason: "Killing", Message: "Stopping container app", Count: 1, Source: corev1.EventSource{Component: "kubelet"}, LastTimestamp: metav1.NewTime(now.Add(-40 * time.Second))},
		{Reason: "FailedPreStopHook", Message: "PreStopHook failed", Count: 2, Source: corev1.EventSource{Component: "kubelet"}, LastTimestamp: metav1.NewTime(now.Add(-30 * time.Second))},
		{Reason: "Scheduled", Message: "assigned", LastTimestamp: metav1.NewTime(now.Add(-time.Minute))},
	}
	f := mustFind(t, Decide(c), FindTermination)
	if f.Verdict != "kill failed" {
		t.Errorf("termination finding %+v", f)
	}
	contains(t, "the finding", f.Text, "Killing: Stopping container app", "FailedPreStopHook", "×2")
	lacks(t, "the finding", f.Text, "Scheduled")

	t.Run("no kubelet event", func(t *testing.T) {
		f := mustFind(t, Decide(stuck()), FindTermination)
		if f.Verdict != "no kill seen" {
			t.Errorf("termination finding %+v", f)
		}
	})
	t.Run("terminated state", func(t *testing.T) {
		f := mustFind(t, Decide(exited(stuck())), FindTermination)
		if f.Verdict != "terminated" {
			t.Errorf("termination finding %+v", f)
		}
		contains(t, "the finding", f.Text, "container app terminated (exit 0, Completed")
	})
}

func TestDryRunRejectedByWebhook(t *testing.T) {
	err := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `admission webhook "finalizers.policy.example.com" denied the request: finalizers of pods in ns are managed by cleanup-operator`}}
	c := exited(withFinalizer(terminating(), Absent))
	c.DryRun = DryRunResult(FinalizersPatch, err)
	r := Decide(c)
	f := mustFind(t, r, FindDryRun)
	if f.Verdict != "rejected" || f.Level != Blocking {
		t.Errorf("dry-run finding %+v", f)
	}
	contains(t, "the finding", f.Text, `admission webhook "finalizers.policy.example.com"`, "HTTP 403", "cleanup-operator")
	contains(t, "the answer", r.Answer, `would be rejected by admission webhook "finalizers.policy.example.com"`)
	contains(t, "the advice", strings.Join(r.Advice, "\n"), "refused today")

	t.Run("a ValidatingAdmissionPolicy", func(t *testing.T) {
		err := &apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusUnprocessableEntity,
			Message: `pods "held" is forbidden: ValidatingAdmissionPolicy 'keep-finalizers' with binding 'keep-finalizers-binding' denied request: no`}}
		if got := RejectedBy(DryRunResult(FinalizersPatch, err)); got != "ValidatingAdmissionPolicy 'keep-finalizers' with binding 'keep-finalizers-binding'" {
			t.Errorf("RejectedBy = %q", got)
		}
	})
}

func TestDryRunAcceptedContradicts(t *testing.T) {
	c := exited(withFinalizer(terminating(), Absent))
	c.DryRun = DryRunResult(FinalizersPatch, nil)
	r := Decide(c)
	if f := mustFind(t, r, FindDryRun); f.Verdict != "accepted" || f.Level == Blocking {
		t.Errorf("dry-run finding %+v", f)
	}
	contains(t, "the answer", r.Answer, "would be accepted")
	lacks(t, "the advice", strings.Join(r.Advice, "\n"), "refused")
	// No finalizers: no dry-run finding at all.
	if _, ok := Decide(terminating()).Finding(FindDryRun); ok {
		t.Error("a dry-run finding for a pod without finalizers")
	}
}

func TestNodeChecksNotCheckedWithoutAccess(t *testing.T) {
	c := stuck()
	why := "needs -nodeaccess"
	c.Kubelet = NodeCheck{NotChecked: why}
	c.Containers[0] = ContainerCheck{Name: "app", ID: c.Containers[0].ID, NodeCheck: NodeCheck{NotChecked: why}}
	r := Decide(c)
	for _, id := range []string{FindKubelet, FindContainer("app")} {
		f := mustFind(t, r, id)
		if f.Level != NotChecked || f.Verdict != "not checked" {
			t.Errorf("%s: %+v, want not checked", id, f)
		}
		contains(t, id, f.Text, why)
	}
	contains(t, "the answer", r.Answer, "NotReady", "was not checked")
	lacks(t, "the answer", r.Answer, "still running", "already exited", "kubelet on "+nodeName+" is not running")
	advice := strings.Join(r.Advice, "\n")
	contains(t, "the advice", advice, "Unknown risk")
	lacks(t, "the advice", advice, "start the kubelet", "Low risk")

	t.Run("with access it is checked", func(t *testing.T) {
		r := Decide(stuck())
		for _, id := range []string{FindKubelet, FindContainer("app")} {
			if f := mustFind(t, r, id); f.Level == NotChecked {
				t.Errorf("%s not checked with access: %+v", id, f)
			}
		}
	})
	t.Run("a failing command is not an answer", func(t *testing.T) {
		c := stuck()
		c.Kubelet = NodeCheck{Command: "systemctl is-active kubelet", Err: "docker exec: no such container"}
		if f := mustFind(t, Decide(c), FindKubelet); f.Level != NotChecked {
			t.Errorf("kubelet finding %+v", f)
		}
	})
}

func TestWriteDropsCredentials(t *testing.T) {
	dir := t.TempDir()
	r := Decide(stuck())
	raw := Raw{PodFile: []byte(`{"kind":"Pod"}`), EventsFile: []byte(`{"token": "abcdefghijklmnop"}`)}
	s, err := Write(dir, r, raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Dropped) != 1 || !strings.HasPrefix(s.Dropped[0], EventsFile) {
		t.Errorf("dropped %v, want %s", s.Dropped, EventsFile)
	}
	if _, err := os.Stat(filepath.Join(dir, EventsFile)); !os.IsNotExist(err) {
		t.Errorf("%s was written: %v", EventsFile, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(string(md), "## Answer"), strings.Index(string(md), "## Findings"); i < 0 || j < i {
		t.Errorf("report.md does not open with its answer:\n%s", md)
	}
	contains(t, "report.md", string(md), "Left out because they held something credential-like", "[raw/pod.json](raw/pod.json)")
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil {
		t.Error(err)
	}
}

func TestHealthyPodNothingToDo(t *testing.T) {
	c := terminating()
	c.Pod.DeletionTimestamp, c.Pod.DeletionGracePeriodSeconds = nil, nil
	r := Decide(c)
	contains(t, "the answer", r.Answer, "not being deleted", "runs on the node")
	lacks(t, "the answer", r.Answer, "still running")
	advice := strings.Join(r.Advice, "\n")
	contains(t, "the advice", advice, "Nothing to do")
	lacks(t, "the advice", advice, "force delete", "out-of-service")
}

func TestForceDeletedSaysSo(t *testing.T) {
	c := withFinalizer(terminating(), Absent)
	c.Pod.DeletionGracePeriodSeconds = ptr(int64(0))
	r := Decide(c)
	contains(t, "the answer", r.Answer, "force-deleted (grace period 0) 20s ago", "(evidence of the controller)")
	lacks(t, "the answer", r.Answer, "0 s grace deadline")
	// Once the containers stopped, grace 0 may be the kubelet's own final delete.
	c = exited(c)
	r = Decide(c)
	contains(t, "the answer", r.Answer, "a force delete, or the kubelet's final delete")
	lacks(t, "the answer", r.Answer, "force-deleted (grace period 0)")
	// A pod never scheduled gets grace 0 from the API server: not a force delete.
	c.Pod.Spec.NodeName = ""
	r = Decide(c)
	contains(t, "the answer", r.Answer, "grace period 0 because it was never scheduled")
	lacks(t, "the answer", r.Answer, "force-deleted")
}

func TestDryRunForbiddenByRBACIsNotAnAnswer(t *testing.T) {
	c := exited(withFinalizer(terminating(), Absent))
	c.DryRun = DryRunResult(FinalizersPatch, apierrors.NewForbidden(corev1.Resource("pods"), "held", nil))
	r := Decide(c)
	if f := mustFind(t, r, FindDryRun); f.Level != NotChecked {
		t.Errorf("dry-run finding %+v, want not checked", f)
	}
	lacks(t, "the answer", r.Answer, "rejected", "accepted")
}
