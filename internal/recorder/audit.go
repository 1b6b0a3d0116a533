package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/evidence"
)

// auditReader follows the API server's audit log on the control-plane node
// from where it stood when the run began: each read takes the complete lines
// written since, keeps those on the run's objects (evidence.AuditFilter) and
// appends them to audit.jsonl and the record. It knows the file by inode, so
// that a rotation (--audit-log-maxsize renames the log and starts a new one)
// costs nothing: the rest of the renamed file is read first.
type auditReader struct {
	mu     sync.Mutex // one read at a time
	node   Node
	path   string
	filter evidence.AuditFilter
	inode  string
	offset int64
	file   *os.File
	bad    int
	stop   chan struct{}
	done   chan struct{}
}

// auditFollowEvery is how often the log is read in the background while a
// run goes on: a lab:scale run writes about 45 kB of audit log per pod, and
// the server keeps one rotated file, so reads must come well before two
// rotations (2 × 200 MB) could pass.
const auditFollowEvery = 5 * time.Second

// StartAudit begins following the API server's audit log on node (the
// control plane) for the run's namespace and the given nodes. Without an
// audit log (a cluster made before termlab enabled it) the run goes on and
// the record says so; claims then rely on termlab's own actions alone.
func (r *Recorder) StartAudit(ctx context.Context, node Node, nodes []string) error {
	if node == nil {
		r.Notef("no control-plane node: the API server's audit log was not read")
		return nil
	}
	return r.followLog(ctx, node, evidence.AuditLogPath, nodes)
}

// followLog is StartAudit for the log at path.
func (r *Recorder) followLog(ctx context.Context, node Node, path string, nodes []string) error {
	inode, size, err := statLog(ctx, node, path)
	if errors.Is(err, evidence.ErrNoNodeAccess) {
		r.Notef("the API server's audit log was not read: it lies on the control-plane node, and the run has no node access (%v)", err)
		return nil
	}
	if err != nil {
		r.Notef("the API server keeps no audit log at %s on %s (a cluster made before termlab enabled it?): audit.jsonl stays empty (%v)", path, node, err)
		return nil
	}
	f, err := createPrivate(filepath.Join(r.cfg.Dir, evidence.AuditFile))
	if err != nil {
		return fmt.Errorf("creating %s: %w", evidence.AuditFile, err)
	}
	a := &auditReader{node: node, path: path, filter: evidence.AuditFilter{Namespace: r.cfg.Namespace, Nodes: nodes, RunID: r.auditRunID()},
		inode: inode, offset: size, file: f, stop: make(chan struct{}), done: make(chan struct{})}
	r.mu.Lock()
	r.audit = a
	r.mu.Unlock()
	go r.followAudit(ctx, a)
	return nil
}

// followAudit reads the log every auditFollowEvery until StopAudit. A failed
// read is tried again at the next tick; the last read (StopAudit) reports.
func (r *Recorder) followAudit(ctx context.Context, a *auditReader) {
	defer close(a.done)
	t := time.NewTicker(auditFollowEvery)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = r.ReadAudit(ctx)
		}
	}
}

// statLog is the inode and size of the file at path on node.
func statLog(ctx context.Context, node Node, path string) (inode string, size int64, err error) {
	out := run(ctx, node, "stat", "-c", "%i %s", path)
	if out.err != nil {
		return "", 0, out.err
	}
	f := strings.Fields(string(out.stdout))
	if len(f) != 2 {
		return "", 0, fmt.Errorf("stat of %s on %s said %q", path, node, out.stdout)
	}
	size, err = strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("stat of %s on %s said %q: %w", path, node, out.stdout, err)
	}
	return f[0], size, nil
}

// renamedLog finds the file that now has the inode the log had: the
// rotated log, renamed in the same directory. "" if it is gone.
func renamedLog(ctx context.Context, node Node, path, inode string) string {
	dir := filepath.Dir(path)
	out := run(ctx, node, "ls", "-i1", dir)
	if out.err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out.stdout), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == inode {
			return filepath.Join(dir, f[1])
		}
	}
	return ""
}

// auditChunk bounds one read of the audit log: a busy run (lab:scale)
// writes megabytes between two reads, and one exec's output is held whole.
const auditChunk = 4 << 20

// completeLines reads path on node from offset, a chunk at a time (dd by
// byte offset), and returns the complete lines (the server may be writing
// the last one) and the offset after them. A line longer than a chunk is
// skipped, not held: the namespace controller's DELETE of a collection is
// logged with its whole response, every pod it marked, tens of megabytes at
// lab:scale's sizes; such a line, once complete, is described in skipped.
// (Reading stopped at such a line before: every later request was lost.)
func completeLines(ctx context.Context, node Node, path string, offset int64) (data []byte, next int64, skipped []string, err error) {
	for {
		out := run(ctx, node, "dd", "if="+path, "bs=1M", "iflag=skip_bytes,count_bytes", "skip="+strconv.FormatInt(offset, 10), "count="+strconv.Itoa(auditChunk), "status=none")
		if out.err != nil {
			return nil, offset, skipped, fmt.Errorf("reading the audit log from byte %d: %w", offset, out.err)
		}
		end := bytes.LastIndexByte(out.stdout, '\n')
		if end < 0 {
			if len(out.stdout) < auditChunk {
				return data, offset, skipped, nil // nothing complete yet
			}
			// A line longer than a chunk begins here.
			length, err := skipLine(ctx, node, path, offset, out.stdout)
			if err != nil || length == 0 {
				return data, offset, skipped, err // not complete yet: read again from its start
			}
			skipped = append(skipped, fmt.Sprintf("%s (%.1f MB at byte %d)", describeLine(out.stdout), float64(length)/1e6, offset))
			offset += length
			continue
		}
		data = append(data, out.stdout[:end+1]...)
		offset += int64(end + 1)
		if len(out.stdout) < auditChunk {
			return data, offset, skipped, nil
		}
	}
}

// skipLine is the length, newline included, of the line at offset whose
// first chunk is first, reading on a chunk at a time without keeping any;
// 0 when the line is not complete yet.
func skipLine(ctx context.Context, node Node, path string, offset int64, first []byte) (int64, error) {
	length := int64(len(first))
	for {
		out := run(ctx, node, "dd", "if="+path, "bs=1M", "iflag=skip_bytes,count_bytes", "skip="+strconv.FormatInt(offset+length, 10), "count="+strconv.Itoa(auditChunk), "status=none")
		if out.err != nil {
			return 0, fmt.Errorf("reading the audit log from byte %d: %w", offset+length, out.err)
		}
		if i := bytes.IndexByte(out.stdout, '\n'); i >= 0 {
			return length + int64(i+1), nil
		}
		if len(out.stdout) < auditChunk {
			return 0, nil
		}
		length += int64(len(out.stdout))
	}
}

// lineFields finds an audit line's first fields; its times come last, after
// the bodies, so a line too long to keep says only who sent what.
var lineFields = regexp.MustCompile(`"auditID":"([^"]*)".*?"requestURI":"([^"]*)","verb":"([^"]*)","user":\{"username":"([^"]*)"`)

// describeLine names the request of an audit line from its first chunk.
func describeLine(prefix []byte) string {
	m := lineFields.FindSubmatch(prefix[:min(len(prefix), 64<<10)])
	if m == nil {
		return "a line that does not begin as an audit event"
	}
	return fmt.Sprintf("%s %s by %s (auditID %s)", strings.ToUpper(string(m[3])), m[2], m[4], m[1])
}

// ReadAudit takes what the API server logged since the last read. It returns
// the events it added.
func (r *Recorder) ReadAudit(ctx context.Context) ([]evidence.AuditEvent, error) {
	r.mu.Lock()
	a := r.audit
	r.mu.Unlock()
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file == nil {
		return nil, nil
	}
	inode, size, err := statLog(ctx, a.node, a.path)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	var data []byte
	switch {
	case inode != a.inode:
		// Rotated since the last read: the rest of the renamed file first.
		if old := renamedLog(ctx, a.node, a.path, a.inode); old != "" {
			rest, _, skipped, err := completeLines(ctx, a.node, old, a.offset)
			if err != nil {
				return nil, err
			}
			r.noteSkipped(skipped)
			data = rest
		} else {
			r.Notef("the API server's audit log was rotated twice between two reads and the older file is gone: requests it logged after %d bytes are missing from %s", a.offset, evidence.AuditFile)
		}
		a.inode, a.offset = inode, 0
	case size < a.offset:
		r.Notef("the API server's audit log shrank from %d to %d bytes during the run (truncated?): what it held past %d bytes is missing from %s", a.offset, size, size, evidence.AuditFile)
		a.offset = 0
	}
	more, next, skipped, err := completeLines(ctx, a.node, a.path, a.offset)
	if err != nil {
		return nil, err // read again from the same offset at the next read
	}
	r.noteSkipped(skipped)
	a.offset = next
	data = append(data, more...)
	events, bad := evidence.ParseAudit(data, a.filter)
	a.bad += bad
	// Marshalled, scanned and written under the audit reader's own lock
	// (reads stay in order), not the recorder's: every watch handler waits
	// on that one, and a read can be thousands of lines.
	var kept []evidence.AuditEvent
	var notes []string
	var writeErr error
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			continue
		}
		// The policy records nothing secret; should a line look like a
		// credential all the same, it is left out and the record says so.
		if leaks := credscan.Bytes(evidence.AuditFile, line); len(leaks) > 0 {
			notes = append(notes, fmt.Sprintf("audit event %s left out of %s: it looked like a credential (%v)", e.AuditID, evidence.AuditFile, leaks))
			continue
		}
		if _, err := a.file.Write(append(line, '\n')); err != nil && writeErr == nil {
			writeErr = fmt.Errorf("writing %s: %w", evidence.AuditFile, err)
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 && len(notes) == 0 && writeErr == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range notes {
		r.rec.Notes = append(r.rec.Notes, evidence.Note{At: now(), Step: r.currentStepLocked(), Text: n})
	}
	if writeErr != nil && r.writeErr == nil {
		r.writeErr = writeErr
	}
	if r.auditTail != nil {
		r.auditTail.add(kept)
	} else {
		r.rec.Audit = append(r.rec.Audit, kept...)
	}
	if len(kept) > 0 {
		r.broadcast()
	}
	return kept, nil
}

// noteSkipped says in the record which audit lines were too long to keep.
func (r *Recorder) noteSkipped(skipped []string) {
	for _, s := range skipped {
		r.Notef("an audit log line longer than one read (%d MiB) was skipped, not kept in %s: %s", auditChunk>>20, evidence.AuditFile, s)
	}
}

// StopAudit reads the audit log a last time and closes audit.jsonl; call it
// before Stop, after the run's cleanup, so the namespace's deletion is in.
func (r *Recorder) StopAudit(ctx context.Context) error {
	r.mu.Lock()
	a := r.audit
	r.mu.Unlock()
	if a == nil {
		return nil
	}
	if a.stop != nil {
		close(a.stop)
		<-a.done
		a.stop = nil
	}
	_, err := r.ReadAudit(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file != nil {
		a.file.Close()
		a.file = nil
	}
	if a.bad > 0 {
		r.Notef("%d line(s) of the audit log did not parse and were skipped", a.bad)
	}
	return err
}

// WaitAudit reads the audit log every interval until a recorded event on the
// run's objects satisfies cond (events read before the call count), or ctx ends.
func (r *Recorder) WaitAudit(ctx context.Context, what string, interval time.Duration, cond func(evidence.AuditEvent) bool) (evidence.AuditEvent, error) {
	checked := 0
	for {
		ended := ctx.Err() != nil
		rctx := ctx
		if ended && !errors.Is(context.Cause(ctx), context.Canceled) {
			// A bound ran out (not an interrupt or a skip): one last read,
			// briefly, of what the log already holds.
			var cancel context.CancelFunc
			rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), auditLastRead)
			defer cancel()
		}
		if _, err := r.ReadAudit(rctx); err != nil && !ended {
			if ctx.Err() != nil {
				continue // the bound ran out during the read: the last read, then the bound's cause
			}
			return evidence.AuditEvent{}, err
		}
		r.mu.Lock()
		events, next := r.auditSinceLocked(checked)
		r.mu.Unlock()
		for _, e := range events {
			if cond(e) {
				return e, nil
			}
		}
		checked = next
		if ended {
			return evidence.AuditEvent{}, fmt.Errorf("waiting for the audit log to show %s: %w", what, context.Cause(ctx))
		}
		// Given up only after the read that follows ctx's end (above).
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// auditLastRead bounds the read WaitAudit makes after its bound ran out: two
// docker execs (stat and tail) of a log already written.
const auditLastRead = 2 * time.Second

// Recorded records an action someone else did (a script, a person), as the
// API server's audit log or the node showed it, in the current step.
func (r *Recorder) Recorded(a evidence.Action) evidence.Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.Step = r.currentStepLocked()
	r.rec.Actions = append(r.rec.Actions, a)
	r.appendLine(evidence.ActionsFile, a)
	r.broadcast()
	return a
}

// auditRunID is the run id the audit filter keeps objects by: only for a
// lab that watches namespaces of its own (Config.NamespaceSelector).
func (r *Recorder) auditRunID() string {
	if r.cfg.NamespaceSelector == "" {
		return ""
	}
	return r.cfg.RunID
}
