package statefulset

import (
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/ledger"
)

func TestAnswerGivesTheRunsNumbers(t *testing.T) {
	rec := labtest.Load(t, recorded)
	got := Answer(rec, Claims(rec))
	labtest.Contains(t, "answer", got, "made no replacement", "both incarnations wrote to the ledger", "split brain", "exit code 137", "one writer again")
}

func TestAnswerSaysWhatFailed(t *testing.T) {
	rec := labtest.Load(t, recorded)
	// Only one writer ever in the ledger: no split brain was shown.
	for i := range rec.Ledgers {
		var keep []ledger.Entry
		first := ""
		for _, e := range rec.Ledgers[i].Entries {
			if first == "" {
				first = e.UID
			}
			if e.UID == first {
				keep = append(keep, e)
			}
		}
		rec.Ledgers[i].Entries = keep
	}
	got := Answer(rec, Claims(rec))
	if !strings.Contains(got, "statefulset.split_brain failed") || strings.Contains(got, "both incarnations wrote") {
		t.Errorf("the answer does not say that no split brain was shown:\n%s", got)
	}
}
