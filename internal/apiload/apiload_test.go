package apiload

import (
	"testing"
	"time"
)

func TestRateAndFraction(t *testing.T) {
	if got := Rate(2000, 4*time.Second); got != 500 {
		t.Errorf("Rate(2000, 4s) = %v, want 500", got)
	}
	if got := Rate(10, 0); got != 0 {
		t.Errorf("Rate(10, 0) = %v, want 0", got)
	}
	if got := Fraction(38.7, 500); got != "8 %" {
		t.Errorf("Fraction(38.7, 500) = %q, want 8 %%", got)
	}
	if got := Fraction(1, 0); got != "n/a" {
		t.Errorf("Fraction(1, 0) = %q, want n/a", got)
	}
}

func TestLoadPodsAreNeverScheduled(t *testing.T) {
	p := pod(7, map[string]string{"run": "x"})
	if p.Name != "load-00007" || p.Labels["run"] != "x" {
		t.Errorf("pod 7 is %s %v", p.Name, p.Labels)
	}
	if len(p.Spec.SchedulingGates) != 1 || p.Spec.SchedulingGates[0].Name != Gate || p.Spec.NodeName != "" {
		t.Errorf("the load's pod can be scheduled or is bound: %+v", p.Spec)
	}
}
