package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// confName is the file podnet owns in the CNI config directory. containerd
// loads the lexically first config there, so the 10- prefix matters only if
// another file is present.
const confName = "10-podnet.conflist"

// The CNI config podnet writes: ptp (a veth per pod, host routes, masquerade
// of traffic leaving the node's podCIDR) with host-local IPAM over the node's
// podCIDRs, then portmap for hostPort. The binaries are
// Debian's containernetworking-plugins under /opt/cni/bin on the node.
type conflist struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []any  `json:"plugins"`
}

type ptpPlugin struct {
	Type   string `json:"type"`
	IPMasq bool   `json:"ipMasq"`
	MTU    int    `json:"mtu"`
	IPAM   ipam   `json:"ipam"`
}

type ipam struct {
	Type string `json:"type"`
	// DataDir under /run: allocations do not outlive a node reboot.
	DataDir string          `json:"dataDir"`
	Ranges  [][]ipamRange   `json:"ranges"`
	Routes  []ipamRouteDest `json:"routes"`
}

type ipamRange struct {
	Subnet string `json:"subnet"`
}

type ipamRouteDest struct {
	Dst string `json:"dst"`
}

type portmapPlugin struct {
	Type         string          `json:"type"`
	Capabilities map[string]bool `json:"capabilities"`
}

// renderConflist renders the CNI config for a node's podCIDRs (one per IP
// family) and the pods' MTU.
func renderConflist(podCIDRs []string, mtu int) ([]byte, error) {
	if len(podCIDRs) == 0 {
		return nil, errors.New("no podCIDR")
	}
	if mtu < 576 {
		return nil, fmt.Errorf("mtu %d too small", mtu)
	}
	var ranges [][]ipamRange
	var routes []ipamRouteDest
	families := map[bool]bool{}
	for _, c := range podCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("podCIDR %q: %w", c, err)
		}
		v4 := p.Addr().Is4()
		if families[v4] {
			return nil, fmt.Errorf("podCIDRs %q: two of one IP family", podCIDRs)
		}
		families[v4] = true
		ranges = append(ranges, []ipamRange{{Subnet: p.Masked().String()}})
		dst := "::/0"
		if v4 {
			dst = "0.0.0.0/0"
		}
		routes = append(routes, ipamRouteDest{Dst: dst})
	}
	conf := conflist{
		CNIVersion: "0.4.0",
		Name:       "podnet",
		Plugins: []any{
			ptpPlugin{
				Type:   "ptp",
				IPMasq: true,
				MTU:    mtu,
				IPAM: ipam{
					Type:    "host-local",
					DataDir: "/run/cni-ipam-state",
					Ranges:  ranges,
					Routes:  routes,
				},
			},
			portmapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeFileIfChanged replaces path with data atomically (temporary file in
// the same directory, then rename) unless it already holds exactly data.
// The temporary name ends in neither .conf, .conflist nor .json, so a CNI
// runtime watching the directory never loads a half-written file.
func writeFileIfChanged(path string, data []byte) (changed bool, err error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return false, err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // make the rename durable; best effort
		_ = d.Close()
	}
	return true, nil
}
