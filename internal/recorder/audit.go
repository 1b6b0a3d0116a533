package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
// appends them to audit.jsonl and the record.
type auditReader struct {
	mu     sync.Mutex // one read at a time
	node   Node
	path   string
	filter evidence.AuditFilter
	offset int64
	file   *os.File
	bad    int
}

// StartAudit begins following the API server's audit log on node (the
// control plane) for the run's namespace and the given nodes. Without an
// audit log (a cluster made before termlab enabled it) the run goes on and
// the record says so; claims then rely on termlab's own actions alone.
func (r *Recorder) StartAudit(ctx context.Context, node Node, nodes []string) error {
	if node == nil {
		r.Notef("no control-plane node: the API server's audit log was not read")
		return nil
	}
	out := run(ctx, node, "stat", "-c", "%s", evidence.AuditLogPath)
	if out.err != nil {
		r.Notef("the API server keeps no audit log at %s on %s (a cluster made before termlab enabled it?): audit.jsonl stays empty", evidence.AuditLogPath, node)
		return nil
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(out.stdout)), 10, 64)
	if err != nil {
		return fmt.Errorf("reading the audit log's size on %s: %q: %w", node, out.stdout, err)
	}
	f, err := os.Create(filepath.Join(r.cfg.Dir, evidence.AuditFile))
	if err != nil {
		return fmt.Errorf("creating %s: %w", evidence.AuditFile, err)
	}
	r.mu.Lock()
	r.audit = &auditReader{node: node, path: evidence.AuditLogPath, filter: evidence.AuditFilter{Namespace: r.cfg.Namespace, Nodes: nodes}, offset: size, file: f}
	r.mu.Unlock()
	return nil
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
	// A log rotated since the last read (--audit-log-maxsize) starts again
	// at 0: read the new file from its start; what the rotated file got
	// after the last read is not read, and the record says so.
	if st := run(ctx, a.node, "stat", "-c", "%s", a.path); st.err == nil {
		if size, err := strconv.ParseInt(strings.TrimSpace(string(st.stdout)), 10, 64); err == nil && size < a.offset {
			r.Notef("the API server's audit log was rotated during the run: requests logged between the last read and the rotation are missing from %s", evidence.AuditFile)
			a.offset = 0
		}
	}
	out := run(ctx, a.node, "tail", "-c", "+"+strconv.FormatInt(a.offset+1, 10), a.path)
	if out.err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", out.err)
	}
	data := out.stdout
	// Only complete lines: the server may be writing the last one.
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	data = data[:end+1]
	a.offset += int64(len(data))
	events, bad := evidence.ParseAudit(data, a.filter)
	a.bad += bad
	var kept []evidence.AuditEvent
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			continue
		}
		// The policy records nothing secret; should a line look like a
		// credential all the same, it is left out and the record says so.
		if leaks := credscan.Bytes(evidence.AuditFile, line); len(leaks) > 0 {
			r.rec.Notes = append(r.rec.Notes, evidence.Note{At: now(), Step: r.currentStepLocked(), Text: fmt.Sprintf("audit event %s left out of %s: it looked like a credential (%v)", e.AuditID, evidence.AuditFile, leaks)})
			continue
		}
		if _, err := a.file.Write(append(line, '\n')); err != nil && r.writeErr == nil {
			r.writeErr = fmt.Errorf("writing %s: %w", evidence.AuditFile, err)
		}
		r.rec.Audit = append(r.rec.Audit, e)
		kept = append(kept, e)
	}
	if len(kept) > 0 {
		r.broadcast()
	}
	return kept, nil
}

// StopAudit reads the audit log a last time and closes audit.jsonl; call it
// before Stop, after the run's cleanup, so the namespace's deletion is in.
func (r *Recorder) StopAudit(ctx context.Context) error {
	_, err := r.ReadAudit(ctx)
	r.mu.Lock()
	a := r.audit
	r.mu.Unlock()
	if a == nil {
		return err
	}
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
		if _, err := r.ReadAudit(ctx); err != nil && ctx.Err() == nil {
			return evidence.AuditEvent{}, err
		}
		r.mu.Lock()
		events := r.rec.Audit
		r.mu.Unlock()
		for i := checked; i < len(events); i++ {
			if cond(events[i]) {
				return events[i], nil
			}
		}
		checked = len(events)
		select {
		case <-ctx.Done():
			return evidence.AuditEvent{}, fmt.Errorf("waiting for the audit log to show %s: %w", what, context.Cause(ctx))
		case <-time.After(interval):
		}
	}
}

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
