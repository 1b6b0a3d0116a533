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

func TestReadBuildsWithoutRecords(t *testing.T) {
	got, err := ReadBuilds(t.TempDir())
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v %v", got, err)
	}
}
