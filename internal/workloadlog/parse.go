package workloadlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Log is what one run of the workload logged, in order.
type Log struct {
	// Start is the start line; nil if none was logged.
	Start *Start
	// Heartbeats in the order logged.
	Heartbeats []Heartbeat
	// Signals holds every signal line in order. The first one not Ignored is
	// the one that started the shutdown (see TermSignal).
	Signals []Signal
	// Exit is the exit line; nil if the process did not exit cleanly
	// (for example it was killed with SIGKILL).
	Exit *Exit
	// Serving is the serving workload's first line (lab:graceful); nil for a heartbeat.
	Serving *Serving
	// PreStops are the lines an exec preStop hook wrote into the log, in order.
	PreStops []PreStop
	// Requests are the client's requests, in the order they ended.
	Requests []Request
	// Skipped holds lines that are not a well-formed workload record:
	// other output, malformed or duplicate records. Parse never fails on them.
	Skipped []Skipped
}

// Start is the start line.
type Start struct {
	PID       int
	Interval  time.Duration
	TermDelay time.Duration
	Time      time.Time
	Line      int // 1-based line number in the input (after CRI reassembly: the record's last line)
}

// Heartbeat is one heartbeat line.
type Heartbeat struct {
	Seq  int
	Time time.Time
	Line int
}

// Signal is one signal line.
type Signal struct {
	Name      string // "SIGTERM" or "SIGINT"
	Time      time.Time
	ExitingIn time.Duration // shutdown delay announced; 0 when Ignored
	Ignored   bool          // a repeat signal during the shutdown delay
	// OnTerm is what a serving workload does about it (OnTerm*); "" for a heartbeat.
	OnTerm string
	Line   int
}

// Serving is a serving workload's first line.
type Serving struct {
	Addr   string
	OnTerm string
	PID    int
	Time   time.Time
	Line   int
}

// PreStop is one line of an exec preStop hook: its start (with the sleep
// it announced) or its end.
type PreStop struct {
	End   bool
	Sleep time.Duration // on the start line
	Time  time.Time
	Line  int
}

// Request is one request of the client.
type Request struct {
	Target  string    `json:"target"`
	Seq     int       `json:"seq"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Outcome string    `json:"outcome"`
	Backend string    `json:"backend,omitempty"` // the pod that answered; "" when none did
	Error   string    `json:"error,omitempty"`
	// SourcePort is the connection's source port on the client, 0 in logs
	// of clients that did not say it.
	SourcePort int `json:"source_port,omitempty"`
	Line       int `json:"-"`
}

// Failed reports whether the request got no good answer.
func (q Request) Failed() bool { return q.Outcome != OutcomeOK }

// PreStopStarted returns the first preStop start line, if any.
func (l *Log) PreStopStarted() (PreStop, bool) {
	for _, p := range l.PreStops {
		if !p.End {
			return p, true
		}
	}
	return PreStop{}, false
}

// PreStopEnded returns the first preStop end line, if any.
func (l *Log) PreStopEnded() (PreStop, bool) {
	for _, p := range l.PreStops {
		if p.End {
			return p, true
		}
	}
	return PreStop{}, false
}

// Exit is the exit line.
type Exit struct {
	Code int
	Time time.Time
	Line int
}

// Skipped is an input line Parse did not take as a record.
type Skipped struct {
	Line   int
	Text   string
	Reason string
}

// LastHeartbeat returns the last heartbeat logged, if any.
func (l *Log) LastHeartbeat() (Heartbeat, bool) {
	if len(l.Heartbeats) == 0 {
		return Heartbeat{}, false
	}
	return l.Heartbeats[len(l.Heartbeats)-1], true
}

// TermSignal returns the signal that started the shutdown: whether and when
// SIGTERM (or SIGINT) was received.
func (l *Log) TermSignal() (Signal, bool) {
	for _, s := range l.Signals {
		if !s.Ignored {
			return s, true
		}
	}
	return Signal{}, false
}

// CleanExit reports whether an exit line with code 0 was logged.
func (l *Log) CleanExit() bool { return l.Exit != nil && l.Exit.Code == 0 }

// HeartbeatsAfter returns the heartbeats logged strictly after t (by their
// own time field), e.g. those during the shutdown delay.
func (l *Log) HeartbeatsAfter(t time.Time) []Heartbeat {
	var out []Heartbeat
	for _, h := range l.Heartbeats {
		if h.Time.After(t) {
			out = append(out, h)
		}
	}
	return out
}

// maxLine bounds one input line; the workload's lines are far shorter.
const maxLine = 1 << 20

// Parse reads a workload log. It accepts plain lines (docker logs, crictl
// logs, the process's stdout) and CRI-framed lines as the kubelet writes them
// under /var/log/pods:
//
//	2026-12-02T10:00:00.123456789Z stdout F heartbeat seq=1 time=...
//
// CRI partial lines (tag P) are joined with the following lines of the same
// stream up to the closing F line. Lines that are not well-formed records are
// kept in Log.Skipped; Parse returns an error only if reading fails.
func Parse(r io.Reader) (Log, error) {
	var l Log
	partial := map[string]string{} // CRI stream -> pending partial content
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimSuffix(sc.Text(), "\r")
		content := raw
		if stream, tag, c, ok := splitCRI(raw); ok {
			if tag == "P" {
				partial[stream] += c
				continue
			}
			content = partial[stream] + c
			delete(partial, stream)
		}
		if err := l.add(content, n); err != nil {
			l.Skipped = append(l.Skipped, Skipped{Line: n, Text: raw, Reason: err.Error()})
		}
	}
	if err := sc.Err(); err != nil {
		return l, fmt.Errorf("reading workload log after line %d: %w", n, err)
	}
	for stream, c := range partial {
		l.Skipped = append(l.Skipped, Skipped{Line: n, Text: c, Reason: "unterminated CRI partial line on " + stream})
	}
	return l, nil
}

// splitCRI splits a CRI log line "<RFC3339Nano> <stream> <tag> <content>".
func splitCRI(line string) (stream, tag, content string, ok bool) {
	parts := strings.SplitN(line, " ", 4)
	if len(parts) < 3 {
		return "", "", "", false
	}
	if _, err := time.Parse(time.RFC3339Nano, parts[0]); err != nil {
		return "", "", "", false
	}
	if parts[1] != "stdout" && parts[1] != "stderr" {
		return "", "", "", false
	}
	// The tag is ':'-separated; its first element is P (partial) or F (full).
	tag, _, _ = strings.Cut(parts[2], ":")
	if tag != "P" && tag != "F" {
		return "", "", "", false
	}
	if len(parts) == 4 {
		content = parts[3]
	}
	return parts[1], tag, content, true
}

var errNotRecord = errors.New("not a workload record")

func (l *Log) add(content string, line int) error {
	fields := strings.Fields(content)
	if len(fields) == 0 {
		return errNotRecord
	}
	switch {
	case fields[0] == "start":
		kv, err := keyValues(fields[1:], "pid", "interval", "term_delay", "time")
		if err != nil {
			return fmt.Errorf("start: %w", err)
		}
		s := Start{Line: line}
		if s.PID, err = strconv.Atoi(kv["pid"]); err != nil || s.PID <= 0 {
			return fmt.Errorf("start: bad pid %q", kv["pid"])
		}
		if s.Interval, err = parseDuration("interval", kv["interval"]); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		if s.TermDelay, err = parseDuration("term_delay", kv["term_delay"]); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		if s.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		if l.Start != nil {
			return fmt.Errorf("duplicate start line (first on line %d)", l.Start.Line)
		}
		l.Start = &s
	case fields[0] == "heartbeat":
		kv, err := keyValues(fields[1:], "seq", "time")
		if err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		h := Heartbeat{Line: line}
		if h.Seq, err = strconv.Atoi(kv["seq"]); err != nil || h.Seq < 1 {
			return fmt.Errorf("heartbeat: bad seq %q", kv["seq"])
		}
		if h.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		l.Heartbeats = append(l.Heartbeats, h)
	case strings.HasPrefix(fields[0], "signal="):
		name := strings.TrimPrefix(fields[0], "signal=")
		if name != "SIGTERM" && name != "SIGINT" {
			return fmt.Errorf("signal: unknown signal %q", name)
		}
		if len(fields) < 2 || fields[1] != "received" {
			return errors.New(`signal: missing "received"`)
		}
		kv, err := keyValues(fields[2:], "time")
		if err != nil {
			return fmt.Errorf("signal: %w", err)
		}
		s := Signal{Name: name, Line: line}
		if s.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("signal: %w", err)
		}
		d, hasDelay := kv["exiting_in"]
		ig, hasIgnored := kv["ignored"]
		onTerm, hasOnTerm := kv["on_term"]
		switch {
		case hasOnTerm && onTerm != OnTermExit && onTerm != OnTermDrain && onTerm != OnTermIgnore:
			return fmt.Errorf("signal: unknown on_term %q", onTerm)
		case hasOnTerm && onTerm == OnTermIgnore && !hasDelay && !hasIgnored:
			// A serving workload that keeps serving: the shutdown is SIGKILL's.
			s.OnTerm = onTerm
		case hasDelay && !hasIgnored:
			s.OnTerm = onTerm
			if s.ExitingIn, err = parseDuration("exiting_in", d); err != nil {
				return fmt.Errorf("signal: %w", err)
			}
		case hasIgnored && !hasDelay && ig == "true":
			s.Ignored = true
		default:
			return errors.New("signal: want exactly one of exiting_in=<d> or ignored=true")
		}
		l.Signals = append(l.Signals, s)
	case fields[0] == "serving":
		kv, err := keyValues(fields[1:], "addr", "on_term", "pid", "time")
		if err != nil {
			return fmt.Errorf("serving: %w", err)
		}
		v := Serving{Addr: kv["addr"], OnTerm: kv["on_term"], Line: line}
		if v.PID, err = strconv.Atoi(kv["pid"]); err != nil || v.PID <= 0 {
			return fmt.Errorf("serving: bad pid %q", kv["pid"])
		}
		if v.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("serving: %w", err)
		}
		if l.Serving != nil {
			return fmt.Errorf("duplicate serving line (first on line %d)", l.Serving.Line)
		}
		l.Serving = &v
	case fields[0] == "prestop":
		if len(fields) < 2 || (fields[1] != "start" && fields[1] != "end") {
			return errors.New(`prestop: want "start" or "end"`)
		}
		p := PreStop{End: fields[1] == "end", Line: line}
		required := []string{"time"}
		if !p.End {
			required = append(required, "sleep")
		}
		kv, err := keyValues(fields[2:], required...)
		if err != nil {
			return fmt.Errorf("prestop: %w", err)
		}
		if p.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("prestop: %w", err)
		}
		if !p.End {
			if p.Sleep, err = parseDuration("sleep", kv["sleep"]); err != nil {
				return fmt.Errorf("prestop: %w", err)
			}
		}
		l.PreStops = append(l.PreStops, p)
	case fields[0] == "request":
		kv, err := keyValues(fields[1:], "target", "seq", "start", "end", "outcome", "backend")
		if err != nil {
			return fmt.Errorf("request: %w", err)
		}
		q := Request{Target: kv["target"], Outcome: kv["outcome"], Backend: kv["backend"], Error: kv["error"], Line: line}
		if q.Backend == "-" {
			q.Backend = ""
		}
		if q.Seq, err = strconv.Atoi(kv["seq"]); err != nil || q.Seq < 1 {
			return fmt.Errorf("request: bad seq %q", kv["seq"])
		}
		if p, ok := kv["port"]; ok {
			if q.SourcePort, err = strconv.Atoi(p); err != nil || q.SourcePort < 1 || q.SourcePort > 65535 {
				return fmt.Errorf("request: bad port %q", p)
			}
		}
		if q.Start, err = parseTime(kv["start"]); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		if q.End, err = parseTime(kv["end"]); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		switch q.Outcome {
		case OutcomeOK, OutcomeRefused, OutcomeReset, OutcomeTimeout, OutcomeError:
		default:
			return fmt.Errorf("request: unknown outcome %q", q.Outcome)
		}
		l.Requests = append(l.Requests, q)
	case fields[0] == "exit":
		kv, err := keyValues(fields[1:], "code", "time")
		if err != nil {
			return fmt.Errorf("exit: %w", err)
		}
		e := Exit{Line: line}
		if e.Code, err = strconv.Atoi(kv["code"]); err != nil {
			return fmt.Errorf("exit: bad code %q", kv["code"])
		}
		if e.Time, err = parseTime(kv["time"]); err != nil {
			return fmt.Errorf("exit: %w", err)
		}
		if l.Exit != nil {
			return fmt.Errorf("duplicate exit line (first on line %d)", l.Exit.Line)
		}
		l.Exit = &e
	default:
		return errNotRecord
	}
	return nil
}

// keyValues parses key=value fields, requiring the given keys. Unknown keys
// are kept (a newer workload may add fields); a repeated key is an error.
func keyValues(fields []string, required ...string) (map[string]string, error) {
	kv := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("field %q is not key=value", f)
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("repeated key %q", k)
		}
		kv[k] = v
	}
	for _, k := range required {
		if _, ok := kv[k]; !ok {
			return nil, fmt.Errorf("missing %s=", k)
		}
	}
	return kv, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return t, nil
}

func parseDuration(key, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad %s %q", key, s)
	}
	return d, nil
}
