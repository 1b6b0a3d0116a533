package evidence

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Load reads a run folder back into a Record: record.json plus the JSONL
// streams. Claims decided on a loaded record equal those of the live run, so
// recorded runs serve as test fixtures and can be compared later.
func Load(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, fmt.Errorf("reading the run record: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, RecordFile), err)
	}
	if err := loadPodEvents(filepath.Join(dir, EventsFile), &rec); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, KubeEventsFile), &rec.KubeEvents); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, NodesFile), &rec.NodeEvents); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, EndpointSlicesFile), &rec.EndpointSlices); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, RequestsFile), &rec.Requests); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, NamespacesFile), &rec.NamespaceEvents); err != nil {
		return nil, err
	}
	if err := readLines(filepath.Join(dir, ControllersFile), &rec.ControllerEvents); err != nil {
		return nil, err
	}
	if err := loadAudit(filepath.Join(dir, AuditFile), &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func readLines[T any](path string, into *[]T) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
		*into = append(*into, v)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// loadPodEvents reads the pod events into rec, or, when the file is larger
// than streamAbove, only counts them and leaves them on disk (podevents.go).
func loadPodEvents(path string, rec *Record) error {
	n, large, err := countIfLarge(path, &rec.PodEvents, objectKey)
	if large {
		rec.PodEventsOnDisk(path, n)
	}
	return err
}

// loadAudit is loadPodEvents for the audit events.
func loadAudit(path string, rec *Record) error {
	n, large, err := countIfLarge(path, &rec.Audit, nil)
	if large {
		rec.AuditOnDisk(path, n)
	}
	return err
}

// countIfLarge reads the file's lines into into, or, when it is larger than
// streamAbove, only counts them (large).
func countIfLarge[T any](path string, into *[]T, cut []byte) (n int, large bool, err error) {
	st, err := os.Stat(path)
	if err != nil || st.Size() <= streamAbove {
		return 0, false, readLines(path, into)
	}
	err = each(nil, path, cut, func(T) bool { n++; return true })
	return n, true, err
}
