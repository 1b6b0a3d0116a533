package kubelet

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSwitchCommands(t *testing.T) {
	arm := strings.Join(ArmCommand("20261203-070000-abcd", 2500*time.Millisecond), " ")
	for _, want := range []string{
		"systemd-run", "--unit=termlab-restore-kubelet-20261203-070000-abcd",
		"--on-active=3s", // rounded up: never earlier than asked
		"--timer-property=AccuracySec=1s",
		"systemctl start kubelet",
	} {
		if !strings.Contains(arm, want) {
			t.Errorf("switch %q lacks %q", arm, want)
		}
	}
	if got := DisarmCommand("20261203-070000-abcd"); !slices.Equal(got, []string{"systemctl", "stop", "termlab-restore-kubelet-20261203-070000-abcd.timer"}) {
		t.Errorf("disarm %q: want the run's timer stopped", got)
	}
	// Restore finds the timer Arm makes by its unit name.
	if units := switchUnits(Unit("20261203-070000-abcd") + ".timer loaded active waiting x\n"); len(units) != 1 {
		t.Errorf("the armed unit %s is not one Restore finds: %q", Unit("20261203-070000-abcd"), units)
	}
}

func TestSwitchUnitsFindsOnlyTermlabTimers(t *testing.T) {
	out := "termlab-restore-kubelet-a.timer loaded active waiting termlab: start the kubelet if termlab does not\n" +
		"systemd-tmpfiles-clean.timer loaded active waiting Daily Cleanup\n" +
		"termlab-restore-kubelet-b.service loaded inactive dead termlab\n"
	if got := switchUnits(out); !slices.Equal(got, []string{"termlab-restore-kubelet-a.timer"}) {
		t.Errorf("switchUnits = %q", got)
	}
}

// Only a boot in progress defers the leftover judgement: a node whose boot is
// over (running, or degraded by some other unit) with the kubelet inactive
// was left stopped.
func TestBootStates(t *testing.T) {
	for state, want := range map[string]bool{
		"initializing": true, "starting": true,
		"running": false, "degraded": false, "maintenance": false, "stopping": false, "offline": false, "": false,
	} {
		if got := isBootState(state); got != want {
			t.Errorf("isBootState(%q) = %v, want %v", state, got, want)
		}
	}
}
