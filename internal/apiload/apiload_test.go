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

func TestMedianAndSpread(t *testing.T) {
	rounds := []Figures{
		{Pods: 2000, Workers: 32, CreatePerSecond: 300, DeletePerSecond: 150, TooManyRequests: 1},
		{Pods: 2000, Workers: 32, CreatePerSecond: 250, DeletePerSecond: 190},
		{Pods: 2000, Workers: 32, CreatePerSecond: 320, DeletePerSecond: 170, DeleteFailed: 2},
	}
	m := Median(rounds)
	if m.CreatePerSecond != 300 || m.DeletePerSecond != 170 || m.TooManyRequests != 1 || m.DeleteFailed != 2 || m.Pods != 2000 {
		t.Errorf("Median = %+v, want create 300, delete 170 (each its own median) and the failures summed", m)
	}
	if got := Spread(rounds, func(r Figures) float64 { return r.DeletePerSecond }); got != "150–190/s over 3 rounds" {
		t.Errorf("Spread = %q", got)
	}
	if m := Median(rounds[:2]); m.CreatePerSecond != 250 || m.DeletePerSecond != 150 {
		t.Errorf("of two rounds the lower middle: %+v", m)
	}
}
