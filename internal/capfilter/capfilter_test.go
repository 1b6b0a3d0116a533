package capfilter

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseStatusCapBnd(t *testing.T) {
	got, err := ParseStatusCapBnd(strings.NewReader("Name:\tx\nCapPrm:\t0\nCapBnd:\t000001fffeffffff\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got != 0x000001fffeffffff {
		t.Fatalf("got %x", got)
	}
	if _, err := ParseStatusCapBnd(strings.NewReader("Name: x\n")); err == nil {
		t.Fatal("want error without CapBnd")
	}
}

func TestMissing(t *testing.T) {
	if got := Missing(0x000001fffeffffff); !reflect.DeepEqual(got, []string{"CAP_SYS_RESOURCE"}) {
		t.Fatalf("our CI host lacks exactly CAP_SYS_RESOURCE, got %v", got)
	}
	if got := Missing(0x000001ffffffffff); len(got) != 0 {
		t.Fatalf("full set: want none missing, got %v", got)
	}
}

func TestFilterConfigDropsOnlyMissing(t *testing.T) {
	in := `{"ociVersion":"1.0.2","process":{"user":{"uid":0,"gid":0},"capabilities":{
	  "bounding":["CAP_SYS_ADMIN","CAP_SYS_RESOURCE","CAP_NEW_UNKNOWN"],
	  "effective":["CAP_SYS_RESOURCE"],"permitted":["CAP_CHOWN"]}},
	  "linux":{"resources":{"memory":{"limit":9007199254740993}}}}`
	out, removed, err := FilterConfig([]byte(in), Set{"CAP_SYS_RESOURCE": true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{"CAP_SYS_RESOURCE"}) {
		t.Fatalf("removed %v", removed)
	}
	var doc struct {
		Process struct {
			Capabilities map[string][]string
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"bounding":  {"CAP_SYS_ADMIN", "CAP_NEW_UNKNOWN"},
		"effective": {},
		"permitted": {"CAP_CHOWN"},
	}
	if !reflect.DeepEqual(doc.Process.Capabilities, want) {
		t.Fatalf("capabilities %v, want %v", doc.Process.Capabilities, want)
	}
	// Large integers must survive the round trip exactly.
	if !strings.Contains(string(out), "9007199254740993") {
		t.Fatalf("number changed: %s", out)
	}
}

func TestFilterLeavesUntouchedWhenNothingMissing(t *testing.T) {
	in := []byte(`{"args":["sh"],"capabilities":{"bounding":["CAP_CHOWN"]}}`)
	out, removed, err := FilterProcessJSON(in, Set{"CAP_SYS_RESOURCE": true})
	if err != nil || removed != nil || string(out) != string(in) {
		t.Fatalf("want unchanged, got %s %v %v", out, removed, err)
	}
	out, removed, err = FilterProcessJSON([]byte(`{"capabilities":{"ambient":["CAP_SYS_RESOURCE"]}}`), Set{"CAP_SYS_RESOURCE": true})
	if err != nil || len(removed) != 1 || strings.Contains(string(out), "RESOURCE") {
		t.Fatalf("exec process not filtered: %s %v %v", out, removed, err)
	}
}

func TestFilterRejectsBadJSON(t *testing.T) {
	if _, _, err := FilterConfig([]byte("{"), Set{}); err == nil {
		t.Fatal("want error")
	}
}
