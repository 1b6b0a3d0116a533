package gotest

import (
	"strings"
	"testing"
)

const output = `=== RUN   TestLabs
=== RUN   TestLabs/kwok/run1
[   9.1s] lab:kwok run x: pass (8 claims)
    labs_test.go:52: lab:kwok run x: pass in 8.6s
=== RUN   TestLabs/scale/run1
    labs_test.go:52: lab:scale run y: pass in 20.3s
    labs_test.go:224: audit.jsonl has no pod creation in termlab-scale-y (0 events)
    labs_test.go:230: a message
        that goes on
=== RUN   TestLabs/scale/by-script
    labs_test.go:52: lab:scale run z: pass in 36.6s
--- FAIL: TestLabs (510.55s)
    --- PASS: TestLabs/kwok/run1 (8.67s)
    --- FAIL: TestLabs/scale/run1 (21.73s)
    --- PASS: TestLabs/scale/by-script (37.47s)
=== RUN   TestOther
    other_test.go:10: fine
--- PASS: TestOther (1.00s)
FAIL
`

func TestDigestNamesTheFailureAndWhatItLogged(t *testing.T) {
	d := NewDigest()
	for _, l := range strings.Split(output, "\n") {
		d.Line(l)
	}
	if got := strings.Join(d.Failed(), ","); got != "TestLabs/scale/run1" {
		t.Fatalf("Failed() = %s", got)
	}
	var b strings.Builder
	d.Write(&b)
	s := b.String()
	for _, want := range []string{"1 failed test(s)", "--- TestLabs/scale/run1", "no pod creation in termlab-scale-y", "a message\n      that goes on"} {
		if !strings.Contains(s, want) {
			t.Errorf("digest lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"kwok", "by-script", "other_test"} {
		if strings.Contains(s, not) {
			t.Errorf("digest holds %q, which passed:\n%s", not, s)
		}
	}
}

// Nothing failed: no digest.
func TestDigestQuietOnPass(t *testing.T) {
	d := NewDigest()
	d.Line("=== RUN   TestA")
	d.Line("    a_test.go:1: hello")
	d.Line("--- PASS: TestA (0.00s)")
	var b strings.Builder
	d.Write(&b)
	if b.Len() != 0 {
		t.Errorf("digest on a pass: %q", b.String())
	}
}
