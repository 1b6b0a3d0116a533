package evidence

import "time"

// JournalEntry is one entry of a node's systemd journal for a unit, as
// `journalctl -o json` gave it.
type JournalEntry struct {
	Node string `json:"node"`
	Unit string `json:"unit"`
	// At is the entry's own time (__REALTIME_TIMESTAMP), on the node's clock.
	At         time.Time `json:"at"`
	ObservedAt time.Time `json:"observed_at"`
	Message    string    `json:"message"`
	// Path is the file every line of the follow is saved in.
	Path string `json:"path"`
}

// MountLook is one look at a node: the mounts at or under a directory (the
// node's mount table) and the process a lab started to keep it busy.
type MountLook struct {
	Node string `json:"node"`
	Dir  string `json:"dir"`
	// Why says what the lab looked for.
	Why  string    `json:"why"`
	Step string    `json:"step"`
	At   time.Time `json:"at"` // host clock, when the look ended
	// Mounted lists the mount table's lines at or under Dir (none: unmounted).
	Mounted []string `json:"mounted"`
	// Holder is the holding process: its unit's state, pid and working
	// directory ("" when no process holds it).
	HolderState string `json:"holder_state"`
	HolderPID   int    `json:"holder_pid,omitempty"`
	HolderCwd   string `json:"holder_cwd,omitempty"`
	// HolderSince is when the holder's unit last changed state (node clock).
	HolderSince time.Time `json:"holder_since,omitempty"`
	Error       string    `json:"error,omitempty"`
	Path        string    `json:"path"`
}
