package nodeunit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// JournalEntry is one entry of a unit's journal: its time (node clock) and message.
type JournalEntry struct {
	At      time.Time
	Message string
}

// ParseJournalLine reads one line of `journalctl -o json`: the entry's time
// (__REALTIME_TIMESTAMP, microseconds since the epoch, node clock) and its
// MESSAGE (a string, or an array of bytes when it is not valid UTF-8).
func ParseJournalLine(line []byte) (JournalEntry, error) {
	var raw struct {
		Realtime string          `json:"__REALTIME_TIMESTAMP"`
		Message  json.RawMessage `json:"MESSAGE"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return JournalEntry{}, fmt.Errorf("reading a journal line: %w", err)
	}
	us, err := strconv.ParseInt(raw.Realtime, 10, 64)
	if err != nil {
		return JournalEntry{}, fmt.Errorf("reading a journal entry's time %q: %w", raw.Realtime, err)
	}
	var msg string
	if err := json.Unmarshal(raw.Message, &msg); err != nil {
		var ints []int
		if err := json.Unmarshal(raw.Message, &ints); err != nil {
			return JournalEntry{}, fmt.Errorf("reading a journal entry's message: %w", err)
		}
		b := make([]byte, len(ints))
		for i, v := range ints {
			b[i] = byte(v)
		}
		msg = string(b)
	}
	return JournalEntry{At: time.UnixMicro(us).UTC(), Message: msg}, nil
}
