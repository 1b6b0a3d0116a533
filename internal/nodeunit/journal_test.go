package nodeunit

import (
	"testing"
	"time"
)

func TestParseJournalLine(t *testing.T) {
	e, err := ParseJournalLine([]byte(`{"__REALTIME_TIMESTAMP":"1796389200123456","MESSAGE":"UnmountVolume.TearDown failed: target is busy","_SYSTEMD_UNIT":"kubelet.service"}`))
	if err != nil || e.Message != "UnmountVolume.TearDown failed: target is busy" || !e.At.Equal(time.UnixMicro(1796389200123456)) {
		t.Fatalf("got %+v, %v", e, err)
	}
	e, err = ParseJournalLine([]byte(`{"__REALTIME_TIMESTAMP":"1","MESSAGE":[104,105,255]}`))
	if err != nil || e.Message != "hi\xff" {
		t.Fatalf("binary message: %+v, %v", e, err)
	}
	for _, bad := range []string{`not json`, `{"MESSAGE":"x"}`, `{"__REALTIME_TIMESTAMP":"1","MESSAGE":{}}`} {
		if _, err := ParseJournalLine([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
