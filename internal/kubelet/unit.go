package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// UnitState is what systemd says of the unit named kubelet on a node.
type UnitState struct {
	// Load is systemd's LoadState: "loaded" when the node has such a unit,
	// "not-found" where the kubelet runs under another name (k3s, RKE2 and
	// microk8s embed or rename it) or outside systemd.
	Load string
	// Active is ActiveState (active, inactive, failed, activating …), Sub
	// the SubState (running, dead …).
	Active, Sub string
}

// Loaded reports whether the node has a systemd unit named kubelet: only
// then does its state say anything about the node's kubelet.
func (u UnitState) Loaded() bool { return u.Load == "loaded" }

// UnitCommand is how a person asks the same on the node.
const UnitCommand = "systemctl show kubelet -p LoadState -p ActiveState -p SubState"

// UnitOf reads the kubelet unit's load and active state (one command; it
// answers for a unit that does not exist too, with LoadState=not-found).
func UnitOf(ctx context.Context, node Node) (UnitState, string, error) {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "systemctl", "show", "kubelet", "-p", "LoadState", "-p", "ActiveState", "-p", "SubState")
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return UnitState{}, out.String(), fmt.Errorf("asking systemd on %s about the kubelet unit (%s): %w", node, UnitCommand, err)
	}
	u, err := ParseUnit(out.String())
	return u, out.String(), err
}

// ParseUnit reads `systemctl show -p LoadState -p ActiveState -p SubState`.
func ParseUnit(out string) (UnitState, error) {
	var u UnitState
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "LoadState":
			u.Load = v
		case "ActiveState":
			u.Active = v
		case "SubState":
			u.Sub = v
		}
	}
	if u.Load == "" || u.Active == "" {
		return u, fmt.Errorf("systemctl show said %q: no LoadState or ActiveState", strings.TrimSpace(out))
	}
	return u, nil
}
