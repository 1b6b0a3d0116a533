package report

import (
	"testing"
	"time"
)

func TestEarliestKeepsTheFirstInTimeOrder(t *testing.T) {
	base := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	type item struct {
		at  time.Time
		tag int
	}
	e := Earliest[item]{Keep: 3, At: func(i item) time.Time { return i.at }}
	for i := 0; i < 100; i++ {
		e.Add(item{base.Add(time.Duration(100-i) * time.Second), i}) // latest first
	}
	e.Add(item{base, 1000})
	e.Add(item{base, 1001}) // the same time: after the one added before it
	got, total := e.Items()
	if total != 102 || len(got) != 3 || got[0].tag != 1000 || got[1].tag != 1001 || got[2].tag != 99 {
		t.Errorf("kept %+v of %d", got, total)
	}
}
