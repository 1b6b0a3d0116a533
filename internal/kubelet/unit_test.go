package kubelet

import "testing"

func TestParseUnit(t *testing.T) {
	for _, tc := range []struct {
		out          string
		want         UnitState
		loaded, fail bool
	}{
		{out: "LoadState=loaded\nActiveState=active\nSubState=running\n", want: UnitState{"loaded", "active", "running"}, loaded: true},
		{out: "LoadState=loaded\nActiveState=inactive\nSubState=dead\n", want: UnitState{"loaded", "inactive", "dead"}, loaded: true},
		// k3s: no unit named kubelet; systemd still answers, and says so.
		{out: "LoadState=not-found\nActiveState=inactive\nSubState=dead\n", want: UnitState{"not-found", "inactive", "dead"}},
		{out: "Failed to connect to bus: No such file or directory\n", fail: true},
	} {
		u, err := ParseUnit(tc.out)
		if (err != nil) != tc.fail {
			t.Errorf("%q: error %v, want failure %v", tc.out, err, tc.fail)
			continue
		}
		if tc.fail {
			continue
		}
		if u != tc.want || u.Loaded() != tc.loaded {
			t.Errorf("%q: got %+v (loaded %v), want %+v (loaded %v)", tc.out, u, u.Loaded(), tc.want, tc.loaded)
		}
	}
}
