// Package compare tells whether a lab run matches another (by default the
// committed reference run of its lab), normalised so that runs on different
// machines and days compare:
//
//   - the same claims (ids and statements) with the same verdicts, and the
//     same overall verdict;
//   - per pod, the same deletion transition sequence (claims.DeletionTransitions:
//     the ordered changes of deletionTimestamp, deletionGracePeriodSeconds,
//     finalizers, container states, Ready, phase and DELETED, without times,
//     UIDs or resourceVersions);
//   - each timing a claim vouches for (claims.Claim.Tolerances) within the
//     tolerance that claim states.
//
// Those decide Matches. Everything else that differs is reported as a note
// and does not fail: vouched timings within their tolerance, every other
// timing (how long a machine under load took for something no claim bounds),
// other observed values (exit codes, heartbeat counts), versions. Wall-clock
// times, container IDs and resourceVersions are never compared.
package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Run is a run folder read back: its summary and its record.
type Run struct {
	Dir     string
	Summary *report.Summary
	Record  *evidence.Record
}

// Load reads a run folder (symlinks such as latest are followed).
func Load(dir string) (*Run, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	s, err := report.ReadSummary(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	rec, err := evidence.Load(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Run{Dir: dir, Summary: s, Record: rec}, nil
}

// Item is one thing that differs (or a note).
type Item struct {
	// Kind: lab, verdict, claim, transitions, timing, observed, versions.
	Kind string `json:"kind"`
	// Subject is the claim id, pod or version key it is about.
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text"`
}

func (i Item) String() string {
	if i.Subject == "" {
		return i.Kind + ": " + i.Text
	}
	return i.Kind + " " + i.Subject + ": " + i.Text
}

// Result is a comparison of a run with a reference.
type Result struct {
	Lab       string `json:"lab"`
	Run       string `json:"run"`
	Reference string `json:"reference"`
	// Differences make the run not match.
	Differences []Item `json:"differences"`
	// Notes are reported but do not fail.
	Notes []Item `json:"notes"`
	// Compared counts what was compared: claims, pods' transition sequences,
	// timings vouched for by their claims (Timings) and timings only reported.
	Claims, Pods, Timings, Reported int
}

// Matches reports whether nothing but notes differ.
func (r *Result) Matches() bool { return len(r.Differences) == 0 }

func (r *Result) differ(kind, subject, format string, args ...any) {
	r.Differences = append(r.Differences, Item{kind, subject, fmt.Sprintf(format, args...)})
}

func (r *Result) note(kind, subject, format string, args ...any) {
	r.Notes = append(r.Notes, Item{kind, subject, fmt.Sprintf(format, args...)})
}

// Runs compares run with ref.
func Runs(run, ref *Run) *Result {
	r := &Result{Lab: run.Summary.Lab, Run: run.Dir, Reference: ref.Dir}
	a, b := run.Summary, ref.Summary
	if a.Lab != b.Lab {
		r.differ("lab", "", "the run is of lab %q, the reference of lab %q", a.Lab, b.Lab)
		return r
	}
	if a.Verdict != b.Verdict {
		r.differ("verdict", "", "the run's verdict is %s, the reference's %s", a.Verdict, b.Verdict)
	}
	compareClaims(r, a.Claims, b.Claims)
	compareTransitions(r, run.Record, ref.Record)
	compareVersions(r, a.Versions, b.Versions)
	return r
}

func compareClaims(r *Result, got, want []claims.Claim) {
	byID := map[string]claims.Claim{}
	for _, c := range got {
		byID[c.ID] = c
	}
	seen := map[string]bool{}
	for _, w := range want {
		seen[w.ID] = true
		g, ok := byID[w.ID]
		if !ok {
			r.differ("claim", w.ID, "missing from the run (the reference has it, verdict %s)", w.Verdict)
			continue
		}
		r.Claims++
		if g.Statement != w.Statement {
			r.differ("claim", w.ID, "the statement differs: run %q, reference %q", g.Statement, w.Statement)
		}
		if g.Verdict != w.Verdict {
			why := ""
			if g.Reason != "" {
				why = " (" + g.Reason + ")"
			}
			r.differ("claim", w.ID, "verdict %s in the run%s, %s in the reference", g.Verdict, why, w.Verdict)
		}
		compareObserved(r, w.ID, g.Observed, w.Observed, tolerances(g, w))
	}
	for _, g := range got {
		if !seen[g.ID] {
			r.differ("claim", g.ID, "only in the run (verdict %s), not in the reference", g.Verdict)
		}
	}
}

var (
	hexID = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// runSpecific: values that differ between any two runs by nature.
func runSpecific(key string, v any) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_id") || strings.Contains(k, "resourceversion") {
		return true
	}
	if s, ok := v.(string); ok {
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return true
		}
		if hexID.MatchString(s) {
			return true
		}
	}
	return false
}

// tolerances are the timings the run's claim vouches for, and those only the
// reference's claim vouches for (a claim changed since the reference run).
func tolerances(got, want claims.Claim) map[string]float64 {
	out := maps.Clone(want.Tolerances)
	if out == nil {
		out = map[string]float64{}
	}
	maps.Copy(out, got.Tolerances)
	return out
}

func compareObserved(r *Result, id string, got, want map[string]any, tol map[string]float64) {
	for _, k := range sortedKeys(want) {
		w := want[k]
		g, ok := got[k]
		if runSpecific(k, w) {
			continue
		}
		limit, vouched := tol[k]
		if !ok {
			if vouched {
				r.differ("timing", id, "%s: not observed in the run (reference: %s), and the claim vouches for it", k, show(w))
			} else {
				r.note("observed", id, "%s: not observed in the run (reference: %s)", k, show(w))
			}
			continue
		}
		wf, wNum := w.(float64)
		gf, gNum := g.(float64)
		if strings.HasSuffix(k, "_seconds") && wNum && gNum {
			switch {
			case !vouched:
				r.Reported++
				if gf != wf {
					r.note("timing", id, "%s: %.3f s in the run, %.3f s in the reference (reported only: no claim vouches for it)", k, gf, wf)
				}
			case math.Abs(gf-wf) <= limit+1e-9:
				r.Timings++
				if gf != wf {
					r.note("timing", id, "%s: %.3f s in the run, %.3f s in the reference (within the claim's ±%g s)", k, gf, wf, limit)
				}
			default:
				r.Timings++
				r.differ("timing", id, "%s: %.3f s in the run, %.3f s in the reference: %.3f s apart, beyond the ±%g s the claim vouches for", k, gf, wf, math.Abs(gf-wf), limit)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			r.note("observed", id, "%s: %s in the run, %s in the reference", k, show(g), show(w))
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok && !runSpecific(k, got[k]) {
			r.note("observed", id, "%s: %s in the run, not observed in the reference", k, show(got[k]))
		}
	}
}

// compareTransitions compares each pod's deletion transitions, by pod name.
func compareTransitions(r *Result, run, ref *evidence.Record) {
	got, want := podEvents(run), podEvents(ref)
	for _, pod := range sortedKeys(want) {
		g, ok := got[pod]
		if !ok {
			r.differ("transitions", pod, "no watch events for this pod in the run")
			continue
		}
		r.Pods++
		a, b := claims.DeletionTransitions(g), claims.DeletionTransitions(want[pod])
		i, differs := claims.FirstDifference(a, b)
		if !differs {
			continue
		}
		r.differ("transitions", pod, "first difference at transition %d: run %s, reference %s\n      run:       %s\n      reference: %s",
			i+1, at(a, i), at(b, i), strings.Join(window(a, i), " → "), strings.Join(window(b, i), " → "))
	}
	for _, pod := range sortedKeys(got) {
		if _, ok := want[pod]; !ok {
			r.differ("transitions", pod, "only in the run, the reference has no such pod")
		}
	}
}

func podEvents(rec *evidence.Record) map[string][]evidence.PodEvent {
	out := map[string][]evidence.PodEvent{}
	if rec == nil {
		return out
	}
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		name := stablePodName(e.Name)
		out[name] = append(out[name], e)
		return true
	})
	return out
}

// generatedSuffix is what a Deployment adds to its pods' names: the
// ReplicaSet's pod-template-hash and five random characters, both from the
// alphabet Kubernetes uses for generated names (k8s.io/apimachinery
// util/rand: no vowels, no 0, 1 or 3).
var generatedSuffix = regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// stablePodName is a pod's name as it is the same in every run: a
// Deployment's pod (ledger-6ff8669f56-pfng9) becomes ledger-*; a pod the lab
// or a StatefulSet names is kept as it is.
func stablePodName(name string) string {
	if loc := generatedSuffix.FindStringIndex(name); loc != nil {
		return name[:loc[0]] + "-*"
	}
	return name
}

func at(ts []claims.Transition, i int) string {
	if i < len(ts) {
		return ts[i].String()
	}
	return "(nothing: the sequence ends)"
}

// window shows the transitions around index i, with … for what is left out.
func window(ts []claims.Transition, i int) []string {
	s := claims.Strings(ts)
	lo, hi := max(0, i-2), min(len(s), i+3)
	out := append([]string(nil), s[lo:hi]...)
	if lo > 0 {
		out = append([]string{"…"}, out...)
	}
	if hi < len(s) {
		out = append(out, "…")
	}
	if len(out) == 0 {
		return []string{"(none)"}
	}
	return out
}

func compareVersions(r *Result, got, want map[string]string) {
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		if got[k] != want[k] {
			r.note("versions", k, "%s in the run, %s in the reference", orNone(got[k]), orNone(want[k]))
		}
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
