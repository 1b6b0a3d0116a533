package recorder

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/nodeunit"
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
		j, err := nodeunit.ParseJournalLine(line)
		if err != nil || !strings.Contains(j.Message, keep) {
			return
		}
		e := evidence.JournalEntry{Node: node.String(), Unit: unit, At: j.At, Message: j.Message, ObservedAt: now(), Path: rel}
		r.mu.Lock()
		r.rec.Journal = append(r.rec.Journal, e)
		r.broadcast()
		r.mu.Unlock()
	})
}

// WaitJournal blocks until a recorded journal entry satisfies cond (entries
// recorded before the call count), or ctx ends. A line reaches the record
// through journald, journalctl and an exec stream, after the effect it tells
// of may already be seen on the API: a lab that stops its recorder at once
// can lose it.
func (r *Recorder) WaitJournal(ctx context.Context, what string, cond func(evidence.JournalEntry) bool) (evidence.JournalEntry, error) {
	return waitRecorded(ctx, r, func(rec *evidence.Record) []evidence.JournalEntry { return rec.Journal }, cond,
		func(n int, cause error) error {
			return fmt.Errorf("waiting for the journal to say %s: %w (%d entries of the run recorded)", what, cause, n)
		})
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
