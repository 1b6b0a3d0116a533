package kwoklab

import (
	"testing"

	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/report"
)

// The picture of the recorded run tells the stage sets apart: each fake-node
// pod is one lane of what the API reports; the faithful set reports the
// container terminated before DELETED, v0.8 never does, v0.7 empties the
// finalizers by itself.
func TestTimelineTellsTheStageSetsApart(t *testing.T) {
	tl := report.BuildTimeline(load(t), nil)
	lanes := map[string][]report.Lane{}
	shows := func(pod, kind string) bool {
		for _, l := range lanes[pod] {
			for _, s := range l.Segments {
				if s.Kind == kind {
					return true
				}
			}
		}
		return false
	}
	for _, l := range tl.Lanes {
		lanes[l.Pod] = append(lanes[l.Pod], l)
	}
	for _, sc := range Scenarios {
		for _, set := range kwok.StageSets {
			if n := len(lanes[PodName(sc.Name, set)]); n != 1 {
				t.Errorf("%s has %d lanes, want one (what the API reports)", PodName(sc.Name, set), n)
			}
		}
		if !shows(PodName(sc.Name, kwok.SetFaithful), report.KindTerminated) {
			t.Errorf("%s: the faithful lane does not show the container reported terminated", sc.Name)
		}
		if shows(PodName(sc.Name, kwok.SetKwokV08Fast), report.KindTerminated) {
			t.Errorf("%s: the kwok v0.8 lane shows a termination the API never reported", sc.Name)
		}
	}
	emptied := map[string]bool{}
	for _, m := range tl.Marks {
		if m.Kind == report.MarkFinalizersEmptied {
			emptied[tl.Lanes[m.Lane].Pod] = true
		}
	}
	if want := PodName("finalizer", kwok.SetKwokV07Fast); len(emptied) != 1 || !emptied[want] {
		t.Errorf("finalizers emptied on %v, want on %s alone", emptied, want)
	}
}
