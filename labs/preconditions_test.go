package labs

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
)

// A precondition is what termlab arranged, never a finding: on every
// committed record (the reference runs and the labs' testdata), no claim
// observes a precondition's key, nor a number equal to its actual value,
// every precondition there is measured and met, and the converted claims
// state theirs.
func TestPreconditionsAreNeverObserved(t *testing.T) {
	stated := map[string]bool{}
	for _, d := range All {
		dirs := []string{filepath.Join("..", "results", "reference", d.Name)}
		testdata, _ := filepath.Glob(filepath.Join(d.Name, "testdata", "2*"))
		for _, dir := range append(dirs, testdata...) {
			rec, err := evidence.Load(dir)
			if err != nil {
				continue
			}
			for _, c := range d.Claims(rec) {
				for _, p := range c.Preconditions {
					stated[c.ID] = true
					if !p.Met() {
						t.Errorf("%s, %s: precondition %s not met on a committed record: %s", dir, c.ID, p.Key, p)
					}
					if _, ok := c.Observed[p.Key]; ok {
						t.Errorf("%s, %s: precondition %s is also observed", dir, c.ID, p.Key)
					}
					for k, v := range c.Observed {
						if f, ok := v.(float64); ok && p.Measured() && math.Abs(f-*p.ActualSeconds) < 0.0005 {
							t.Errorf("%s, %s: observed %s = %v is precondition %s's value", dir, c.ID, k, v, p.Key)
						}
					}
				}
			}
		}
	}
	for _, id := range []string{
		"finalizer.kubelet.delete.object_stays", "finalizer.kubelet.force.object_stays",
		"stuck.stays_terminating", "statefulset.stays_terminating",
		"statefulset.no_replacement_while_terminating", "statefulset.one_writer_again", "mount.stays_while_busy",
	} {
		if !stated[id] {
			t.Errorf("%s states no precondition", id)
		}
	}
}
