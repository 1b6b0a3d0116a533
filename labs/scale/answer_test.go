package scale

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/labtest"
)

func TestAnswer(t *testing.T) {
	rec := load(t)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "the answer", got, "100 pods on 5 kwok fake nodes under the faithful stage set", "pods/s", "stayed until the lab released them", "0 lost, 0 duplicates")

	dropEvent(rec, plainPod(t, rec), "DELETED")
	got = Answer(rec, Claims(rec))
	if !strings.Contains(got, ClaimComplete+" failed") {
		t.Errorf("the answer hides a failed completeness claim: %s", got)
	}
}
