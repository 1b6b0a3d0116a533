// Package soak counts many runs of the same labs: per lab and claim, how
// often each verdict came out, and how the timings the claim observed spread
// (min, p50, p95, max). A claim whose verdict differs between runs comes
// first, with the runs that differ.
//
// Build is pure: runs in, a Report out, rendered as soak.md and soak.json.
// Loop runs labs again and again through the function it is given (the
// target's: lab.Execute on the termlab cluster); Find and Read collect run
// folders made by other means, so that those count too.
package soak

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/report"
)

// Format versions soak.json.
const Format = "termlab-soak/1"

// NoSummary is the verdict of a run that left no summary.json (it could not
// start: the cluster's lock, a namespace it could not create).
const NoSummary = "no summary"

// Run is one run of a lab, as the soak counts it.
type Run struct {
	Lab string
	// Summary is the run's summary.json; nil when the run left none.
	Summary *report.Summary
	// Err is what went wrong, if anything: the error the run returned, or
	// why it left no summary.
	Err string
}

// Report is what soak.md and soak.json say.
type Report struct {
	Format   string    `json:"format"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Source says where the runs came from: run by this soak, or the
	// folders -from named.
	Source string `json:"source"`
	// Interrupted says why the soak stopped before its last run ("" when it did not).
	Interrupted string `json:"interrupted,omitempty"`
	Labs        []Lab  `json:"labs"`
	// Skipped are run folders found but not counted, each with why
	// (unreadable; the same run as another folder, as a reference copy is).
	Skipped []string `json:"skipped,omitempty"`
	// Dir is the soak folder; run folders are shown relative to it (not in the JSON).
	Dir string `json:"-"`
}

// Lab is one lab's runs.
type Lab struct {
	Lab string `json:"lab"`
	// Runs counts every run, Passed those whose verdict is pass.
	Runs   int `json:"runs"`
	Passed int `json:"passed"`
	// Verdicts counts the runs' verdicts: pass, partial, fail, "no summary".
	Verdicts map[string]int `json:"verdicts"`
	// RunSeconds is the spread of the runs' own times (start to summary;
	// waiting for the cluster's lock not included).
	RunSeconds *Dist    `json:"run_seconds,omitempty"`
	RunList    []RunRef `json:"run_list"`
	// Claims: those whose verdicts differ between runs first, then in the
	// order the lab decides them.
	Claims []ClaimStats `json:"claims"`
}

// RunRef is one run in a lab's list.
type RunRef struct {
	RunID   string  `json:"run_id,omitempty"`
	Dir     string  `json:"dir,omitempty"`
	Verdict string  `json:"verdict"`
	Seconds float64 `json:"seconds,omitempty"`
	// FailedClaims are the claims that failed in this run.
	FailedClaims []string `json:"failed_claims,omitempty"`
	Errors       []string `json:"errors,omitempty"`
}

// ClaimStats is one claim across a lab's runs.
type ClaimStats struct {
	ID         string `json:"id"`
	Statement  string `json:"statement"`
	Pass       int    `json:"pass"`
	Fail       int    `json:"fail"`
	NotChecked int    `json:"not_checked"`
	// Absent counts the runs with a summary that did not decide this claim
	// (made by code with another set of claims). It is not a verdict.
	Absent int `json:"absent,omitempty"`
	// Differs: the runs gave the claim more than one verdict. Odd names the
	// runs whose verdict is not the most frequent one.
	Differs bool     `json:"differs,omitempty"`
	Odd     []OddRun `json:"differing_runs,omitempty"`
	// Timings: the ones the claim vouches for (its tolerances) first, then
	// its other observed *_seconds values.
	Timings []Timing `json:"timings,omitempty"`
}

// OddRun is a run whose verdict on a claim differs from the most frequent one.
type OddRun struct {
	RunID   string         `json:"run_id"`
	Verdict claims.Verdict `json:"verdict"`
	Reason  string         `json:"reason,omitempty"`
}

// Timing is the spread of one observed *_seconds value of a claim.
type Timing struct {
	Key string `json:"key"`
	// Vouched: the claim vouches for this timing (a key of its Tolerances):
	// results:compare fails a run whose value is further than Tolerance
	// from the reference's.
	Vouched   bool    `json:"vouched"`
	Tolerance float64 `json:"tolerance_seconds,omitempty"`
	Dist
	// WiderThanTolerance: max − min exceeds the tolerance, so some run of
	// these, taken as the reference, would fail results:compare on another.
	WiderThanTolerance bool `json:"wider_than_tolerance,omitempty"`
}

// Dist is a distribution of seconds. Percentiles are nearest-rank: always
// one of the values (p50 of 1,2,3,4 is 2; p95 of twenty values is the 19th).
type Dist struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// Distribution returns the nearest-rank distribution of the values (N 0 for none).
func Distribution(values []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	v := slices.Clone(values)
	slices.Sort(v)
	return Dist{N: len(v), Min: v[0], P50: Percentile(v, 50), P95: Percentile(v, 95), Max: v[len(v)-1]}
}

// Percentile is the nearest-rank p-th percentile of sorted values: the
// smallest value with at least p % of the values at or below it.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Build counts the runs (pure). Labs come in the order of their first run;
// a lab's runs are listed in start order.
func Build(runs []Run) Report {
	r := Report{Format: Format}
	byLab := map[string][]Run{}
	var order []string
	for _, run := range runs {
		name := run.Lab
		if name == "" && run.Summary != nil {
			name = run.Summary.Lab
		}
		if _, ok := byLab[name]; !ok {
			order = append(order, name)
		}
		byLab[name] = append(byLab[name], run)
	}
	for _, name := range order {
		r.Labs = append(r.Labs, buildLab(name, byLab[name]))
	}
	return r
}

func buildLab(name string, runs []Run) Lab {
	slices.SortStableFunc(runs, func(a, b Run) int {
		if a.Summary == nil || b.Summary == nil {
			return 0
		}
		return cmp.Or(a.Summary.StartedAt.Compare(b.Summary.StartedAt), strings.Compare(a.Summary.RunID, b.Summary.RunID))
	})
	l := Lab{Lab: name, Runs: len(runs), Verdicts: map[string]int{}}
	var secs []float64
	type acc struct {
		stats    ClaimStats
		verdicts map[string]claims.Verdict // run id → verdict
		reasons  map[string]string
		runOrder []string
		values   map[string][]float64
		tol      map[string]float64
	}
	var claimOrder []string
	accs := map[string]*acc{}
	withSummary := 0
	for _, run := range runs {
		ref := RunRef{Verdict: NoSummary}
		if run.Err != "" {
			ref.Errors = []string{run.Err}
		}
		s := run.Summary
		if s == nil {
			l.Verdicts[NoSummary]++
			l.RunList = append(l.RunList, ref)
			continue
		}
		withSummary++
		ref.RunID, ref.Dir, ref.Verdict = s.RunID, s.Dir, string(s.Verdict)
		if len(s.Errors) > 0 {
			ref.Errors = s.Errors
		}
		if !s.StartedAt.IsZero() && s.FinishedAt.After(s.StartedAt) {
			ref.Seconds = s.FinishedAt.Sub(s.StartedAt).Seconds()
			secs = append(secs, ref.Seconds)
		}
		for _, c := range s.Claims {
			if c.Verdict != claims.Pass && c.Verdict != claims.NotChecked {
				ref.FailedClaims = append(ref.FailedClaims, c.ID)
			}
		}
		l.RunList = append(l.RunList, ref)
		l.Verdicts[string(s.Verdict)]++
		if s.Verdict == claims.Pass {
			l.Passed++
		}
		for _, c := range s.Claims {
			a := accs[c.ID]
			if a == nil {
				a = &acc{stats: ClaimStats{ID: c.ID}, verdicts: map[string]claims.Verdict{}, reasons: map[string]string{},
					values: map[string][]float64{}, tol: map[string]float64{}}
				accs[c.ID] = a
				claimOrder = append(claimOrder, c.ID)
			}
			if a.stats.Statement == "" {
				a.stats.Statement = c.Statement
			}
			switch c.Verdict {
			case claims.Pass:
				a.stats.Pass++
			case claims.NotChecked:
				a.stats.NotChecked++
			default:
				a.stats.Fail++
			}
			a.verdicts[s.RunID] = c.Verdict
			a.reasons[s.RunID] = c.Reason
			a.runOrder = append(a.runOrder, s.RunID)
			for k, v := range c.Observed {
				if !strings.HasSuffix(k, "_seconds") {
					continue
				}
				if f, ok := number(v); ok {
					a.values[k] = append(a.values[k], f)
				}
			}
			for k, t := range c.Tolerances {
				if old, ok := a.tol[k]; !ok || t < old {
					a.tol[k] = t // the strictest, should a lab's tolerance have changed between runs
				}
			}
		}
	}
	if len(secs) > 0 {
		d := Distribution(secs)
		l.RunSeconds = &d
	}
	for _, id := range claimOrder {
		a := accs[id]
		st := a.stats
		st.Absent = withSummary - len(a.runOrder)
		usual := usualVerdict(st)
		for _, run := range a.runOrder {
			if v := a.verdicts[run]; v != usual {
				st.Differs = true
				st.Odd = append(st.Odd, OddRun{RunID: run, Verdict: v, Reason: a.reasons[run]})
			}
		}
		st.Timings = timings(a.values, a.tol)
		l.Claims = append(l.Claims, st)
	}
	// Differing verdicts first; otherwise the lab's own order.
	slices.SortStableFunc(l.Claims, func(a, b ClaimStats) int {
		switch {
		case a.Differs == b.Differs:
			return 0
		case a.Differs:
			return -1
		}
		return 1
	})
	return l
}

// usualVerdict is the claim's most frequent verdict; on a tie pass, then
// not checked, so that the fails are the ones named.
func usualVerdict(s ClaimStats) claims.Verdict {
	v, n := claims.Pass, s.Pass
	if s.NotChecked > n {
		v, n = claims.NotChecked, s.NotChecked
	}
	if s.Fail > n {
		v = claims.Fail
	}
	return v
}

// timings: the vouched ones first, then the others, each by key. A vouched
// key with no numeric value in any run still shows (n 0): the claim vouches
// for a timing it never observed.
func timings(values map[string][]float64, tol map[string]float64) []Timing {
	var out []Timing
	for k, vs := range values {
		t := Timing{Key: k, Dist: Distribution(vs)}
		if tv, ok := tol[k]; ok {
			t.Vouched, t.Tolerance = true, tv
			t.WiderThanTolerance = t.N > 1 && t.Max-t.Min > tv+1e-9
		}
		out = append(out, t)
	}
	for k, tv := range tol {
		if _, ok := values[k]; !ok {
			out = append(out, Timing{Key: k, Vouched: true, Tolerance: tv})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vouched != out[j].Vouched {
			return out[i].Vouched
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// number is an observed value as seconds, if it is a number: float64 from
// summary.json, other numeric types from a summary still in memory.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Flaky lists the claims whose verdicts differ between the lab's runs.
func (l Lab) Flaky() []ClaimStats {
	var out []ClaimStats
	for _, c := range l.Claims {
		if c.Differs {
			out = append(out, c)
		}
	}
	return out
}

// AlwaysFailing lists the claims that failed in every run that decided them.
func (l Lab) AlwaysFailing() []ClaimStats {
	var out []ClaimStats
	for _, c := range l.Claims {
		if !c.Differs && c.Fail > 0 {
			out = append(out, c)
		}
	}
	return out
}

// AllPass reports whether every run of every lab passed.
func (r Report) AllPass() bool {
	for _, l := range r.Labs {
		if l.Passed != l.Runs {
			return false
		}
	}
	return len(r.Labs) > 0
}
