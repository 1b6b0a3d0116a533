package claims

import (
	"testing"

	"github.com/termlab/termlab/internal/evidence"
)

// A claim resting on crictl is not checked, never passed, when the run had
// no node access; the same empty record with node access fails it.
func TestNotCheckedWithoutNodeAccess(t *testing.T) {
	none := &evidence.Record{NodeAccess: evidence.NodeAccessNone}
	some := &evidence.Record{NodeAccess: evidence.NodeAccessPod}
	decide := map[string]func(*evidence.Record) Claim{
		"ContainerStopped":    func(r *evidence.Record) Claim { return ContainerStopped(r, Stops{ID: "x", Pod: "p"}) },
		"RunningAfterDeleted": func(r *evidence.Record) Claim { return RunningAfterDeleted(r, Orphaned{ID: "x", Pod: "p"}) },
		"HeartbeatAdvancing":  func(r *evidence.Record) Claim { return HeartbeatAdvancing(r, Beating{ID: "x", Pod: "p"}) },
		"SplitBrain":          func(r *evidence.Record) Claim { return SplitBrain(r, Split{ID: "x", Pod: "p"}) },
		"StaysTerminating":    func(r *evidence.Record) Claim { return StaysTerminating(r, Stuck{ID: "x", Pod: "p"}) },
	}
	for name, f := range decide {
		if c := f(none); c.Verdict != NotChecked || c.Passed() || c.Reason != NeedsNodeAccess {
			t.Errorf("%s without node access: %s (%s)", name, c.Verdict, c.Reason)
		}
		if c := f(some); c.Verdict != Fail {
			t.Errorf("%s with node access on an empty record: %s, want fail", name, c.Verdict)
		}
	}
}

func TestOverallWithNotChecked(t *testing.T) {
	pass, fail, skip := Claim{Verdict: Pass}, Claim{Verdict: Fail}, Claim{Verdict: NotChecked}
	for _, tc := range []struct {
		cs   []Claim
		want Verdict
	}{
		{[]Claim{pass, pass}, Pass},
		{[]Claim{pass, skip}, Partial}, // what was checked holds; the rest is open, not passed
		{[]Claim{fail, skip}, Fail},
		{[]Claim{skip, skip}, Fail}, // nothing was checked: no pass
		{nil, Fail},
	} {
		if got := Overall(tc.cs); got != tc.want {
			t.Errorf("Overall(%v) = %s, want %s", tc.cs, got, tc.want)
		}
	}
}
