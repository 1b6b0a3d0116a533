package diagnose

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The watch's last look joins summary.json as "watched", every other field
// as written, and the file still decodes strictly as a Summary.
func TestRecordWatchAddsTheLastLook(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	r := Report{Pod: "ns/p", At: at, Answer: "held by finalizer a", Findings: []Finding{}, Advice: []string{"wait"}}
	if _, err := Write(dir, r, Raw{}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	last := Look{At: at.Add(time.Minute), Exists: true, Held: []string{"finalizer a holds it"}, Answer: "still held"}
	if err := RecordWatch(dir, last); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	dec := json.NewDecoder(bytes.NewReader(after))
	dec.DisallowUnknownFields()
	var s Summary
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%v\n%s", err, after)
	}
	if s.Watched == nil || !s.Watched.Exists || !s.Watched.At.Equal(last.At) || s.Watched.Answer != "still held" || len(s.Watched.Held) != 1 {
		t.Errorf("watched %+v", s.Watched)
	}
	if s.Answer != r.Answer || s.Pod != r.Pod || !bytes.HasPrefix(after, bytes.TrimRight(before, "}\n")) {
		t.Errorf("the rest changed:\n%s\n---\n%s", before, after)
	}
}
