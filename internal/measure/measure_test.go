package measure

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBuildsKeepsLastColdAndWarm(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "builds.jsonl"), []byte(strings.Join([]string{
		`{"recipe":"kubernetes","cached":false,"duration_seconds":400}`,
		`{"recipe":"kubernetes","cached":true,"duration_seconds":0.02}`,
		`{"recipe":"kubernetes","cached":false,"duration_seconds":380}`,
		`{"recipe":"etcd","cached":false,"duration_seconds":30}`,
		`{torn line`,
	}, "\n")), 0o644)
	os.WriteFile(filepath.Join(dir, "image-builds.jsonl"), []byte(`{"name":"node-image","cached":false,"duration_seconds":41}`+"\n"), 0o644)
	got, err := ReadBuilds(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Build{
		{Name: "etcd", ColdSeconds: 30, Runs: 1},
		{Name: "kubernetes", ColdSeconds: 380, WarmSeconds: 0.02, Runs: 3},
		{Name: "node-image", ColdSeconds: 41, Runs: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v want %+v", i, got[i], want[i])
		}
	}
	var b bytes.Buffer
	Print(&b, Figures{BareKindSeconds: 20, UpSeconds: 30, Builds: got})
	if !strings.Contains(b.String(), "1.50× bare kind") {
		t.Errorf("ratio missing:\n%s", b.String())
	}
}

// The summary is the round with the median ratio, not a mean of seconds nor
// the best round: one slow bare create must not make termlab look faster.
func TestMedianRound(t *testing.T) {
	f := Figures{Rounds: []Round{
		{BareKindSeconds: 20, BareAllReadySeconds: 24, UpSeconds: 30}, // 1.50
		{BareKindSeconds: 25, UpSeconds: 25},                          // 1.00
		{BareKindSeconds: 20, UpSeconds: 22},                          // 1.10
	}}
	f.median()
	if f.BareKindSeconds != 20 || f.UpSeconds != 22 {
		t.Fatalf("median round: got bare %.1f up %.1f, want 20 and 22", f.BareKindSeconds, f.UpSeconds)
	}
	f.Rounds = f.Rounds[:2] // even: the upper middle, 1.50
	f.median()
	if f.UpSeconds != 30 {
		t.Fatalf("even count: got up %.1f, want 30 (the upper middle)", f.UpSeconds)
	}
	var b bytes.Buffer
	Print(&b, f)
	for _, want := range []string{"round 1: bare kind create  20.0 s (every node Ready  24.0 s), cluster:up from no cluster  30.0 s: 1.50×", "(the median round;", "1.50× bare kind", "(cluster:up is 1.25× that)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}

func TestReadBuildsWithoutRecords(t *testing.T) {
	got, err := ReadBuilds(t.TempDir())
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v %v", got, err)
	}
}
