package sidecar

import (
	"testing"

	"github.com/termlab/termlab/internal/report"
)

// The picture shows the shutdown order: each pod has its API lane and one
// crictl lane per container, sidecars first, each with its SIGTERM mark.
func TestTimelineHasALanePerContainer(t *testing.T) {
	tl := report.BuildTimeline(load(t), nil)
	var labels []string
	sigterms := map[string]int{}
	for _, l := range tl.Lanes {
		labels = append(labels, l.Label)
	}
	for _, m := range tl.Marks {
		if m.Kind == report.MarkSIGTERM {
			sigterms[tl.Lanes[m.Lane].Label]++
		}
	}
	var want []string
	for _, p := range thePods {
		want = append(want, p.name+": API")
		for _, c := range containersOf {
			lane := p.name + "/" + c + ": crictl"
			want = append(want, lane)
			if sigterms[lane] != 1 {
				t.Errorf("lane %s has %d SIGTERM marks, want 1", lane, sigterms[lane])
			}
		}
	}
	if len(labels) != len(want) {
		t.Fatalf("lanes %q, want %q", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("lane %d is %q, want %q", i, labels[i], want[i])
		}
	}
}
