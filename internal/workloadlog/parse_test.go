package workloadlog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var (
	t0 = time.Date(2026, 12, 2, 10, 0, 0, 123456789, time.UTC)
	t1 = t0.Add(100 * time.Millisecond)
	t2 = t0.Add(200 * time.Millisecond)
	t3 = t0.Add(300 * time.Millisecond)
	t4 = t0.Add(400 * time.Millisecond)
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// cri frames content the way the kubelet writes container logs.
func cri(stream, tag, content string) string {
	return "2026-12-02T10:00:05.000000001Z " + stream + " " + tag + " " + content
}

// summary is a compact, comparable view of a Log.
type summary struct {
	start     bool
	beats     []int
	term      string // name of the terminating signal, "" if none
	termDelay time.Duration
	ignored   int
	exit      int // exit code; -1 if no exit line
	skipped   int
}

func summarize(l Log) summary {
	s := summary{exit: -1, skipped: len(l.Skipped)}
	s.start = l.Start != nil
	for _, h := range l.Heartbeats {
		s.beats = append(s.beats, h.Seq)
	}
	if sig, ok := l.TermSignal(); ok {
		s.term, s.termDelay = sig.Name, sig.ExitingIn
	}
	for _, sig := range l.Signals {
		if sig.Ignored {
			s.ignored++
		}
	}
	if l.Exit != nil {
		s.exit = l.Exit.Code
	}
	return s
}

func TestParse(t *testing.T) {
	full := []string{
		StartLine(7, 100*time.Millisecond, 300*time.Millisecond, t0),
		HeartbeatLine(1, t1),
		SignalLine("SIGTERM", t1, 300*time.Millisecond),
		HeartbeatLine(2, t2),
		SignalIgnoredLine("SIGTERM", t2),
		HeartbeatLine(3, t3),
		ExitLine(0, t4),
	}
	framed := make([]string, len(full))
	for i, l := range full {
		framed[i] = cri("stdout", "F", l)
	}
	want := summary{start: true, beats: []int{1, 2, 3}, term: "SIGTERM", termDelay: 300 * time.Millisecond, ignored: 1, exit: 0}

	tests := []struct {
		name string
		in   string
		want summary
	}{
		{"empty", "", summary{exit: -1}},
		{"plain full run", lines(full...), want},
		{"CRI framed full run", lines(framed...), want},
		{"CRI windows line endings", strings.ReplaceAll(lines(framed...), "\n", "\r\n"), want},
		{"no trailing newline", strings.TrimSuffix(lines(full...), "\n"), want},
		{"killed: no signal, no exit", lines(full[0], full[1], full[3]), summary{start: true, beats: []int{1, 2}, exit: -1}},
		{"SIGINT", lines(full[0], SignalLine("SIGINT", t1, 0), ExitLine(0, t1)),
			summary{start: true, term: "SIGINT", exit: 0}},
		{"non-zero exit", lines(full[0], ExitLine(3, t1)), summary{start: true, exit: 3}},
		{"CRI partial lines joined",
			lines(cri("stdout", "P", "heartbeat seq=1 "), cri("stdout", "F", "time="+t1.Format(TimeLayout))),
			summary{beats: []int{1}, exit: -1}},
		{"CRI partial interleaved with other stream",
			lines(cri("stdout", "P", "heartbeat "), cri("stderr", "F", "some warning"), cri("stdout", "F", "seq=4 time="+t1.Format(TimeLayout))),
			summary{beats: []int{4}, exit: -1, skipped: 1}},
		{"CRI unterminated partial", lines(cri("stdout", "P", "heartbeat seq=1")), summary{exit: -1, skipped: 1}},
		{"CRI empty content", lines(cri("stdout", "F", "")), summary{exit: -1, skipped: 1}},
		{"mixed plain and framed", lines(full[0], framed[1]), summary{start: true, beats: []int{1}, exit: -1}},
		{"unrelated output skipped", lines("hello", "", full[1], "panic: boom"), summary{beats: []int{1}, exit: -1, skipped: 3}},
		{"extra unknown key tolerated", lines(full[1] + " node=a"), summary{beats: []int{1}, exit: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := summarize(l)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v\nskipped: %+v", got, tc.want, l.Skipped)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	ts := t1.Format(TimeLayout)
	tests := []struct {
		name, line, reason string
	}{
		{"heartbeat missing seq", "heartbeat time=" + ts, "missing seq="},
		{"heartbeat seq zero", "heartbeat seq=0 time=" + ts, "bad seq"},
		{"heartbeat seq not a number", "heartbeat seq=x time=" + ts, "bad seq"},
		{"heartbeat bad time", "heartbeat seq=1 time=yesterday", "bad time"},
		{"heartbeat time without zone", "heartbeat seq=1 time=2026-12-02T10:00:00", "bad time"},
		{"heartbeat truncated", "heartbeat seq=1 ti", "not key=value"},
		{"heartbeat repeated key", "heartbeat seq=1 seq=2 time=" + ts, "repeated key"},
		{"start bad pid", "start pid=-1 interval=1s term_delay=0s time=" + ts, "bad pid"},
		{"start bad interval", "start pid=1 interval=soon term_delay=0s time=" + ts, "bad interval"},
		{"start negative delay", "start pid=1 interval=1s term_delay=-1s time=" + ts, "bad term_delay"},
		{"signal unknown", "signal=SIGHUP received time=" + ts + " exiting_in=1s", "unknown signal"},
		{"signal no received", "signal=SIGTERM time=" + ts + " exiting_in=1s", `missing "received"`},
		{"signal neither delay nor ignored", "signal=SIGTERM received time=" + ts, "exactly one"},
		{"signal both delay and ignored", "signal=SIGTERM received time=" + ts + " exiting_in=1s ignored=true", "exactly one"},
		{"exit bad code", "exit code=zero time=" + ts, "bad code"},
		{"CRI framed malformed", cri("stdout", "F", "heartbeat seq=1"), "missing time="},
		{"not a record", "heartbeats seq=1 time=" + ts, "not a workload record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse(strings.NewReader(lines(HeartbeatLine(1, t0), tc.line)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(l.Heartbeats) != 1 || l.Start != nil || len(l.Signals) != 0 || l.Exit != nil {
				t.Errorf("malformed line became a record: %+v", l)
			}
			if len(l.Skipped) != 1 {
				t.Fatalf("skipped = %+v, want one", l.Skipped)
			}
			s := l.Skipped[0]
			if s.Line != 2 || s.Text != tc.line || !strings.Contains(s.Reason, tc.reason) {
				t.Errorf("skipped = %+v, want line 2, text %q, reason containing %q", s, tc.line, tc.reason)
			}
		})
	}
}

func TestParseDuplicates(t *testing.T) {
	in := lines(StartLine(1, time.Second, 0, t0), StartLine(2, time.Second, 0, t1), ExitLine(0, t2), ExitLine(1, t3))
	l, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if l.Start.PID != 1 || l.Exit.Code != 0 || len(l.Skipped) != 2 {
		t.Errorf("want first start/exit kept and two duplicates skipped, got start=%+v exit=%+v skipped=%+v", l.Start, l.Exit, l.Skipped)
	}
}

func TestParseFields(t *testing.T) {
	in := lines(
		cri("stdout", "F", StartLine(42, 250*time.Millisecond, 2*time.Second, t0)),
		cri("stdout", "F", HeartbeatLine(1, t1)),
		cri("stdout", "F", SignalLine("SIGTERM", t2, 2*time.Second)),
		cri("stdout", "F", HeartbeatLine(2, t3)),
		cri("stdout", "F", ExitLine(0, t4)),
	)
	l, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := *l.Start; got != (Start{PID: 42, Interval: 250 * time.Millisecond, TermDelay: 2 * time.Second, Time: t0, Line: 1}) {
		t.Errorf("start = %+v", got)
	}
	sig, ok := l.TermSignal()
	if !ok || sig != (Signal{Name: "SIGTERM", Time: t2, ExitingIn: 2 * time.Second, Line: 3}) {
		t.Errorf("term signal = %+v, %v", sig, ok)
	}
	last, ok := l.LastHeartbeat()
	if !ok || last != (Heartbeat{Seq: 2, Time: t3, Line: 4}) {
		t.Errorf("last heartbeat = %+v, %v", last, ok)
	}
	if after := l.HeartbeatsAfter(sig.Time); len(after) != 1 || after[0].Seq != 2 {
		t.Errorf("heartbeats after SIGTERM = %+v", after)
	}
	if !l.CleanExit() || !l.Exit.Time.Equal(t4) {
		t.Errorf("exit = %+v", l.Exit)
	}

	var empty Log
	if _, ok := empty.LastHeartbeat(); ok {
		t.Error("LastHeartbeat on empty log reported ok")
	}
	if _, ok := empty.TermSignal(); ok || empty.CleanExit() {
		t.Error("empty log reported a signal or clean exit")
	}
}

func TestParseReadError(t *testing.T) {
	boom := errors.New("boom")
	l, err := Parse(iotest.TimeoutReader(strings.NewReader(lines(HeartbeatLine(1, t0)))))
	if !errors.Is(err, iotest.ErrTimeout) || len(l.Heartbeats) != 1 {
		t.Errorf("got %d heartbeats, err %v; want the line read before the error, and the error", len(l.Heartbeats), err)
	}
	if _, err := Parse(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("err = %v, want wrapping %v", err, boom)
	}
}

func TestFormatUsesUTC(t *testing.T) {
	local := t0.In(time.FixedZone("X", 3600))
	if got, want := HeartbeatLine(5, local), "heartbeat seq=5 time=2026-12-02T10:00:00.123456789Z"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseServingLines(t *testing.T) {
	at := time.Date(2026, 12, 4, 2, 0, 0, 123, time.UTC)
	in := strings.Join([]string{
		ServingLine(":8080", OnTermIgnore, 1, at),
		PreStopStartLine(5*time.Second, at),
		ServeSignalLine("SIGTERM", OnTermIgnore, at.Add(5*time.Second)),
		PreStopEndLine(at.Add(5 * time.Second)),
		RequestLine("exit-now", 3, at, at.Add(time.Millisecond), OutcomeRefused, "", 41234, "ECONNREFUSED"),
		RequestLine("exit-now", 4, at, at.Add(time.Millisecond), OutcomeOK, "exit-now-victim", 0, ""),
		ServeSignalLine("SIGTERM", OnTermExit, at),
	}, "\n") + "\n"
	l, err := Parse(strings.NewReader(in))
	if err != nil || len(l.Skipped) > 0 {
		t.Fatalf("%v %+v", err, l.Skipped)
	}
	if l.Serving == nil || l.Serving.OnTerm != OnTermIgnore {
		t.Errorf("serving %+v", l.Serving)
	}
	if s, ok := l.TermSignal(); !ok || s.OnTerm != OnTermIgnore || s.Ignored {
		t.Errorf("term signal %+v", s)
	}
	if len(l.Signals) != 2 || l.Signals[1].OnTerm != OnTermExit {
		t.Errorf("signals %+v", l.Signals)
	}
	if s, ok := l.PreStopStarted(); !ok || s.Sleep != 5*time.Second {
		t.Errorf("prestop start %+v", s)
	}
	if e, ok := l.PreStopEnded(); !ok || !e.Time.Equal(at.Add(5*time.Second)) {
		t.Errorf("prestop end %+v", e)
	}
	if len(l.Requests) != 2 || !l.Requests[0].Failed() || l.Requests[0].Backend != "" || l.Requests[1].Backend != "exit-now-victim" || l.Requests[0].Error != "ECONNREFUSED" || l.Requests[0].SourcePort != 41234 || l.Requests[1].SourcePort != 0 {
		t.Errorf("requests %+v", l.Requests)
	}
	for _, bad := range []string{
		"signal=SIGTERM received time=2026-12-04T02:00:00Z on_term=sometimes",
		"prestop middle time=2026-12-04T02:00:00Z",
		"request target=a seq=1 start=2026-12-04T02:00:00Z end=2026-12-04T02:00:00Z outcome=meh backend=-",
		"request target=a seq=1 start=2026-12-04T02:00:00Z end=2026-12-04T02:00:00Z outcome=ok backend=- port=70000",
	} {
		l, _ := Parse(strings.NewReader(bad + "\n"))
		if len(l.Skipped) != 1 {
			t.Errorf("%q was taken as a record", bad)
		}
	}
}
