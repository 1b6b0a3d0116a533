package scale

import (
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswer(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "the answer", got, "100 pods on 5 kwok fake nodes under the faithful stage set", "pods/s", "stayed until the lab released them", "0 lost, 0 duplicates")

	if !strings.Contains(got, "no watch gap") {
		t.Errorf("the answer does not say the watch had no gap: %s", got)
	}
	at := rec.PodEvents[len(rec.PodEvents)/10].ObservedAt.Add(time.Microsecond)
	rv := lastVersionBefore(rec.PodEvents, at)
	rec.Gaps = append(rec.Gaps, evidence.WatchGap{Source: evidence.WatchPods, From: at, To: at.Add(20 * time.Millisecond), ResumedFrom: rv})
	got = Answer(rec, Claims(rec))
	labtest.Contains(t, "the answer with a resumed gap", got, "1 pods-watch gap(s), each resumed", evidence.WatchGapsFile)

	dropEvent(rec, plainPod(t, rec), "DELETED")
	got = Answer(rec, Claims(rec))
	if !strings.Contains(got, ClaimComplete+" failed") {
		t.Errorf("the answer hides a failed completeness claim: %s", got)
	}
}
