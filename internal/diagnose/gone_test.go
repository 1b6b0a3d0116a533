package diagnose

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/kubelet"
)

// psOutput is `crictl ps -a -o json` as crictl 1.37 prints it: one running
// container of the force-deleted pod (trimmed to the fields read).
const psOutput = `{
  "containers": [
    {
      "id": "5e1f0c8a9b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
      "podSandboxId": "aa11",
      "metadata": {"name": "heartbeat", "attempt": 0},
      "state": "CONTAINER_RUNNING",
      "createdAt": "1796285100123456789",
      "labels": {"io.kubernetes.container.name": "heartbeat", "io.kubernetes.pod.name": "orphan", "io.kubernetes.pod.namespace": "ns", "io.kubernetes.pod.uid": "uid-old"}
    }
  ]
}`

// forceDeleted is a pod that is gone while crictl on its node (named by the
// Scheduled event) lists its container running and the kubelet inactive.
func forceDeleted(t *testing.T) Collected {
	t.Helper()
	list, err := ParsePs([]byte(psOutput))
	if err != nil {
		t.Fatal(err)
	}
	scheduled := corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "orphan", UID: "uid-old"},
		Reason:         "Scheduled", Message: "Successfully assigned ns/orphan to " + nodeName,
		LastTimestamp: metav1.NewTime(now.Add(-2 * time.Minute)),
	}
	return Collected{At: now, Namespace: "ns", Name: "orphan", Gone: &GoneCheck{
		Events: []corev1.Event{scheduled},
		Searched: []NodeSearch{{Node: nodeName, Why: "named by the Scheduled event of pod UID uid-old",
			NodeCheck:  NodeCheck{Command: "crictl ps", Output: "1 containers"},
			Containers: list,
			Kubelet:    NodeCheck{Command: "systemctl is-active kubelet", Output: "inactive"},
		}},
	}}
}

func TestParsePs(t *testing.T) {
	list, err := ParsePs([]byte(psOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "heartbeat" || list[0].PodUID != "uid-old" || list[0].State != ContainerRunning ||
		list[0].CreatedAt.UnixNano() != 1796285100123456789 {
		t.Fatalf("parsed %+v", list)
	}
	if _, err := ParsePs([]byte("level=fatal msg=\"connect: no such file\"")); err == nil {
		t.Error("crictl's error text parsed as a container list")
	}
}

func TestGonePodContainerStillRuns(t *testing.T) {
	r := Decide(forceDeleted(t))
	contains(t, "the answer", r.Answer, "does not exist in the API", "still runs", "heartbeat (5e1f0c8a9b7d6", "on "+nodeName, "kubelet on "+nodeName+" is not running")
	f := mustFind(t, r, FindLeftover(nodeName))
	if f.Level != Blocking || f.Verdict != "running" {
		t.Errorf("leftover finding %+v, want blocking running", f)
	}
	contains(t, "the advice", r.Advice[0], "start the kubelet on "+nodeName)
}

// The same search with the container exited contradicts "still runs".
func TestGonePodContainerExitedContradicts(t *testing.T) {
	c := forceDeleted(t)
	c.Gone.Searched[0].Containers[0].State = ContainerExited
	c.Gone.Searched[0].Kubelet.Output = "active"
	r := Decide(c)
	lacks(t, "the answer", r.Answer, "still runs")
	if f := mustFind(t, r, FindLeftover(nodeName)); f.Verdict != "exited" || f.Level != Info {
		t.Errorf("leftover finding %+v, want info exited", f)
	}
	c.Gone.Searched[0].Containers = nil
	r = Decide(c)
	contains(t, "the answer", r.Answer, "No container of it runs on "+nodeName)
}

// Without node access the answer must not say the process is gone.
func TestGonePodNotCheckedWithoutAccess(t *testing.T) {
	c := forceDeleted(t)
	c.Gone.Searched[0] = NodeSearch{Node: nodeName, Why: "named by the Scheduled event", NodeCheck: NodeCheck{NotChecked: "needs -nodeaccess"}}
	r := Decide(c)
	contains(t, "the answer", r.Answer, "was not checked on "+nodeName, "needs -nodeaccess")
	lacks(t, "the answer", r.Answer, "No container", "Its container still runs")
	if f := mustFind(t, r, FindLeftover(nodeName)); f.Level != NotChecked {
		t.Errorf("leftover finding %+v, want not-checked", f)
	}
	c.Gone = nil
	r = Decide(c)
	contains(t, "the answer", r.Answer, "does not exist", "was not checked")
}

// A terminating pod's volume still attached to its node is a warning; the
// same attachment detached contradicts it.
func TestVolumeStillAttached(t *testing.T) {
	c := terminating()
	pv := "pv-data"
	c.Volumes = Volumes{PVs: map[string]string{"data": pv}, Attachments: []storagev1.VolumeAttachment{{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-123"},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: nodeName, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
		Status:     storagev1.VolumeAttachmentStatus{Attached: true},
	}}}
	f := mustFind(t, Decide(c), FindVolumes)
	if f.Level != Warning || f.Verdict != "attached" {
		t.Errorf("volume finding %+v, want warning attached", f)
	}
	contains(t, "the finding", f.Text, "pv-data", "csi-123", nodeName)
	c.Volumes.Attachments[0].Status.Attached = false
	if f := mustFind(t, Decide(c), FindVolumes); f.Verdict != "detached" {
		t.Errorf("a detached volume gave %+v", f)
	}
	c.Volumes = Volumes{}
	if _, ok := Decide(c).Finding(FindVolumes); ok {
		t.Error("a pod without claims got a volume finding")
	}
}

func TestFreeDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "20261203-094102-ns-pod")
	for i, want := range []string{base, base + "-2", base + "-3"} {
		got := freeDir(base)
		if got != want {
			t.Fatalf("diagnosis %d: folder %s, want %s", i+1, got, want)
		}
		if err := os.MkdirAll(got, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A running container of a terminating pod with a preStop hook may be in
// its hook; the same pod not being deleted only names the hook.
func TestPreStopHookMayBeRunning(t *testing.T) {
	c := terminating()
	c.Pod.Spec.Containers = []corev1.Container{{Name: "app", Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Sleep: &corev1.SleepAction{Seconds: 25},
	}}}}
	f := mustFind(t, Decide(c), FindTermination)
	contains(t, "the termination finding", f.Text, "preStop hook (sleep 25 s)", "may be running now")
	c.Pod.DeletionTimestamp = nil
	f = mustFind(t, Decide(c), FindTermination)
	lacks(t, "the termination finding", f.Text, "may be running now")
}

// A gone pod whose node no Scheduled event names is not searched for on
// every node (a node pod each, up to a minute each) unless asked.
func TestGonePodSweepsNodesOnlyWhenAsked(t *testing.T) {
	for _, all := range []bool{false, true} {
		asked := 0
		src := Source{
			Client: fake.NewSimpleClientset(),
			Nodes:  func(context.Context) []string { return []string{"w1", "w2", "w3"} },
			Node: func(context.Context, string) (kubelet.Node, string) {
				asked++
				return nil, "no node access in this test"
			},
			SearchAllNodes: all,
		}
		c, _, err := Collect(context.Background(), src, "ns", "gone")
		if err != nil {
			t.Fatal(err)
		}
		r := Decide(c)
		switch {
		case !all && (asked != 0 || len(c.Gone.Searched) != 0):
			t.Errorf("without -allnodes %d nodes were asked, %d searched", asked, len(c.Gone.Searched))
		case !all:
			contains(t, "the answer", r.Answer, "no node was searched", "-allnodes")
		case asked != 3:
			t.Errorf("with -allnodes %d of 3 nodes were asked", asked)
		}
	}
}
