// Package nodeunit asks systemd on a node about one unit through the exec
// seam (kind's nodes.Node, or a node pod): whether it is active, when it
// last changed, and its properties. The kubelet and the processes a lab
// starts on a node (internal/mounthold) are such units.
package nodeunit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

// Node is a node the commands run on: kind's nodes.Node satisfies it.
type Node interface {
	CommandContext(ctx context.Context, name string, args ...string) exec.Cmd
	String() string
}

// State is `systemctl is-active <unit>` on the node: active, inactive,
// failed, activating … (inactive also for a unit that does not exist).
func State(ctx context.Context, node Node, unit string) (string, error) {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "systemctl", "is-active", unit)
	cmd.SetStdout(&out)
	err := cmd.Run() // non-zero exit for every state but active
	state := strings.TrimSpace(out.String())
	if state == "" {
		return "", fmt.Errorf("asking systemd on %s whether %s runs: %v", node, unit, err)
	}
	return state, nil
}

// Show reads the unit's properties (`systemctl show <unit> -p …`, times to
// the microsecond in UTC).
func Show(ctx context.Context, node Node, unit string, props ...string) (map[string]string, error) {
	args := []string{"show", unit, "--timestamp=us+utc"}
	for _, p := range props {
		args = append(args, "-p", p)
	}
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "systemctl", args...)
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("asking systemd on %s about %s: %w", node, unit, err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			got[k] = v
		}
	}
	return got, nil
}

// ChangedAt is when systemd on the node last had the unit enter the active
// state (active) or the inactive one: the moment a `systemctl start|stop`
// took effect, on the node's clock, to the microsecond. A look from
// outside sees that change only at its next look, up to a look's length
// later on a loaded machine.
func ChangedAt(ctx context.Context, node Node, unit string, active bool) (time.Time, error) {
	prop := "InactiveEnterTimestamp"
	if active {
		prop = "ActiveEnterTimestamp"
	}
	props, err := Show(ctx, node, unit, prop)
	if err != nil {
		return time.Time{}, fmt.Errorf("asking systemd on %s when %s changed: %w", node, unit, err)
	}
	return ParseTimestamp(prop, props[prop])
}

// ParseTimestamp reads a timestamp property systemd showed with
// --timestamp=us+utc: "Fri 2026-12-04 05:36:04.214553 UTC".
func ParseTimestamp(prop, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, fmt.Errorf("systemd gave no %s", prop)
	}
	t, err := time.Parse("Mon 2006-01-02 15:04:05.999999 MST", v)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading systemd's %s %q: %w", prop, v, err)
	}
	return t.UTC(), nil
}

// Run runs a command on the node, keeping its output in the error.
func Run(ctx context.Context, node Node, argv ...string) error {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SetStdout(&out)
	cmd.SetStderr(&out)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s on %s: %w: %s", strings.Join(argv, " "), node, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// OnEach runs look on every node at once (each is a few commands through
// the node exec seam, mostly waiting on docker) and returns their results in
// the nodes' order, with every error joined.
func OnEach[T any](ctx context.Context, nodes []Node, look func(context.Context, Node) ([]T, error)) ([]T, error) {
	results := make([][]T, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { results[i], errs[i] = look(ctx, n) })
	}
	wg.Wait()
	var out []T
	for _, r := range results {
		out = append(out, r...)
	}
	return out, errors.Join(errs...)
}
