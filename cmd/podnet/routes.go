package main

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// route is a route to another node's podCIDR via that node's InternalIP.
type route struct {
	Node string // for logs; not part of the kernel route
	Dst  netip.Prefix
	Gw   netip.Addr
}

func (r route) String() string { return r.Dst.String() + " via " + r.Gw.String() }

// skip says why a node (or one of its podCIDRs) gets no route.
type skip struct {
	Node   string
	Reason string
}

// kwok's fake nodes have no network to route to.
const (
	kwokLabel, kwokLabelValue = "type", "kwok"
	kwokAnnotation, kwokFake  = "kwok.x-k8s.io/node", "fake"
)

// nodePodCIDRs returns spec.podCIDRs, or spec.podCIDR on its own.
func nodePodCIDRs(n *corev1.Node) []string {
	if len(n.Spec.PodCIDRs) > 0 {
		return n.Spec.PodCIDRs
	}
	if n.Spec.PodCIDR != "" {
		return []string{n.Spec.PodCIDR}
	}
	return nil
}

func isFake(n *corev1.Node) bool {
	return n.Labels[kwokLabel] == kwokLabelValue || n.Annotations[kwokAnnotation] == kwokFake
}

// desiredRoutes computes, for every node but self, a route from each of its
// podCIDRs to its InternalIP of the same IP family. It skips nodes without a
// podCIDR or InternalIP and kwok's fake nodes. Routes are sorted by Dst; if
// two nodes claim one podCIDR the first by name wins.
func desiredRoutes(nodes []*corev1.Node, self string) ([]route, []skip) {
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	var routes []route
	var skips []skip
	owner := map[netip.Prefix]string{}
	for _, n := range nodes {
		if n.Name == self {
			continue
		}
		if isFake(n) {
			skips = append(skips, skip{n.Name, "kwok fake node"})
			continue
		}
		cidrs := nodePodCIDRs(n)
		if len(cidrs) == 0 {
			skips = append(skips, skip{n.Name, "no podCIDR"})
			continue
		}
		var ips []netip.Addr
		for _, a := range n.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				ips = append(ips, ip.Unmap())
			}
		}
		if len(ips) == 0 {
			skips = append(skips, skip{n.Name, "no InternalIP"})
			continue
		}
		for _, c := range cidrs {
			dst, err := netip.ParsePrefix(c)
			if err != nil {
				skips = append(skips, skip{n.Name, fmt.Sprintf("bad podCIDR %q", c)})
				continue
			}
			dst = dst.Masked()
			i := slices.IndexFunc(ips, func(ip netip.Addr) bool { return ip.Is4() == dst.Addr().Is4() })
			if i < 0 {
				skips = append(skips, skip{n.Name, "no InternalIP of the family of podCIDR " + dst.String()})
				continue
			}
			if o, dup := owner[dst]; dup {
				skips = append(skips, skip{n.Name, "podCIDR " + dst.String() + " already routed to node " + o})
				continue
			}
			owner[dst] = n.Name
			routes = append(routes, route{Node: n.Name, Dst: dst, Gw: ips[i]})
		}
	}
	slices.SortFunc(routes, func(a, b route) int { return a.Dst.Compare(b.Dst) })
	return routes, skips
}

// planRoutes compares the desired routes with those podnet has in the kernel
// (current) and returns what to replace and what to delete. A route whose
// gateway changed is replaced, not deleted.
func planRoutes(desired, current []route) (replace, remove []route) {
	have := map[netip.Prefix]netip.Addr{}
	for _, r := range current {
		have[r.Dst] = r.Gw
	}
	want := map[netip.Prefix]bool{}
	for _, r := range desired {
		want[r.Dst] = true
		if gw, ok := have[r.Dst]; !ok || gw != r.Gw {
			replace = append(replace, r)
		}
	}
	for _, r := range current {
		if !want[r.Dst] {
			remove = append(remove, r)
		}
	}
	return replace, remove
}
