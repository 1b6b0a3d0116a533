// Package scaleruns reads lab:scale's passing runs back from their summaries
// (results/scale/<run id>/summary.json): measure weighs the latest against
// the API server's ceiling, and a run with raised limits compares itself
// with one under the defaults.
package scaleruns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/termlab/termlab/internal/cluster"
)

// Rates are a lab:scale run's rates, as its summary's claims observed them.
type Rates struct {
	RunID            string         `json:"run_id"`
	Pods             int            `json:"pods"`
	Limits           cluster.Limits `json:"limits"`
	CreatePerSecond  float64        `json:"create_pods_per_second"`
	MarkedPerSecond  float64        `json:"marked_pods_per_second,omitempty"`
	DeletedPerSecond float64        `json:"deleted_pods_per_second"`
}

// Latest reads the newest passing lab:scale run under resultsDir/scale (run
// folders sort by time) that keep accepts; nil when there is none. A run's
// limits are what its pace claim observed asked for; a run without that
// claim (under 2,000 pods, or before -limits) ran with the defaults.
func Latest(resultsDir string, keep func(Rates) bool) (*Rates, error) {
	paths, err := filepath.Glob(filepath.Join(resultsDir, "scale", "2*", "summary.json"))
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	for _, p := range paths {
		r, passed, err := read(p)
		if err != nil {
			return nil, err
		}
		if passed && keep(r) {
			return &r, nil
		}
	}
	return nil, nil
}

// WithLimits keeps the runs made under limits.
func WithLimits(limits cluster.Limits) func(Rates) bool {
	return func(r Rates) bool { return r.Limits == limits }
}

// read reads one summary: its rates and whether it passed.
func read(path string) (Rates, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Rates{}, false, err
	}
	var s struct {
		RunID   string `json:"run_id"`
		Verdict string `json:"verdict"`
		Claims  []struct {
			Observed map[string]any `json:"observed"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return Rates{}, false, fmt.Errorf("reading %s: %w", path, err)
	}
	r := Rates{RunID: s.RunID, Limits: cluster.LimitsDefault}
	for _, c := range s.Claims {
		for k, v := range c.Observed {
			n, _ := v.(float64)
			switch k {
			case "limits_asked":
				if l, ok := v.(string); ok {
					r.Limits = cluster.Limits(l)
				}
			case "pods":
				r.Pods = int(n)
			case "create_pods_per_second":
				r.CreatePerSecond = n
			case "marked_pods_per_second":
				r.MarkedPerSecond = n
			case "deleted_pods_per_second":
				r.DeletedPerSecond = n
			}
		}
	}
	return r, s.Verdict == "pass", nil
}
