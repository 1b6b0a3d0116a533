package kubelet

import (
	"testing"
	"time"
)

func TestParseUnitTimestamp(t *testing.T) {
	got, err := parseUnitTimestamp("ActiveEnterTimestamp", "ActiveEnterTimestamp=Fri 2026-12-04 05:36:04.214553 UTC\n")
	if want := time.Date(2026, 12, 4, 5, 36, 4, 214553000, time.UTC); err != nil || !got.Equal(want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "ActiveEnterTimestamp=", "InactiveEnterTimestamp=Fri 2026-12-04 05:36:04.214553 UTC", "ActiveEnterTimestamp=yesterday"} {
		if _, err := parseUnitTimestamp("ActiveEnterTimestamp", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
