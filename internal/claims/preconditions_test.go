package claims

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Precondition's rule, on a claim built the way labs build theirs.
func TestPreconditionRule(t *testing.T) {
	for _, tc := range []struct {
		name      string
		actual    time.Duration
		measured  bool
		build     func(b *Builder)
		want      Verdict
		reasonHas string
	}{
		{"met, the check holds", 6 * time.Second, true, func(b *Builder) { b.Require(true, "") }, Pass, ""},
		{"met, the check fails", 6 * time.Second, true, func(b *Builder) { b.Require(false, "too few looks") }, Fail, "too few looks"},
		{"not met, nothing wrong inside", 2 * time.Second, true, func(b *Builder) { b.Require(true, "") }, NotChecked, "precondition not met — termlab holds 5 s"},
		{"not met, a check came up short in the shorter window", 2 * time.Second, true, func(b *Builder) { b.Require(false, "too few looks") }, NotChecked, "(not judged): too few looks"},
		{"not met, the cluster contradicted inside it", 2 * time.Second, true, func(b *Builder) { b.Contradicts(false, "a DELETED event arrived") }, Fail, "a DELETED event arrived — inside the 2.000 s termlab gave"},
		{"not measured, a check failed", 0, false, func(b *Builder) { b.Require(false, "node never NotReady") }, Fail, "node never NotReady"},
		{"not measured, nothing failed", 0, false, func(b *Builder) { b.Require(true, "") }, NotChecked, "precondition not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder("c", "termlab holds 5 s (precondition); in that time …", "events.jsonl")
			b.Precondition("hold_seconds", "termlab holds 5 s", 5*time.Second, tc.actual, tc.measured)
			tc.build(b)
			c := b.Done()
			if c.Verdict != tc.want || !strings.Contains(c.Reason, tc.reasonHas) {
				t.Errorf("verdict %s, reason %q; want %s mentioning %q", c.Verdict, c.Reason, tc.want, tc.reasonHas)
			}
			if _, ok := c.Observed["hold_seconds"]; ok {
				t.Error("the precondition is among the observations")
			}
		})
	}
}

// summary.json carries a precondition with what was arranged, the
// scheduled and the actual value, apart from the observations.
func TestPreconditionSerialised(t *testing.T) {
	b := NewBuilder("c", "s", "events.jsonl")
	b.Precondition("hold_seconds", "termlab holds 5 s", 5*time.Second, 5200*time.Millisecond, true)
	b.Require(true, "")
	out, err := json.Marshal(b.Done())
	if err != nil {
		t.Fatal(err)
	}
	want := `"preconditions":[{"key":"hold_seconds","arranged":"termlab holds 5 s","scheduled_seconds":5,"actual_seconds":5.2}]`
	if !strings.Contains(string(out), want) {
		t.Errorf("%s\nlacks %s", out, want)
	}
	var back Claim
	if err := json.Unmarshal(out, &back); err != nil || len(back.Preconditions) != 1 || !back.Preconditions[0].Met() {
		t.Errorf("read back: %+v, %v", back.Preconditions, err)
	}
}
