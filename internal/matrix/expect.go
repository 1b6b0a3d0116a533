package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/termlab/termlab/internal/claims"
)

// Expectation is a claim's declared dependence on the Kubernetes version:
// from Since (inclusive) until Until (exclusive, "" for open) the claim's
// observed Key should satisfy Inside, and outside that range Outside (nil:
// nothing is declared there). A value that does not match the one that
// applies is flagged in the table. The claims themselves (internal/claims)
// stay version-free; this map is the matrix's own.
type Expectation struct {
	Since, Until string
	// Key is the observed value the expectation reads (a key of Claim.Observed).
	Key string
	// Behaviour says, for a reader, what is expected inside the range and what before.
	Behaviour string
	Inside    Check
	Outside   Check
}

// Check says whether an observed value shows a behaviour and, in words, what that behaviour is.
type Check struct {
	Want string
	OK   func(v any) bool
}

// Expectations are the claims whose behaviour is known to depend on the release.
var Expectations = map[string]Expectation{
	"finalizer.kubelet.delete.object_stays": terminalPhase,
	"finalizer.kubelet.force.object_stays":  terminalPhase,
	"orphan.node_not_ready":                 nodeGrace,
	"stuck.node_not_ready":                  nodeGrace,
	"statefulset.node_not_ready":            nodeGrace,
}

// terminalPhase: since 1.27 the kubelet sets a terminal phase before the
// final delete, so a pod a finalizer holds shows Succeeded or Failed once its
// containers stopped; before, it stayed Running.
var terminalPhase = Expectation{
	Since: "v1.27.0", Key: "phase",
	Behaviour: "since 1.27 the kubelet sets a terminal phase before the final delete: a held pod whose containers stopped shows Succeeded or Failed (before 1.27 it stayed Running)",
	Inside:    Check{Want: "Succeeded or Failed", OK: func(v any) bool { return v == "Succeeded" || v == "Failed" }},
	Outside:   Check{Want: "Running", OK: func(v any) bool { return v == "Running" }},
}

// nodeGrace: node-monitor-grace-period became 50 s in 1.32 (40 s before).
// A stopped kubelet's node turns NotReady between the grace period minus a
// lease renewal (10 s) and the grace period plus two monitor passes and the
// status allowance (claims.NotReadyEarliest/Latest: 39.6–65 s at 50 s);
// at 40 s the same bounds are 29.6–55 s. The ranges overlap: only a value
// outside the applicable one is flagged.
var nodeGrace = Expectation{
	Since: "v1.32.0", Key: "not_ready_after_seconds",
	Behaviour: "node-monitor-grace-period is 50 s since 1.32 (40 s before): NotReady 39.6–65 s after the kubelet stopped (29.6–55 s before 1.32)",
	Inside:    Check{Want: "39.6–65 s", OK: within(39.6, 65)},
	Outside:   Check{Want: "29.6–55 s", OK: within(29.6, 55)},
}

func within(lo, hi float64) func(any) bool {
	return func(v any) bool {
		f, ok := v.(float64)
		return ok && f >= lo && f <= hi
	}
}

// Applies says whether version is inside the expectation's range.
func (e Expectation) Applies(version string) (bool, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return false, err
	}
	since, err := ParseVersion(e.Since)
	if err != nil {
		return false, fmt.Errorf("expectation since %q: %w", e.Since, err)
	}
	if v.Less(since) {
		return false, nil
	}
	if e.Until != "" {
		until, err := ParseVersion(e.Until)
		if err != nil {
			return false, fmt.Errorf("expectation until %q: %w", e.Until, err)
		}
		if !v.Less(until) {
			return false, nil
		}
	}
	return true, nil
}

// Range is the expectation's versions in words: "≥ v1.27.0", "v1.27.0 – v1.30.0".
func (e Expectation) Range() string {
	if e.Until == "" {
		return "≥ " + e.Since
	}
	return e.Since + " ≤ v < " + e.Until
}

// Judge checks a claim's observed value at version against the expectation:
// "" when it matches (or nothing is declared for that side of the range),
// else why it is flagged.
func (e Expectation) Judge(version string, c claims.Claim) string {
	in, err := e.Applies(version)
	if err != nil {
		return err.Error()
	}
	check, where := e.Inside, "expected from "+e.Since
	if !in {
		check, where = e.Outside, "expected outside "+e.Range()
		if check.OK == nil {
			return ""
		}
	}
	v, ok := c.Observed[e.Key]
	if !ok {
		return fmt.Sprintf("%s not observed (%s: %s)", e.Key, where, check.Want)
	}
	if !check.OK(v) {
		return fmt.Sprintf("%s = %s, %s: %s", e.Key, formatValue(e.Key, v), where, check.Want)
	}
	return ""
}

// decidingKeys name, by the end of a claim's ID, the observed values its
// verdict rests on; the table shows them. Longer suffixes are tried first.
var decidingKeys = map[string][]string{
	".object_stays":                     {"phase", "deleted_before_release"},
	".deleted":                          {"deleted_after_seconds"},
	".api_object_gone":                  {"deleted_after_seconds"},
	".api_object_exists_false":          {"deleted_after_seconds"},
	".container_stopped":                {"how", "stopped_after_seconds"},
	".container_stops":                  {"how", "stopped_after_seconds"},
	".reference_stopped":                {"how", "stopped_after_seconds"},
	"_after_kubelet_restart":            {"how", "stopped_after_seconds"},
	".graceful_stop":                    {"how", "stopped_after_sigterm_seconds"},
	".sigkill_after_minimum_grace":      {"how", "stopped_after_sigterm_seconds"},
	".container_outlives_object":        {"container_state", "last_seen_running_after_deleted_seconds"},
	".container_running":                {"container_state", "last_seen_running_after_deleted_seconds"},
	".container_running_after_gone":     {"container_state", "last_seen_running_after_deleted_seconds"},
	".heartbeat_advancing":              {"advanced_by", "last_beat_after_deleted_seconds"},
	".node_not_ready":                   {"not_ready_after_seconds"},
	".node_unreachable_taint":           {"tainted_after_seconds"},
	".stays_terminating":                {"running_looks_past_deadline"},
	".pod_gc_deleted":                   {"deleted_after_seconds"},
	".matches_kubelet":                  {"first_difference"},
	".grace_collapsed_never_terminated": {"grace_zero_after_seconds", "terminated_shown"},
	".reported_bug":                     {"stripped_after_seconds"},
	".split_brain":                      {"overlap_seconds"},
	".no_replacement_while_terminating": {"ledger_writes_in_window"},
	".replaced_after_force_delete":      {"created_after_deleted_seconds"},
	".one_writer_again":                 {"writers_after", "new_last_write_before_read_seconds"},
	".watch_order":                      {claims.WatchOrderBroken, claims.WatchOrderRepeats},
}

// DecidingKeys are the observed keys the table shows for a claim: by the
// end of its ID, else the timings it vouches for (Tolerances), else its
// first timing.
func DecidingKeys(c claims.Claim) []string {
	best := ""
	for suffix := range decidingKeys {
		if strings.HasSuffix(c.ID, suffix) && len(suffix) > len(best) {
			best = suffix
		}
	}
	var keys []string
	if best != "" {
		for _, k := range decidingKeys[best] {
			if _, ok := c.Observed[k]; ok {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		for k := range c.Tolerances {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	if len(keys) == 0 {
		var timings []string
		for k := range c.Observed {
			if strings.HasSuffix(k, "_seconds") {
				timings = append(timings, k)
			}
		}
		sort.Strings(timings)
		if len(timings) > 0 {
			keys = timings[:1]
		}
	}
	return keys
}

// Deciding renders the claim's deciding observed values, "key=value; …".
func Deciding(c claims.Claim, extra ...string) string {
	keys := DecidingKeys(c)
	for _, k := range extra {
		if _, ok := c.Observed[k]; ok && !contains(keys, k) {
			keys = append(keys, k)
		}
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+formatValue(k, c.Observed[k]))
	}
	return strings.Join(parts, "; ")
}

func formatValue(key string, v any) string {
	switch x := v.(type) {
	case float64:
		if strings.HasSuffix(key, "_seconds") {
			return fmt.Sprintf("%.2f s", x)
		}
		if x == float64(int64(x)) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%g", x)
	case string:
		return x
	case nil:
		return "null"
	default:
		return fmt.Sprint(x)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ClaimNames are the claim ids the matrix names (Expectations) and the ends
// of ids it names (decidingKeys), for a test beside the labs that each
// still names a claim some lab states: the matrix spells other packages'
// ids, and a renamed claim would silently lose its row's check.
func ClaimNames() (ids, suffixes []string) {
	for id := range Expectations {
		ids = append(ids, id)
	}
	for s := range decidingKeys {
		suffixes = append(suffixes, s)
	}
	sort.Strings(ids)
	sort.Strings(suffixes)
	return ids, suffixes
}
