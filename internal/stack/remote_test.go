package stack

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// Flags that only mean something with a kubeconfig are refused without
// one, flag or setting, before anything runs; with one they apply.
func TestRemoteFlagsNeedAKubeconfig(t *testing.T) {
	for _, name := range []string{EnvKubeconfig, EnvContext, EnvNodeAccess, EnvControlPlaneAccess, EnvAllowNodeFaults, EnvAllowClusterFaults, EnvWorkloadImage} {
		t.Setenv(name, "")
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		f    RemoteFlags
		want string // "" for no refusal
	}{
		{"nothing", nil, RemoteFlags{}, ""},
		{"-nodeaccess", nil, RemoteFlags{NodeAccess: ptr(true)}, "-nodeaccess: only with -kubeconfig"},
		{"-nodeaccess=false", nil, RemoteFlags{NodeAccess: ptr(false)}, "-nodeaccess: only with -kubeconfig"},
		{"-context", nil, RemoteFlags{Context: ptr("prod")}, "-context: only with -kubeconfig"},
		{"-allownodefaults", nil, RemoteFlags{AllowNodeFaults: ptr("w1")}, "-allownodefaults: only with"},
		{"-allowclusterfaults", nil, RemoteFlags{AllowClusterFaults: ptr(true)}, "-allowclusterfaults: only with"},
		{"-controlplaneaccess", nil, RemoteFlags{ControlPlaneAccess: ptr(true)}, "-controlplaneaccess: only with"},
		{"a leftover control-plane setting", map[string]string{EnvControlPlaneAccess: "1"}, RemoteFlags{}, "-controlplaneaccess (TERMLAB_CONTROL_PLANE_ACCESS): only with"},
		{"a leftover setting", map[string]string{EnvAllowNodeFaults: "w1"}, RemoteFlags{}, "-allownodefaults (TERMLAB_ALLOW_NODE_FAULTS): only with"},
		{"two at once", map[string]string{EnvNodeAccess: "1"}, RemoteFlags{NodeAccess: ptr(true), Context: ptr("c")}, "-nodeaccess (TERMLAB_NODE_ACCESS), -context: only with -kubeconfig=<file> (TERMLAB_KUBECONFIG), which runs the lab on that cluster; without it the lab runs on termlab's own cluster, where they would be ignored. Add -kubeconfig, or leave them out"},
		{"with -kubeconfig", nil, RemoteFlags{Kubeconfig: ptr("k"), NodeAccess: ptr(true), AllowNodeFaults: ptr("w1"), AllowClusterFaults: ptr(true)}, ""},
		{"with TERMLAB_KUBECONFIG", map[string]string{EnvKubeconfig: "k", EnvAllowNodeFaults: "w1"}, RemoteFlags{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			r, err := RemoteFromEnv(tc.f)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted %+v, want a refusal with %q", r, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("refusal %q lacks %q", err, tc.want)
			}
		})
	}
	t.Run("the control plane is its own opt-in", func(t *testing.T) {
		r, err := RemoteFromEnv(RemoteFlags{Kubeconfig: ptr("k"), NodeAccess: ptr(true)})
		if err != nil || !r.NodeAccess || r.ControlPlaneAccess {
			t.Errorf("-nodeaccess alone: %+v, %v; want node access without the control plane", r, err)
		}
		r, err = RemoteFromEnv(RemoteFlags{Kubeconfig: ptr("k"), ControlPlaneAccess: ptr(true)})
		if err != nil || !r.NodeAccess || !r.ControlPlaneAccess {
			t.Errorf("-controlplaneaccess: %+v, %v; want node access it implies, the control plane's included", r, err)
		}
	})
	t.Run("what applies with a kubeconfig", func(t *testing.T) {
		t.Setenv(EnvAllowNodeFaults, "from-env")
		r, err := RemoteFromEnv(RemoteFlags{Kubeconfig: ptr("k"), AllowNodeFaults: ptr("w1"), AllowClusterFaults: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if r.FaultNode != "w1" || !r.NodeAccess || !r.ClusterFaults {
			t.Errorf("%+v: want the flag's fault node (it wins over the setting), node access it implies, and cluster faults", r)
		}
	})
}

func pod(ns, name string, mutate func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if mutate != nil {
		mutate(&p)
	}
	return p
}

func ownedBy(kind, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr(true)}}
	}
}

// Only DaemonSet pods, static pods and termlab's own may stay on a node
// that a lab faults; everything else is in the way, finished pods too.
func TestPodsInTheWay(t *testing.T) {
	pods := []corev1.Pod{
		pod("kube-system", "kube-proxy-x", ownedBy("DaemonSet", "kube-proxy")),
		pod("kube-system", "etcd-node", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		pod("termlab-stuck-1", "stuck", func(p *corev1.Pod) { p.Labels = map[string]string{"termlab.dev/run-id": "1"} }),
		pod("termlab-switch-ab-1", "switch", func(p *corev1.Pod) { p.Labels = map[string]string{"termlab.dev/switch-of-run": "1"} }),
		pod("termlab-switch-cd-1", "switch", func(p *corev1.Pod) { p.Labels = map[string]string{"termlab.dev/switch-of-node-access": "2"} }),
		pod("tenant", "web-1", ownedBy("ReplicaSet", "web-abc")),
		pod("tenant", "db-0", ownedBy("StatefulSet", "db")),
		pod("tenant", "bare", nil),
		pod("tenant", "job-done", func(p *corev1.Pod) { ownedBy("Job", "j")(p); p.Status.Phase = corev1.PodSucceeded }),
		// A DaemonSet reference that is not the controller does not count.
		pod("tenant", "adopted", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d"}}
		}),
	}
	var got []string
	for _, p := range PodsInTheWay(pods) {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	if want := "tenant/adopted tenant/bare tenant/db-0 tenant/job-done tenant/web-1"; strings.Join(got, " ") != want {
		t.Errorf("in the way: %v, want %s", got, want)
	}
}

// The refusal names what is in the way and the commands that clear it,
// spelt for the cluster the user named; a cordoned, empty node passes.
func TestFaultNodeRefusal(t *testing.T) {
	r := Remote{Kubeconfig: "/tmp/k", Context: "shared"}
	if got := faultNodeRefusal("w1", true, nil, r); got != "" {
		t.Errorf("a cordoned node with nothing in the way was refused: %s", got)
	}
	got := faultNodeRefusal("w1", false, []corev1.Pod{pod("tenant", "web-1", ownedBy("ReplicaSet", "web-abc")), pod("tenant", "bare", nil)}, r)
	for _, want := range []string{
		"-allownodefaults=w1",
		"not cordoned",
		"`kubectl --kubeconfig=/tmp/k --context=shared cordon w1`",
		"2 pod(s) on it are neither DaemonSet pods nor termlab's",
		"tenant/web-1 (Running, owned by ReplicaSet web-abc)",
		"tenant/bare (Running, no controller: drain needs --force",
		"`kubectl --kubeconfig=/tmp/k --context=shared drain w1 --ignore-daemonsets --delete-emptydir-data`",
		"`kubectl --kubeconfig=/tmp/k --context=shared uncordon w1` gives the node back",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal lacks %q:\n%s", want, got)
		}
	}
	if got := faultNodeRefusal("w1", true, []corev1.Pod{pod("tenant", "web-1", nil)}, Remote{Kubeconfig: "k"}); strings.Contains(got, "not cordoned") || !strings.Contains(got, "drain w1") {
		t.Errorf("a cordoned node with a pod in the way:\n%s", got)
	}
	var many []corev1.Pod
	for i := 0; i < maxPodsListed+5; i++ {
		many = append(many, pod("tenant", "p"+strings.Repeat("x", i), nil))
	}
	if got := faultNodeRefusal("w1", true, many, r); !strings.Contains(got, "… and 5 more") {
		t.Errorf("a busy node's refusal does not cut the list:\n%s", got)
	}
}

// The node named for faults is a worker even when cordoned (it must be);
// any other cordoned node is not.
func TestRemoteNodesKeepTheCordonedFaultNode(t *testing.T) {
	node := func(name string, cordoned bool, labels map[string]string) corev1.Node {
		return corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       corev1.NodeSpec{Unschedulable: cordoned},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
	}
	nodes := []corev1.Node{
		node("cp", false, map[string]string{"node-role.kubernetes.io/control-plane": ""}),
		node("w1", true, nil), node("w2", false, nil), node("w3", true, nil),
	}
	cp, workers := remoteNodes(nodes, "w1")
	if cp != "cp" || strings.Join(workers, ",") != "w1,w2" {
		t.Errorf("control plane %q, workers %v; want cp and w1,w2 (w3 cordoned and not named)", cp, workers)
	}
	if _, workers := remoteNodes(nodes, ""); strings.Join(workers, ",") != "w2" {
		t.Errorf("with no fault node: workers %v, want w2", workers)
	}
}
