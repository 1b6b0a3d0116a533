package scaleruns

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/termlab/termlab/internal/cluster"
)

func TestLatestTakesTheNewestPassingRun(t *testing.T) {
	dir := t.TempDir()
	write := func(run, verdict string, deleted float64) {
		t.Helper()
		p := filepath.Join(dir, "scale", run)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		body := `{"run_id":"` + run + `","verdict":"` + verdict + `","claims":[{"observed":{"pods":5000,"create_pods_per_second":102.5}},{"observed":{"marked_pods_per_second":30,"deleted_pods_per_second":` + ftoa(deleted) + `}}]}`
		if err := os.WriteFile(filepath.Join(p, "summary.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := Latest(dir, WithLimits(cluster.LimitsDefault)); err != nil || r != nil {
		t.Fatalf("no runs: got %+v, %v; want nil", r, err)
	}
	write("20261205-060000-aaaa", "fail", 1)
	if r, err := Latest(dir, WithLimits(cluster.LimitsDefault)); err != nil || r != nil {
		t.Fatalf("only a failed run: got %+v, %v; want nil", r, err)
	}
	write("20261205-050000-bbbb", "pass", 37.5)
	write("20261205-070000-cccc", "fail", 2)
	r, err := Latest(dir, WithLimits(cluster.LimitsDefault))
	if err != nil || r == nil {
		t.Fatalf("got %+v, %v", r, err)
	}
	if r.RunID != "20261205-050000-bbbb" || r.Pods != 5000 || r.CreatePerSecond != 102.5 || r.DeletedPerSecond != 37.5 || r.MarkedPerSecond != 30 || r.Limits != cluster.LimitsDefault {
		t.Errorf("got %+v, want the passing run's figures", r)
	}
}

// A raised run is compared as such, never as the defaults' latest.
func TestLatestByLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(run, observed string) {
		t.Helper()
		p := filepath.Join(dir, "scale", run)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		body := `{"run_id":"` + run + `","verdict":"pass","claims":[{"observed":{"pods":5000,"create_pods_per_second":100}},{"observed":{` + observed + `}}]}`
		if err := os.WriteFile(filepath.Join(p, "summary.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("20261205-050000-aaaa", `"deleted_pods_per_second":20`)                          // before -limits: the defaults
	write("20261205-060000-bbbb", `"deleted_pods_per_second":25,"limits_asked":"default"`) // a pace claim's
	write("20261205-070000-cccc", `"deleted_pods_per_second":40,"limits_asked":"raised"`)
	def, err := Latest(dir, WithLimits(cluster.LimitsDefault))
	if err != nil || def == nil || def.RunID != "20261205-060000-bbbb" {
		t.Errorf("default: %+v, %v", def, err)
	}
	raised, err := Latest(dir, WithLimits(cluster.LimitsRaised))
	if err != nil || raised == nil || raised.RunID != "20261205-070000-cccc" || raised.DeletedPerSecond != 40 {
		t.Errorf("raised: %+v, %v", raised, err)
	}
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
