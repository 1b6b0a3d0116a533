package measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestLatestScaleTakesTheNewestPassingRun(t *testing.T) {
	dir := t.TempDir()
	write := func(run, verdict string, deleted float64) {
		t.Helper()
		p := filepath.Join(dir, "scale", run)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		body := `{"run_id":"` + run + `","verdict":"` + verdict + `","claims":[{"observed":{"pods":5000,"create_pods_per_second":102.5}},{"observed":{"deleted_pods_per_second":` + ftoa(deleted) + `}}]}`
		if err := os.WriteFile(filepath.Join(p, "summary.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := LatestScale(dir); err != nil || r != nil {
		t.Fatalf("no runs: got %+v, %v; want nil", r, err)
	}
	write("20261205-060000-aaaa", "fail", 1)
	if r, err := LatestScale(dir); err != nil || r != nil {
		t.Fatalf("only a failed run: got %+v, %v; want nil", r, err)
	}
	write("20261205-050000-bbbb", "pass", 37.5)
	write("20261205-070000-cccc", "fail", 2)
	r, err := LatestScale(dir)
	if err != nil || r == nil {
		t.Fatalf("got %+v, %v", r, err)
	}
	if r.RunID != "20261205-050000-bbbb" || r.Pods != 5000 || r.CreatePerSecond != 102.5 || r.DeletedPerSecond != 37.5 {
		t.Errorf("got %+v, want the passing run's figures", r)
	}
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
