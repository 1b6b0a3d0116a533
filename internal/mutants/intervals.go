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

// vouched is one timing a passing claim vouches for.
type vouched struct {
	claim, key string
	seconds    float64
	// later are the recorded times that end it: moving one of them by
	// probe moves the timing by probe.
	later []timeField
}

// intervalMutants stretches (×2) and shrinks (×0.5) each timing a claim
// that passed on the record vouches for, one at a time, by moving the
// recorded time(s) that end it: found by moving each recorded time a little
// and watching which timings follow, so no table of which claim reads which
// time has to be kept beside the claims.
func intervalMutants(rec *evidence.Record, decide Decide) ([]Mutant, []string) {
	rec = clone(rec)
	var vs []*vouched
	for _, c := range decide(rec) {
		if !c.Passed() {
			continue
		}
		for _, key := range sortedKeys(c.Tolerances) {
			if s, ok := c.Observed[key].(float64); ok {
				vs = append(vs, &vouched{claim: c.ID, key: key, seconds: s})
			}
		}
	}
	if len(vs) == 0 {
		return nil, nil
	}
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
	var out, notes = []Mutant(nil), []string(nil)
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
			out = append(out, Mutant{
				Operator: s.op,
				Name:     fmt.Sprintf("%s %s %s (%s)", s.op, v.claim, v.key, where),
				apply:    shiftTimes(paths, s.shift),
			})
		}
	}
	return out, notes
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
