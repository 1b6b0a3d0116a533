package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Pod events and audit events on disk. A run of tens of thousands of pods (lab:scale) has
// hundreds of thousands of pod events: kept in memory they would make
// termlab's memory grow with the run, so such a record leaves PodEvents
// empty and reads events.jsonl back as a stream whenever it is asked for
// them (EachPodEvent). Every reader of pod events goes through EachPodEvent,
// so it does not matter to a claim or a report where they are. The same for
// the audit events on the run's objects (AuditOnDisk, EachAudit).

// streamAbove is the size of events.jsonl above which Load leaves the pod
// events on disk: a quick run's file is about a megabyte, a 5,000-pod run's
// well over a hundred.
var streamAbove int64 = 64 << 20

// PodEventsOnDisk makes the record read its pod events from path
// (events.jsonl, as the recorder writes it) instead of PodEvents; count is
// how many there are, for PodEventCount without a read.
func (r *Record) PodEventsOnDisk(path string, count int) {
	r.podEventsFile, r.podEventCount = path, count
	r.PodEvents = nil
}

// PodEventCount is how many pod events the record holds.
func (r *Record) PodEventCount() int {
	if r.podEventsFile != "" {
		return r.podEventCount
	}
	return len(r.PodEvents)
}

// EachPodEvent calls visit with every pod event in the order recorded,
// until visit returns false. Events read from disk carry no Object (the
// whole API object stays in events.jsonl). The error is a read error of
// events.jsonl: the events before it were visited.
func (r *Record) EachPodEvent(visit func(PodEvent) bool) error {
	return each(r.PodEvents, r.podEventsFile, objectKey, visit)
}

// each visits the items in memory, or those of file when it is set (each
// line decoded up to cut: eachLine).
func each[T any](inMemory []T, file string, cut []byte, visit func(T) bool) error {
	if file == "" {
		for _, v := range inMemory {
			if !visit(v) {
				return nil
			}
		}
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLine(f, file, cut, visit)
}

// objectKey begins the last member of an events.jsonl line, the whole API
// object (internal/recorder writes it last). The members before it are
// PodState's: inside a JSON string a quote is escaped, none of them is named
// object, and its one map (Labels) holds only RecordedLabels' keys; so the
// first of these bytes in a line is that member's key (the object itself may
// hold them again, after it).
var objectKey = []byte(`,"object":`)

// eachLine decodes every complete line of in as a T. With cut, a line is
// decoded only up to the first cut in it: what follows, the whole object of
// a pod event and most of its bytes, is not read, so a file of gigabytes
// costs only its small parts. A last line without its newline is one being
// written now: it is left for a later read.
func eachLine[T any](in io.Reader, name string, cut []byte, visit func(T) bool) error {
	br := bufio.NewReaderSize(in, 1<<20)
	var long []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it (rare: a huge object).
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var v T
		if i := bytes.Index(line, cut); len(cut) > 0 && i > 0 {
			small := append(line[:i:i], '}')
			err = json.Unmarshal(small, &v)
		} else {
			err = json.Unmarshal(line, &v)
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if !visit(v) {
			return nil
		}
	}
}

// AuditOnDisk makes the record read its audit events from path (audit.jsonl)
// instead of Audit; count is how many there are.
func (r *Record) AuditOnDisk(path string, count int) {
	r.auditFile, r.auditCount, r.auditIndex = path, count, nil
	r.Audit = nil
}

// AuditCount is how many audit events the record holds.
func (r *Record) AuditCount() int {
	if r.auditFile != "" {
		return r.auditCount
	}
	return len(r.Audit)
}

// EachAudit calls visit with every audit event in the order recorded, until
// visit returns false. The error is a read error of audit.jsonl.
func (r *Record) EachAudit(visit func(AuditEvent) bool) error {
	return each(r.Audit, r.auditFile, nil, visit)
}
