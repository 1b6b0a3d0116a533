// Package workloadlog writes and parses the log lines of the labs' workload
// (cmd/heartbeat). The writer and the parser live together so the format has
// one definition.
//
// Every line is one record; fields are space separated, times are RFC 3339
// with nanoseconds in UTC, durations are Go durations (time.Duration.String):
//
//	start pid=<pid> interval=<d> term_delay=<d> time=<t>
//	heartbeat seq=<n> time=<t>                       (n counts from 1)
//	signal=<SIGTERM|SIGINT> received time=<t> exiting_in=<d>
//	signal=<SIGTERM|SIGINT> received time=<t> ignored=true   (repeat signal)
//	exit code=<n> time=<t>
package workloadlog

import (
	"fmt"
	"time"
)

// TimeLayout is the layout of every time= field.
const TimeLayout = time.RFC3339Nano

func ts(t time.Time) string { return t.UTC().Format(TimeLayout) }

// StartLine is the first line the workload logs.
func StartLine(pid int, interval, termDelay time.Duration, t time.Time) string {
	return fmt.Sprintf("start pid=%d interval=%s term_delay=%s time=%s", pid, interval, termDelay, ts(t))
}

// HeartbeatLine is logged once per interval; seq starts at 1.
func HeartbeatLine(seq int, t time.Time) string {
	return fmt.Sprintf("heartbeat seq=%d time=%s", seq, ts(t))
}

// SignalLine is logged when a terminating signal (SIGTERM or SIGINT) starts
// the shutdown delay.
func SignalLine(signal string, t time.Time, exitingIn time.Duration) string {
	return fmt.Sprintf("signal=%s received time=%s exiting_in=%s", signal, ts(t), exitingIn)
}

// SignalIgnoredLine is logged for a terminating signal received while the
// shutdown delay already runs.
func SignalIgnoredLine(signal string, t time.Time) string {
	return fmt.Sprintf("signal=%s received time=%s ignored=true", signal, ts(t))
}

// ExitLine is the last line of a clean shutdown.
func ExitLine(code int, t time.Time) string {
	return fmt.Sprintf("exit code=%d time=%s", code, ts(t))
}

// The serving workload of lab:graceful (`heartbeat serve`, `heartbeat sleep`,
// `heartbeat client`) adds these lines; a serving process logs the same
// signal and exit lines as the heartbeat, its signal line with on_term=:
//
//	serving addr=<addr> on_term=<exit|drain|ignore> pid=<pid> time=<t>
//	signal=SIGTERM received time=<t> exiting_in=0s on_term=<exit|drain>
//	signal=SIGTERM received time=<t> on_term=ignore          (it keeps serving)
//	prestop start sleep=<d> time=<t>                         (an exec preStop, into PID 1's log)
//	prestop end time=<t>
//	request target=<name> seq=<n> start=<t> end=<t> outcome=<ok|refused|reset|timeout|error> backend=<pod|-> [port=<source port>] [error=<word>]

// What a serving workload does on SIGTERM.
const (
	OnTermExit   = "exit"   // stop listening and exit at once
	OnTermDrain  = "drain"  // stop listening, finish the requests in flight, exit
	OnTermIgnore = "ignore" // keep serving: only SIGKILL ends it
)

// Request outcomes as the client classifies them.
const (
	OutcomeOK      = "ok"
	OutcomeRefused = "refused" // the connection was refused (RST to the SYN)
	OutcomeReset   = "reset"   // the connection was reset or closed before the answer
	OutcomeTimeout = "timeout" // no answer within the client's timeout
	OutcomeError   = "error"   // anything else (unreachable, a bad answer); error= says which
)

// ServingLine is the first line of a serving workload.
func ServingLine(addr, onTerm string, pid int, t time.Time) string {
	return fmt.Sprintf("serving addr=%s on_term=%s pid=%d time=%s", addr, onTerm, pid, ts(t))
}

// ServeSignalLine is logged by a serving workload when SIGTERM arrives: it
// says what the workload does about it.
func ServeSignalLine(signal, onTerm string, t time.Time) string {
	if onTerm == OnTermIgnore {
		return fmt.Sprintf("signal=%s received time=%s on_term=%s", signal, ts(t), onTerm)
	}
	return fmt.Sprintf("signal=%s received time=%s exiting_in=0s on_term=%s", signal, ts(t), onTerm)
}

// PreStopStartLine and PreStopEndLine bracket an exec preStop hook's sleep.
func PreStopStartLine(sleep time.Duration, t time.Time) string {
	return fmt.Sprintf("prestop start sleep=%s time=%s", sleep, ts(t))
}

// PreStopEndLine is logged when the preStop sleep is over.
func PreStopEndLine(t time.Time) string { return fmt.Sprintf("prestop end time=%s", ts(t)) }

// RequestLine is one request of the client, logged when it ended. backend
// is the pod that answered ("-" when none did); errWord names the error of
// an outcome other than ok ("" for none).
func RequestLine(target string, seq int, start, end time.Time, outcome, backend string, port int, errWord string) string {
	if backend == "" {
		backend = "-"
	}
	line := fmt.Sprintf("request target=%s seq=%d start=%s end=%s outcome=%s backend=%s", target, seq, ts(start), ts(end), outcome, backend)
	if port > 0 {
		line += fmt.Sprintf(" port=%d", port)
	}
	if errWord != "" {
		line += " error=" + errWord
	}
	return line
}
