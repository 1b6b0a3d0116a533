package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/workloadlog"
)

// Inspect is the part of `crictl inspect` output the record keeps.
type Inspect struct {
	ID         string
	State      string
	ExitCode   int32
	Reason     string
	StartedAt  *time.Time
	FinishedAt *time.Time
	PID        int
}

// ParseInspect reads `crictl inspect <id>` JSON (one object, or an array of one).
func ParseInspect(raw []byte) (Inspect, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return Inspect{}, fmt.Errorf("parsing crictl inspect output: %w", err)
		}
		if len(list) != 1 {
			return Inspect{}, fmt.Errorf("crictl inspect returned %d containers, want 1", len(list))
		}
		raw = list[0]
	}
	var doc struct {
		Status struct {
			ID         string `json:"id"`
			State      string `json:"state"`
			StartedAt  string `json:"startedAt"`
			FinishedAt string `json:"finishedAt"`
			ExitCode   int32  `json:"exitCode"`
			Reason     string `json:"reason"`
		} `json:"status"`
		Info struct {
			PID int `json:"pid"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Inspect{}, fmt.Errorf("parsing crictl inspect output: %w", err)
	}
	if doc.Status.ID == "" || doc.Status.State == "" {
		return Inspect{}, errors.New("crictl inspect output has no status.id or status.state")
	}
	return Inspect{
		ID: doc.Status.ID, State: doc.Status.State, ExitCode: doc.Status.ExitCode, Reason: doc.Status.Reason,
		StartedAt: crictlTime(doc.Status.StartedAt), FinishedAt: crictlTime(doc.Status.FinishedAt), PID: doc.Info.PID,
	}, nil
}

// crictlTime parses crictl's RFC 3339 times; crictl prints the zero time (year 1 or 1970) for "not yet".
func crictlTime(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1970 {
		return nil
	}
	t = t.UTC()
	return &t
}

// SummariseLog parses the workload's log with internal/workloadlog.
func SummariseLog(raw []byte) *LogSummary {
	l, err := workloadlog.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	s := &LogSummary{Lines: bytes.Count(raw, []byte("\n")), Started: l.Start != nil, Heartbeats: len(l.Heartbeats)}
	if hb, ok := l.LastHeartbeat(); ok {
		s.LastSeq = hb.Seq
		t := hb.Time.UTC()
		s.LastBeatAt = &t
	}
	if sig, ok := l.TermSignal(); ok {
		s.Signal = sig.Name
		t := sig.Time.UTC()
		s.SignalAt = &t
	}
	if l.Serving != nil {
		s.OnTerm = l.Serving.OnTerm
	}
	if p, ok := l.PreStopStarted(); ok {
		t, d := p.Time.UTC(), p.Sleep
		s.PreStopStartAt, s.PreStopSleep = &t, &d
	}
	if p, ok := l.PreStopEnded(); ok {
		t := p.Time.UTC()
		s.PreStopEndAt = &t
	}
	if l.Exit != nil {
		s.ExitLogged = true
		code := l.Exit.Code
		s.ExitCodeLogged = &code
		t := l.Exit.Time.UTC()
		s.ExitAt = &t
	}
	return s
}
