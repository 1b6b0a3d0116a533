package stack

import (
	"testing"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/kwok"
)

// kwok plays more pod stages at once on a raised cluster only.
func TestKwokOptionsByLimits(t *testing.T) {
	def := kwokOptions(ClusterSpec{Options: cluster.Options{Limits: cluster.LimitsDefault}, FakeNodes: 7})
	raised := kwokOptions(ClusterSpec{Options: cluster.Options{Limits: cluster.LimitsRaised}, FakeNodes: 7})
	if def.FakeNodes != 7 || raised.FakeNodes != 7 {
		t.Errorf("fake nodes %d and %d, want 7", def.FakeNodes, raised.FakeNodes)
	}
	if def.PodPlayParallelism != 0 || raised.PodPlayParallelism != kwok.RaisedPodPlayParallelism {
		t.Errorf("parallelism default %d, raised %d: want 0 (kwok.PodPlayParallelism) and %d", def.PodPlayParallelism, raised.PodPlayParallelism, kwok.RaisedPodPlayParallelism)
	}
}
