package mutants

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
)

// probe is how far each recorded time is moved to learn which vouched
// timings it ends: far below any bound, far above the milliseconds the
// claims round to.
const probe = 10 * time.Millisecond

// vouched is one timing a passing claim reports: one it vouches for
// (Claim.Tolerances), or one it only bounds or reports (untolerated).
type vouched struct {
	claim, key string
	seconds    float64
	// untolerated: the claim states no tolerance for it, so surviving its
	// stretch is never tolerated (classes.go).
	untolerated bool
	// later are the recorded times that end it: moving one of them by
	// probe moves the timing by probe.
	later []timeField
}

// intervalMutants stretches (×2) and shrinks (×0.5) each timing a claim
// that passed on the record vouches for or reports (every "…_seconds" of
// its Observed: the labs without tolerances state their bounds on these
// too), one at a time, by moving the
// recorded time(s) that end it: found by moving each recorded time a little
// and watching which timings follow, so no table of which claim reads which
// time has to be kept beside the claims.
func intervalMutants(rec *evidence.Record, decide Decide) (ms []Mutant, untolerated map[string]bool, notes []string) {
	rec = clone(rec)
	var vs []*vouched
	for _, c := range decide(rec) {
		if !c.Passed() {
			continue
		}
		for _, key := range sortedKeys(c.Observed) {
			_, tolerated := c.Tolerances[key]
			if s, ok := c.Observed[key].(float64); ok && (tolerated || isTimingKey(key)) {
				vs = append(vs, &vouched{claim: c.ID, key: key, seconds: s, untolerated: !tolerated})
			}
		}
	}
	if len(vs) == 0 {
		return nil, nil, nil
	}
	// The vouched timings first: a span both a tolerance and a bare report
	// cover is one mutant, named and classed after the tolerance.
	slices.SortStableFunc(vs, func(a, b *vouched) int {
		switch {
		case a.untolerated == b.untolerated:
			return 0
		case b.untolerated:
			return -1
		}
		return 1
	})
	for _, f := range timeFields(rec) {
		was := *f.at
		*f.at = was.Add(probe)
		decided, ok := safeDecide(decide, rec)
		*f.at = was
		if !ok {
			continue
		}
		byID := map[string]claims.Claim{}
		for _, c := range decided {
			byID[c.ID] = c
		}
		for _, v := range vs {
			s, ok := byID[v.claim].Observed[v.key].(float64)
			if ok && math.Abs(s-v.seconds-probe.Seconds()) <= 0.0015 {
				v.later = append(v.later, f)
			}
		}
	}
	var out []Mutant
	untolerated = map[string]bool{}
	seen := map[string]bool{}
	for _, v := range vs {
		if len(v.later) == 0 {
			notes = append(notes, fmt.Sprintf("%s %s: no recorded time ends it, not stretched", v.claim, v.key))
			continue
		}
		if v.seconds == 0 {
			notes = append(notes, fmt.Sprintf("%s %s: 0 s, stretching it changes nothing", v.claim, v.key))
			continue
		}
		var paths []string
		for _, f := range v.later {
			paths = append(paths, f.path)
		}
		where := strings.Join(paths, ", ")
		length := time.Duration(v.seconds * float64(time.Second))
		for _, s := range []struct {
			op    string
			shift time.Duration
		}{{OpStretch, length}, {OpShrink, -length / 2}} {
			key := fmt.Sprint(where, s.shift)
			if seen[key] {
				continue // another claim's timing of the same span: the same mutant
			}
			seen[key] = true
			m := Mutant{
				Operator: s.op,
				Name:     fmt.Sprintf("%s %s %s (%s)", s.op, v.claim, v.key, where),
				apply:    shiftTimes(paths, s.shift),
			}
			out = append(out, m)
			untolerated[m.Name] = v.untolerated
		}
	}
	return out, untolerated, notes
}

// isTimingKey: an Observed key that is an interval between two recorded
// times (the claims' "…_seconds"), not a clock's correction or uncertainty
// beside one, which no recorded time ends.
func isTimingKey(key string) bool {
	return strings.HasSuffix(key, "_seconds") &&
		!strings.HasSuffix(key, "_clock_correction_seconds") && !strings.HasSuffix(key, "_clock_uncertainty_seconds")
}

// shiftTimes moves the recorded times at the paths by d.
func shiftTimes(paths []string, d time.Duration) func(*evidence.Record) {
	return func(rec *evidence.Record) {
		for _, f := range timeFields(rec) {
			if slices.Contains(paths, f.path) {
				*f.at = f.at.Add(d)
			}
		}
	}
}

// safeDecide runs the claims; ok is false when they panicked.
func safeDecide(decide Decide, rec *evidence.Record) (cs []claims.Claim, ok bool) {
	defer func() {
		if recover() != nil {
			cs, ok = nil, false
		}
	}()
	return decide(rec), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
