package evidence

import (
	"slices"
	"testing"

	"github.com/termlab/termlab/internal/ledger"
)

func TestUIDsOfAndLastLedger(t *testing.T) {
	rec := &Record{PodEvents: []PodEvent{
		{Type: "ADDED", PodState: PodState{Name: "ident-0", UID: "a"}},
		{Type: "ADDED", PodState: PodState{Name: "other", UID: "x"}},
		{Type: "DELETED", PodState: PodState{Name: "ident-0", UID: "a"}},
		{Type: "ADDED", PodState: PodState{Name: "ident-0", UID: "b"}},
	}}
	if got := rec.UIDsOf("ident-0"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("UIDsOf = %v, want [a b]", got)
	}
	if _, ok := rec.LastLedger(); ok {
		t.Error("a record without ledger reads has a last one")
	}
	rec.Ledgers = []LedgerRead{{Path: "1"}, {Path: "2", Entries: []ledger.Entry{{Write: ledger.Write{UID: "b"}}}}}
	if l, ok := rec.LastLedger(); !ok || l.Path != "2" {
		t.Errorf("LastLedger = %+v, %v", l, ok)
	}
}
