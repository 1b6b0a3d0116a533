package nodeunit

import (
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	got, err := ParseTimestamp("ActiveEnterTimestamp", "Fri 2026-12-04 05:36:04.214553 UTC\n")
	if want := time.Date(2026, 12, 4, 5, 36, 4, 214553000, time.UTC); err != nil || !got.Equal(want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", " ", "yesterday", "2026-12-04 05:36:04"} {
		if _, err := ParseTimestamp("ActiveEnterTimestamp", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
