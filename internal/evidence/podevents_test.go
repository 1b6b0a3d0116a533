package evidence

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPodEventsOnDisk(t *testing.T) {
	at := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	grace := int64(0)
	events := []PodEvent{
		{ObservedAt: at, Type: "ADDED", PodState: PodState{Name: "a", UID: "u1", ResourceVersion: "1", Phase: "Pending", Labels: map[string]string{}}},
		{ObservedAt: at.Add(time.Second), Type: "MODIFIED", PodState: PodState{Name: "a", UID: "u1", ResourceVersion: "2", Phase: "Running", DeletionTimestamp: &at, DeletionGracePeriodSeconds: &grace, Finalizers: []string{"f"}, Labels: map[string]string{"termlab.dev/stage-set": "faithful"}}},
		{ObservedAt: at.Add(2 * time.Second), Type: "DELETED", PodState: PodState{Name: "a", UID: "u1", ResourceVersion: "3"}},
	}
	var b strings.Builder
	for i, e := range events {
		// The object holds the line's member names again, and one object is
		// larger than the reader's buffer.
		e.Object = json.RawMessage(`{"metadata":{"annotations":{"x":"y","object":"z"}},"status":{"phase":"Failed","type":"LISTED"}}`)
		if i == 1 {
			e.Object = json.RawMessage(`{"big":"` + strings.Repeat("x", 3<<20) + `"}`)
		}
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString(`{"observed_at":"2026-12-05T04:00:03Z","type":"ADDED","name":"b"`) // being written: no newline yet
	path := filepath.Join(t.TempDir(), EventsFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &Record{}
	rec.PodEventsOnDisk(path, 3)
	var got []PodEvent
	if err := rec.EachPodEvent(func(e PodEvent) bool { got = append(got, e); return true }); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(events)
	have, _ := json.Marshal(got)
	if string(want) != string(have) {
		t.Errorf("read back:\n%s\nwant\n%s", have, want)
	}
	if rec.PodEventCount() != 3 || len(rec.EventsFor("a")) != 3 || len(rec.Pods()) != 1 {
		t.Errorf("count %d, events of a %d, pods %v", rec.PodEventCount(), len(rec.EventsFor("a")), rec.Pods())
	}
	// Stopping early reads no further.
	n := 0
	_ = rec.EachPodEvent(func(PodEvent) bool { n++; return false })
	if n != 1 {
		t.Errorf("visit returned false, yet %d events were visited", n)
	}
	// A broken line is an error naming it.
	if err := os.WriteFile(path, []byte("{\"type\":\"ADDED\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rec.EachPodEvent(func(PodEvent) bool { return true }); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken line: %v", err)
	}
}

// BenchmarkEachPodEventOnDisk reads back pod events as lab:scale writes them
// (a 4 KB object on each line, as a kwok pod's is): the cost of each of the
// claims' and the report's passes over a run's events.jsonl.
func BenchmarkEachPodEventOnDisk(b *testing.B) {
	at := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	object := json.RawMessage(`{"kind":"Pod","metadata":{"name":"scale-00001","annotations":{"a":"` + strings.Repeat("x", 4000) + `"}}}`)
	var buf strings.Builder
	const n = 20000
	for i := 0; i < n; i++ {
		e := PodEvent{ObservedAt: at.Add(time.Duration(i) * time.Millisecond), Type: "MODIFIED", Object: object,
			PodState: PodState{Name: "scale-00001", UID: "3192f730-db06-4271-b9dd-04c1bb742bfd", ResourceVersion: "116288", NodeName: "scale-20261205-040000-abcd-001", Phase: "Running", Ready: "True",
				Containers: []ContainerState{{Name: "app", ContainerID: strings.Repeat("a", 64), State: "running", StartedAt: &at}}, Labels: map[string]string{"termlab.dev/stage-set": "faithful"}}}
		line, _ := json.Marshal(e)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	path := filepath.Join(b.TempDir(), EventsFile)
	if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	rec := &Record{}
	rec.PodEventsOnDisk(path, n)
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seen := 0
		if err := rec.EachPodEvent(func(PodEvent) bool { seen++; return true }); err != nil || seen != n {
			b.Fatalf("%d events, %v", seen, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

// Load leaves a large events.jsonl and audit.jsonl on disk, counted; a small
// one is read into memory.
func TestLoadLeavesLargeFilesOnDisk(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(RecordFile, `{"lab":"scale"}`)
	write(EventsFile, strings.Repeat(`{"type":"ADDED","name":"p","object":{"kind":"Pod"}}`+"\n", 40))
	write(AuditFile, strings.Repeat(`{"auditID":"a","verb":"delete"}`+"\n", 30))
	for _, tc := range []struct {
		above     int64
		onDisk    bool
		pods, aud int
	}{{64 << 20, false, 40, 30}, {100, true, 40, 30}} {
		old := streamAbove
		streamAbove = tc.above
		rec, err := Load(dir)
		streamAbove = old
		if err != nil {
			t.Fatal(err)
		}
		if (rec.PodEvents == nil) != tc.onDisk || (rec.Audit == nil) != tc.onDisk || rec.PodEventCount() != tc.pods || rec.AuditCount() != tc.aud || len(rec.EventsFor("p")) != tc.pods {
			t.Errorf("above %d: %d pod events in memory, %d counted; %d audit events in memory, %d counted", tc.above, len(rec.PodEvents), rec.PodEventCount(), len(rec.Audit), rec.AuditCount())
		}
	}
}
