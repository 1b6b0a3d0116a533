// Package kubelet stops and starts the kubelet on a kind node, the one place
// termlab injects that fault, and makes the restart survive termlab's own
// death: before the kubelet is stopped, a transient systemd timer inside the
// node (a dead-man's switch) is armed to start it again after a bound; the
// normal path disarms it after starting the kubelet itself. So a SIGKILLed
// termlab, a closed laptop or a lost terminal still leaves a running kubelet
// behind, at most that bound later. Restore puts back what any earlier run
// left: stopped kubelets, and switches still armed.
package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/nodeunit"
)

// Node is a kind node: kind's nodes.Node satisfies it (the one exec seam).
type Node = nodeunit.Node

// UnitPrefix names the switches' transient units: termlab-restore-kubelet-<run id>.
// The node agent (internal/nodeagent) stops and arms only units named so.
const UnitPrefix = "termlab-restore-kubelet-"

// Unit is the name of run's dead-man's switch unit.
func Unit(runID string) string { return UnitPrefix + runID }

// The commands on the node, as a person types them after `docker exec
// <node>`. A run arms the switch before it stops the kubelet (whoever stops
// it) and disarms it after the kubelet is started again.
var (
	StopCommand  = []string{"systemctl", "stop", "kubelet"}
	StartCommand = []string{"systemctl", "start", "kubelet"}
)

// ArmCommand arms the run's switch: the kubelet is started again
// restoreAfter from now (rounded up to a second) unless Disarm runs first.
func ArmCommand(runID string, restoreAfter time.Duration) []string {
	secs := int((restoreAfter + time.Second - 1) / time.Second)
	// AccuracySec: a timer's default accuracy is a minute, far too coarse here.
	return []string{"systemd-run", "--unit=" + Unit(runID), "--description=termlab: start the kubelet if termlab does not",
		fmt.Sprintf("--on-active=%ds", secs), "--timer-property=AccuracySec=1s", "systemctl", "start", "kubelet"}
}

// DisarmCommand stops the run's switch timer.
func DisarmCommand(runID string) []string {
	return []string{"systemctl", "stop", Unit(runID) + ".timer"}
}

// Arm arms the run's dead-man's switch on the node (ArmCommand).
func Arm(ctx context.Context, node Node, runID string, restoreAfter time.Duration) error {
	return run(ctx, node, ArmCommand(runID, restoreAfter)...)
}

// Stop stops only the kubelet: containerd and the containers keep running.
// It fails if the kubelet is still active afterwards.
func Stop(ctx context.Context, node Node) error {
	if err := run(ctx, node, StopCommand...); err != nil {
		return err
	}
	state, err := State(ctx, node)
	if err != nil {
		return err
	}
	if state == "active" {
		return fmt.Errorf("the kubelet on %s is still active after systemctl stop", node)
	}
	return nil
}

// Start starts the kubelet.
func Start(ctx context.Context, node Node) error { return run(ctx, node, StartCommand...) }

// Disarm disarms the run's switch. A switch that has already fired (its
// timer gone) is not an error.
func Disarm(ctx context.Context, node Node, runID string) error {
	return disarm(ctx, node, DisarmCommand(runID))
}

func disarm(ctx context.Context, node Node, argv []string) error {
	err := run(ctx, node, argv...)
	if err != nil && !strings.Contains(err.Error(), "not loaded") {
		return err
	}
	return nil
}

// State is `systemctl is-active kubelet` on the node: active, inactive,
// failed, activating …
func State(ctx context.Context, node Node) (string, error) {
	return nodeunit.State(ctx, node, "kubelet")
}

// startingOrUp: active, or systemd is starting it already (a node container
// that just booted, or its restart loop): nobody left it stopped.
func startingOrUp(state string) bool {
	return state == "active" || state == "activating" || state == "reloading"
}

// booting reports whether the node's systemd is still starting its units.
func booting(ctx context.Context, node Node) bool {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "systemctl", "is-system-running")
	cmd.SetStdout(&out)
	_ = cmd.Run() // non-zero exit for every state but running
	return isBootState(strings.TrimSpace(out.String()))
}

// isBootState: `systemctl is-system-running` says the boot is not over.
func isBootState(s string) bool { return s == "initializing" || s == "starting" }

// bootWait bounds waiting for a just-started node container's boot: kind's
// nodes finish it in a few seconds.
const bootWait = 60 * time.Second

// waitBooted waits until the node's boot is over (running or degraded).
func waitBooted(ctx context.Context, node Node) {
	ctx, cancel := context.WithTimeout(ctx, bootWait)
	defer cancel()
	_ = node.CommandContext(ctx, "systemctl", "is-system-running", "--wait").Run()
}

// Repair is one thing Restore put back.
type Repair struct {
	Node string
	// Started: the kubelet was not active and was started (the node will
	// need a moment to be Ready); otherwise a leftover switch was disarmed.
	Started bool
	Text    string
}

// Restore starts the kubelet on every node where it is not active and
// disarms every switch an earlier run left armed (one that fired later would
// restart a kubelet in the middle of the next run's experiment). Call it
// only under the cluster's run lock.
func Restore(ctx context.Context, nodes []Node) ([]Repair, error) {
	return nodeunit.OnEach(ctx, nodes, restoreOn)
}

// restoreOn is Restore on one node.
func restoreOn(ctx context.Context, node Node) ([]Repair, error) {
	state, err := State(ctx, node)
	if err == nil && !startingOrUp(state) && booting(ctx, node) {
		// A node container docker just started again: systemd has not
		// reached the kubelet yet, nobody left it stopped.
		waitBooted(ctx, node)
		state, err = State(ctx, node)
	}
	if err != nil {
		return nil, err
	}
	var repairs []Repair
	if !startingOrUp(state) {
		if err := Start(ctx, node); err != nil {
			return nil, fmt.Errorf("starting the kubelet left %s on %s: %w", state, node, err)
		}
		repairs = append(repairs, Repair{Node: node.String(), Started: true,
			Text: fmt.Sprintf("the kubelet on %s was %s (an earlier run stopped it and did not finish): started it again", node, state)})
	}
	armed, err := armedSwitches(ctx, node)
	if err != nil {
		return repairs, err
	}
	var errs []error
	for _, unit := range armed {
		if err := disarm(ctx, node, []string{"systemctl", "stop", unit}); err != nil {
			errs = append(errs, err)
			continue
		}
		repairs = append(repairs, Repair{Node: node.String(),
			Text: fmt.Sprintf("a kubelet restore timer (%s) an earlier run left armed on %s: disarmed", unit, node)})
	}
	return repairs, errors.Join(errs...)
}

// armedSwitches lists the switch timers loaded on the node.
func armedSwitches(ctx context.Context, node Node) ([]string, error) {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, "systemctl", "list-units", "--all", "--plain", "--no-legend", "--type=timer", UnitPrefix+"*")
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing kubelet restore timers on %s: %w", node, err)
	}
	return switchUnits(out.String()), nil
}

// switchUnits picks the switch timers out of `systemctl list-units --plain --no-legend` output.
func switchUnits(listUnits string) []string {
	var units []string
	for _, line := range strings.Split(listUnits, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], UnitPrefix) && strings.HasSuffix(f[0], ".timer") {
			units = append(units, f[0])
		}
	}
	return units
}

// run runs a command on a node, keeping its output in the error.
func run(ctx context.Context, node Node, argv ...string) error {
	return nodeunit.Run(ctx, node, argv...)
}

// ChangedAt is when systemd on the node last had the kubelet's unit enter
// the active state (active) or the inactive one (nodeunit.ChangedAt): the
// moment a person's or a script's `systemctl start|stop kubelet` took
// effect, on the node's clock.
func ChangedAt(ctx context.Context, node Node, active bool) (time.Time, error) {
	return nodeunit.ChangedAt(ctx, node, "kubelet", active)
}
