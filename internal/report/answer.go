package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/termlab/termlab/internal/claims"
)

// Findings help a lab write its answer paragraph from its decided claims:
// each sentence rests on one claim, and a claim that failed turns its
// sentence into what failed and why, so the answer never states an expected
// result the run did not show.
type Findings struct {
	byID map[string]claims.Claim
}

// NewFindings indexes the decided claims.
func NewFindings(decided []claims.Claim) Findings {
	f := Findings{byID: map[string]claims.Claim{}}
	for _, c := range decided {
		f.byID[c.ID] = c
	}
	return f
}

// Passed reports whether the claim was decided and passed.
func (f Findings) Passed(id string) bool { return f.byID[id].Passed() }

// Say returns sentence when claim id passed; otherwise a sentence that says
// the claim failed, with its reason.
func (f Findings) Say(id, sentence string) string {
	c, ok := f.byID[id]
	switch {
	case !ok:
		return fmt.Sprintf("**Not decided:** %s.", id)
	case !c.Passed():
		reason := strings.TrimSuffix(c.Reason, ".")
		if reason == "" {
			reason = "no reason recorded"
		}
		if c.Verdict == claims.NotChecked {
			return fmt.Sprintf("**%s not checked:** %s.", id, strings.TrimPrefix(reason, "not checked: "))
		}
		return fmt.Sprintf("**%s failed:** %s.", id, reason)
	}
	return sentence
}

// Number is an observed number of a claim (NaN when missing).
func (f Findings) Number(id, key string) float64 {
	switch v := f.byID[id].Observed[key].(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	case int:
		return float64(v)
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	case *int32:
		if v != nil {
			return float64(*v)
		}
	case *int64:
		if v != nil {
			return float64(*v)
		}
	}
	return math.NaN()
}

// Seconds is an observed duration in seconds, for people: "5.4 s", "0.01 s".
func (f Findings) Seconds(id, key string) string { return FormatSeconds(f.Number(id, key)) }

// Arranged is a precondition's actual value in seconds, for people: what
// termlab gave the claim (Claim.Preconditions), never an observation.
func (f Findings) Arranged(id, key string) string {
	for _, p := range f.byID[id].Preconditions {
		if p.Key == key && p.Measured() {
			return FormatSeconds(*p.ActualSeconds)
		}
	}
	return FormatSeconds(math.NaN())
}

// Int is an observed whole number, e.g. an exit code ("?" when missing).
func (f Findings) Int(id, key string) string {
	n := f.Number(id, key)
	if math.IsNaN(n) {
		return "?"
	}
	return fmt.Sprintf("%.0f", n)
}

// Text is an observed value as text ("" when missing).
func (f Findings) Text(id, key string) string {
	v, ok := f.byID[id].Observed[key]
	if !ok || v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// FormatSeconds shows a duration with the precision a person needs: one
// decimal from 1 s on, two below (a watch delivery of 0.011 s is "0.01 s").
func FormatSeconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "? s"
	case s >= 0 && s < 0.005:
		return "< 0.01 s"
	case math.Abs(s) >= 1:
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.2f s", s)
	}
}

// Join joins sentences into one paragraph, skipping empty ones.
func Join(sentences ...string) string {
	var out []string
	for _, s := range sentences {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}
