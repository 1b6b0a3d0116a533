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
