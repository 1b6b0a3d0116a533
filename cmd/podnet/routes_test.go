package main

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type nodeOpt func(*corev1.Node)

func node(name string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func podCIDRs(c ...string) nodeOpt {
	return func(n *corev1.Node) { n.Spec.PodCIDR = c[0]; n.Spec.PodCIDRs = c }
}

// legacyPodCIDR sets only spec.podCIDR, as before dual-stack.
func legacyPodCIDR(c string) nodeOpt { return func(n *corev1.Node) { n.Spec.PodCIDR = c } }

func addr(t corev1.NodeAddressType, a string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: t, Address: a})
	}
}

func internalIP(a string) nodeOpt { return addr(corev1.NodeInternalIP, a) }

func label(k, v string) nodeOpt      { return func(n *corev1.Node) { n.Labels[k] = v } }
func annotation(k, v string) nodeOpt { return func(n *corev1.Node) { n.Annotations[k] = v } }

func rt(node, dst, gw string) route {
	return route{Node: node, Dst: netip.MustParsePrefix(dst), Gw: netip.MustParseAddr(gw)}
}

func TestDesiredRoutes(t *testing.T) {
	self := "kind-control-plane"
	tests := []struct {
		name      string
		nodes     []*corev1.Node
		want      []route
		wantSkips []skip
	}{
		{name: "no nodes"},
		{
			name:  "only self",
			nodes: []*corev1.Node{node(self, podCIDRs("10.244.0.0/24"), internalIP("172.18.0.2"))},
		},
		{
			name: "three nodes, sorted by podCIDR",
			nodes: []*corev1.Node{
				node("kind-worker2", podCIDRs("10.244.2.0/24"), internalIP("172.18.0.4")),
				node(self, podCIDRs("10.244.0.0/24"), internalIP("172.18.0.2")),
				node("kind-worker", podCIDRs("10.244.1.0/24"), addr(corev1.NodeHostName, "kind-worker"), internalIP("172.18.0.3")),
			},
			want: []route{rt("kind-worker", "10.244.1.0/24", "172.18.0.3"), rt("kind-worker2", "10.244.2.0/24", "172.18.0.4")},
		},
		{
			name:  "legacy spec.podCIDR only",
			nodes: []*corev1.Node{node("w", legacyPodCIDR("10.244.1.0/24"), internalIP("172.18.0.3"))},
			want:  []route{rt("w", "10.244.1.0/24", "172.18.0.3")},
		},
		{
			name:      "no podCIDR yet",
			nodes:     []*corev1.Node{node("w", internalIP("172.18.0.3"))},
			wantSkips: []skip{{"w", "no podCIDR"}},
		},
		{
			name:      "no InternalIP",
			nodes:     []*corev1.Node{node("w", podCIDRs("10.244.1.0/24"), addr(corev1.NodeExternalIP, "1.2.3.4"))},
			wantSkips: []skip{{"w", "no InternalIP"}},
		},
		{
			name: "kwok fake nodes, by label or annotation",
			nodes: []*corev1.Node{
				node("kwok-a", podCIDRs("10.244.3.0/24"), internalIP("10.244.1.5"), label("type", "kwok")),
				node("kwok-b", podCIDRs("10.244.4.0/24"), internalIP("10.244.1.5"), annotation("kwok.x-k8s.io/node", "fake")),
			},
			wantSkips: []skip{{"kwok-a", "kwok fake node"}, {"kwok-b", "kwok fake node"}},
		},
		{
			name:  "dual-stack: gateway of the same family",
			nodes: []*corev1.Node{node("w", podCIDRs("10.244.1.0/24", "fd00:10:244:1::/64"), internalIP("fc00:f853::3"), internalIP("172.18.0.3"))},
			want:  []route{rt("w", "10.244.1.0/24", "172.18.0.3"), rt("w", "fd00:10:244:1::/64", "fc00:f853::3")},
		},
		{
			name:      "dual-stack podCIDRs, IPv4 InternalIP only",
			nodes:     []*corev1.Node{node("w", podCIDRs("10.244.1.0/24", "fd00:10:244:1::/64"), internalIP("172.18.0.3"))},
			want:      []route{rt("w", "10.244.1.0/24", "172.18.0.3")},
			wantSkips: []skip{{"w", "no InternalIP of the family of podCIDR fd00:10:244:1::/64"}},
		},
		{
			name:      "bad podCIDR and bad address",
			nodes:     []*corev1.Node{node("w", podCIDRs("10.244.1.0"), internalIP("nonsense"), internalIP("172.18.0.3"))},
			wantSkips: []skip{{"w", `bad podCIDR "10.244.1.0"`}},
		},
		{
			name:  "host bits masked",
			nodes: []*corev1.Node{node("w", podCIDRs("10.244.1.9/24"), internalIP("172.18.0.3"))},
			want:  []route{rt("w", "10.244.1.0/24", "172.18.0.3")},
		},
		{
			name: "two nodes claim one podCIDR: first by name wins",
			nodes: []*corev1.Node{
				node("b", podCIDRs("10.244.1.0/24"), internalIP("172.18.0.4")),
				node("a", podCIDRs("10.244.1.0/24"), internalIP("172.18.0.3")),
			},
			want:      []route{rt("a", "10.244.1.0/24", "172.18.0.3")},
			wantSkips: []skip{{"b", "podCIDR 10.244.1.0/24 already routed to node a"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, skips := desiredRoutes(tc.nodes, self)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("routes:\ngot  %v\nwant %v", got, tc.want)
			}
			if !reflect.DeepEqual(skips, tc.wantSkips) {
				t.Errorf("skips:\ngot  %v\nwant %v", skips, tc.wantSkips)
			}
		})
	}
}

func TestPlanRoutes(t *testing.T) {
	a := rt("a", "10.244.1.0/24", "172.18.0.3")
	b := rt("b", "10.244.2.0/24", "172.18.0.4")
	bMoved := rt("b", "10.244.2.0/24", "172.18.0.9")
	stale := rt("", "10.244.9.0/24", "172.18.0.9")
	kernel := func(r route) route { r.Node = ""; return r } // the kernel knows no node names
	tests := []struct {
		name                string
		desired, current    []route
		wantRepl, wantRemov []route
	}{
		{name: "nothing"},
		{name: "all new", desired: []route{a, b}, wantRepl: []route{a, b}},
		{name: "in sync", desired: []route{a, b}, current: []route{kernel(a), kernel(b)}},
		{name: "gateway changed", desired: []route{a, bMoved}, current: []route{kernel(a), kernel(b)}, wantRepl: []route{bMoved}},
		{name: "node deleted", desired: []route{a}, current: []route{kernel(a), kernel(b)}, wantRemov: []route{kernel(b)}},
		{name: "stale after restart", desired: []route{a}, current: []route{stale}, wantRepl: []route{a}, wantRemov: []route{stale}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repl, remov := planRoutes(tc.desired, tc.current)
			if !reflect.DeepEqual(repl, tc.wantRepl) || !reflect.DeepEqual(remov, tc.wantRemov) {
				t.Errorf("replace %v, remove %v; want replace %v, remove %v", repl, remov, tc.wantRepl, tc.wantRemov)
			}
		})
	}
}
