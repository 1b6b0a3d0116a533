package diagnose

import (
	"fmt"
	"slices"
	"strings"
)

// The shape both diagnoses share, a pod's (podFacts) and a namespace's
// (nsFacts): facts decided once, then ordered tables of small rules, each
// with an id (tests and the rule-coverage tests name it), a when, its words
// and, for advice, its Risk. F is the facts the rules read.

// findingRule is one way a finding can read: the first rule of an id whose
// when holds decides that finding (the rules of one id are alternatives, in
// order, like a switch).
type findingRule[F any] struct {
	id       string
	when     func(F) bool
	level    Level
	verdict  string
	evidence []string
	text     func(F) string
	// verdictOf, if set, says the verdict instead (it names what was read);
	// evidenceOf, the evidence (it names the files read).
	verdictOf  func(F) string
	evidenceOf func(F) []string
}

// findingStep is one place in the report's order of findings: either a
// table of alternatives for one id, or the findings of each item (each
// finalizer, each container). An each step is counted as fired
// ("each.<name>") when it finds something.
type findingStep[F any] struct {
	rules []findingRule[F]
	each  func(F) []Finding
	name  string // an each step's, for the rule-coverage tests
}

// findingsFrom runs the steps in order; fired names each table rule that
// decided a finding, as <id>[<its place among the id's rules>].
func findingsFrom[F any](steps []findingStep[F], f F) (out []Finding, fired []string) {
	for _, step := range steps {
		if step.each != nil {
			found := step.each(f)
			out = append(out, found...)
			if len(found) > 0 {
				fired = append(fired, "each."+step.name)
			}
			continue
		}
		for i, r := range step.rules {
			if !r.when(f) {
				continue
			}
			v := r.verdict
			if r.verdictOf != nil {
				v = r.verdictOf(f)
			}
			ev := r.evidence
			if r.evidenceOf != nil {
				ev = r.evidenceOf(f)
			}
			out = append(out, Finding{ID: r.id, Level: r.level, Verdict: v, Text: r.text(f), Evidence: ev})
			fired = append(fired, fmt.Sprintf("%s[%d]", r.id, i))
			break
		}
	}
	return out, fired
}

// sentenceRule is one sentence (or one per item) of the answer.
type sentenceRule[F any] struct {
	id   string
	when func(F) bool
	text func(F) []string
}

// sentencesFrom runs every rule whose when holds, in order; fired names
// those that said something ("answer.<id>").
func sentencesFrom[F any](rules []sentenceRule[F], f F) (s, fired []string) {
	for _, r := range rules {
		if !r.when(f) {
			continue
		}
		if t := r.text(f); len(t) > 0 {
			s = append(s, t...)
			fired = append(fired, "answer."+r.id)
		}
	}
	return s, fired
}

// Risk is how an advice step says what acting on it risks; it opens the step.
type Risk string

// Risks, safest first.
const (
	RiskNothing   Risk = "Nothing to do"
	RiskSafe      Risk = "Safe"
	RiskWait      Risk = "Wait"
	RiskLow       Risk = "Low risk"
	RiskUnknown   Risk = "Unknown risk"
	RiskRisky     Risk = "Risky"
	RiskDangerous Risk = "Dangerous now"
	// RiskNotHonest: the step would state something the evidence contradicts.
	RiskNotHonest Risk = "Not honest here"
	// RiskNote is a fact to weigh, with no step of its own: no prefix.
	RiskNote Risk = ""
)

// say opens a step with its risk.
func (r Risk) say(step string) string {
	if r == RiskNote {
		return step
	}
	return string(r) + ": " + step
}

// adviceRule is one step (or one per item) of the advice.
type adviceRule[F any] struct {
	id   string
	when func(F) bool
	risk Risk
	text func(F) []string
}

// stepsFrom runs every rule whose when holds, in order, each step opened by
// its rule's risk; fired names those that said something ("advice.<id>").
func stepsFrom[F any](rules []adviceRule[F], f F) (advice, fired []string) {
	for _, r := range rules {
		if !r.when(f) {
			continue
		}
		t := r.text(f)
		for _, step := range t {
			advice = append(advice, r.risk.say(step))
		}
		if len(t) > 0 {
			fired = append(fired, "advice."+r.id)
		}
	}
	return advice, fired
}

func one(s string) []string { return []string{s} }

// weighWarnings adds to the answer s each warning that no answer rule which
// fired speaks for (speaksFor, read by spokenFor), in its own words, so
// that a reader never acts on half the cause.
func weighWarnings(findings []Finding, speaksFor map[string][]string, s, fired []string) ([]string, []string) {
	for _, fd := range findings {
		if fd.Level == Warning && !spokenFor(speaksFor, fd.ID, fired) {
			lead := "Also weigh: "
			if fd.ID == FindTermination { // its text is the kubelet's record, not a sentence about it
				lead = "Also weigh what the kubelet reported of the kill: "
			}
			s = append(s, lead+fd.Text)
			fired = append(fired, "answer.warning."+fd.ID)
		}
	}
	return s, fired
}

// spokenFor: one of the answer rules that fired speaks for finding id;
// speaksFor lists them by finding id, or by an id's prefix ending in ".".
func spokenFor(speaksFor map[string][]string, id string, fired []string) bool {
	for key, rules := range speaksFor {
		if key != id && !(strings.HasSuffix(key, ".") && strings.HasPrefix(id, key)) {
			continue
		}
		for _, r := range rules {
			if slices.Contains(fired, "answer."+r) {
				return true
			}
		}
	}
	return false
}
