package recorder

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// FollowJournal streams the node's journal of unit (`journalctl -u <unit>
// -o json -f`, from now) for at most within, or until the recorder stops.
// Every line is saved as node/journal-<unit>-<node>.jsonl; the entries whose
// message contains keep (a pod's UID) are recorded (Record.Journal) as they
// come.
func (r *Recorder) FollowJournal(node Node, unit, keep string, within time.Duration) error {
	rel := "node/journal-" + unit + "-" + node.String() + ".jsonl"
	command := "journalctl -u " + unit + " -o json --follow --lines=0 --no-pager"
	return r.followOnNode(node, "following the journal of "+unit, rel, command, within, func(line []byte, f io.Writer) {
		_, _ = f.Write(append(append([]byte(nil), line...), '\n'))
		e, err := ParseJournalLine(line)
		if err != nil || !strings.Contains(e.Message, keep) {
			return
		}
		e.Node, e.Unit, e.ObservedAt, e.Path = node.String(), unit, now(), rel
		r.mu.Lock()
		r.rec.Journal = append(r.rec.Journal, e)
		r.broadcast()
		r.mu.Unlock()
	})
}

// ParseJournalLine reads one line of `journalctl -o json`: the entry's time
// (__REALTIME_TIMESTAMP, microseconds since the epoch, node clock) and its
// MESSAGE (a string, or an array of bytes when it is not valid UTF-8).
func ParseJournalLine(line []byte) (evidence.JournalEntry, error) {
	var raw struct {
		Realtime string          `json:"__REALTIME_TIMESTAMP"`
		Message  json.RawMessage `json:"MESSAGE"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return evidence.JournalEntry{}, fmt.Errorf("reading a journal line: %w", err)
	}
	us, err := strconv.ParseInt(raw.Realtime, 10, 64)
	if err != nil {
		return evidence.JournalEntry{}, fmt.Errorf("reading a journal entry's time %q: %w", raw.Realtime, err)
	}
	var msg string
	if err := json.Unmarshal(raw.Message, &msg); err != nil {
		var bytes []byte
		var ints []int
		if err := json.Unmarshal(raw.Message, &ints); err != nil {
			return evidence.JournalEntry{}, fmt.Errorf("reading a journal entry's message: %w", err)
		}
		for _, i := range ints {
			bytes = append(bytes, byte(i))
		}
		msg = string(bytes)
	}
	return evidence.JournalEntry{At: time.UnixMicro(us).UTC(), Message: msg}, nil
}

// AddMountLook records a look at a node's mount table and at what holds a
// mount, saving what was read (raw) in the current step's folder.
func (r *Recorder) AddMountLook(l evidence.MountLook, raw []byte) evidence.MountLook {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.Step = r.currentStepLocked()
	l.Path = r.uniquePathLocked(r.stepDirLocked(), "mount-"+l.Node, ".txt")
	if err := r.writeFileLocked(l.Path, raw); err != nil {
		l.Error = strings.TrimSpace(l.Error + "; " + err.Error())
	}
	r.rec.Mounts = append(r.rec.Mounts, l)
	r.broadcast()
	return l
}
