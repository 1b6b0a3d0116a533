package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// routeProtocol marks the kernel routes podnet installs (`ip route` shows
// "proto 122"), so after a restart it still finds the routes it owns and can
// remove those of deleted nodes. 122 is not assigned in
// /etc/iproute2/rt_protos.
const routeProtocol netlink.RouteProtocol = 122

// routeTable is the kernel side of routing; netlinkRoutes is the real one.
type routeTable interface {
	// List returns the routes podnet installed in the main table.
	List() ([]route, error)
	Replace(route) error
	Delete(route) error
}

type netlinkRoutes struct{}

func (netlinkRoutes) List() ([]route, error) {
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_ALL,
		&netlink.Route{Table: unix.RT_TABLE_MAIN, Protocol: routeProtocol},
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		return nil, fmt.Errorf("listing routes: %w", err)
	}
	var out []route
	for _, r := range rs {
		if r.Dst == nil || r.Gw == nil {
			continue
		}
		dst, ok := prefixOf(r.Dst)
		gw, ok2 := netip.AddrFromSlice(r.Gw)
		if ok && ok2 {
			out = append(out, route{Dst: dst, Gw: gw.Unmap()})
		}
	}
	return out, nil
}

func (netlinkRoutes) Replace(r route) error {
	return netlink.RouteReplace(kernelRoute(r))
}

func (netlinkRoutes) Delete(r route) error {
	err := netlink.RouteDel(kernelRoute(r))
	if errors.Is(err, unix.ESRCH) {
		return nil // already gone
	}
	return err
}

// kernelRoute leaves the device to the kernel: it resolves it from the
// gateway, which must be on a directly connected network (the kind nodes
// share one docker network).
func kernelRoute(r route) *netlink.Route {
	return &netlink.Route{
		Dst:      &net.IPNet{IP: r.Dst.Addr().AsSlice(), Mask: net.CIDRMask(r.Dst.Bits(), r.Dst.Addr().BitLen())},
		Gw:       r.Gw.AsSlice(),
		Table:    unix.RT_TABLE_MAIN,
		Protocol: routeProtocol,
	}
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones).Masked(), true
}

// defaultRouteMTU returns the MTU of the interface of the IPv4 default route
// (falling back to IPv6), or 0 if there is none.
func defaultRouteMTU() (int, error) {
	for _, family := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rs, err := netlink.RouteListFiltered(family, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return 0, fmt.Errorf("listing routes: %w", err)
		}
		for _, r := range rs {
			if r.Dst != nil {
				if ones, _ := r.Dst.Mask.Size(); ones != 0 {
					continue
				}
			}
			if r.LinkIndex == 0 {
				continue // multipath or unreachable
			}
			link, err := netlink.LinkByIndex(r.LinkIndex)
			if err != nil {
				return 0, fmt.Errorf("default route link %d: %w", r.LinkIndex, err)
			}
			return link.Attrs().MTU, nil
		}
	}
	return 0, nil
}
