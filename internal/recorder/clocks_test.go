package recorder

import (
	"testing"
	"time"
)

func TestParseEpoch(t *testing.T) {
	got, err := parseEpoch("1764817200.123456789")
	if err != nil || !got.Equal(time.Unix(1764817200, 123456789)) {
		t.Errorf("parseEpoch = %v, %v", got, err)
	}
	// busybox date prints %N literally: not a time.
	for _, bad := range []string{"1764817200.%N", "1764817200", "1764817200.12", "x.123456789"} {
		if _, err := parseEpoch(bad); err == nil {
			t.Errorf("parseEpoch(%q) accepted it", bad)
		}
	}
}
