package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/testbin"

	"github.com/termlab/termlab/internal/workloadlog"
)

func TestParseConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		want    config
		wantErr bool
	}{
		{"defaults", nil, env(), config{Interval: time.Second}, false},
		{"env only", nil, env(envInterval, "250ms", envTermDelay, "5s"), config{250 * time.Millisecond, 5 * time.Second}, false},
		{"flags only", []string{"--interval=100ms", "--term-delay=300ms"}, env(), config{100 * time.Millisecond, 300 * time.Millisecond}, false},
		{"flag beats env", []string{"--term-delay=1s"}, env(envInterval, "2s", envTermDelay, "9s"), config{2 * time.Second, time.Second}, false},
		{"flag set to default still beats env", []string{"--term-delay=0s"}, env(envTermDelay, "9s"), config{time.Second, 0}, false},
		{"bad env", nil, env(envTermDelay, "soon"), config{}, true},
		{"bad env ignored when flag given", []string{"--term-delay=1s"}, env(envTermDelay, "soon"), config{time.Second, time.Second}, false},
		{"zero interval", []string{"--interval=0s"}, env(), config{}, true},
		{"negative delay", nil, env(envTermDelay, "-1s"), config{}, true},
		{"unknown flag", []string{"--nope"}, env(), config{}, true},
		{"positional argument", []string{"extra"}, env(), config{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.args, tc.getenv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func buildBinary(t *testing.T) string {
	t.Helper()
	return testbin.BuildStatic(t, "heartbeat")
}

// proc is a running heartbeat binary whose stdout lines arrive on lines.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	out   bytes.Buffer // every line consumed so far (by the test goroutine only)
}

// startBinary runs bin with exactly env as its environment.
func startBinary(ctx context.Context, t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.CommandContext(ctx, bin, args...), lines: make(chan string, 100)}
	p.cmd.Env = append([]string{}, env...) // non-nil: nothing inherited from the test
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

// waitLine waits for a line starting with prefix.
func (p *proc) waitLine(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("output ended before a line starting with %q:\n%s", prefix, p.out.String())
			}
			p.out.WriteString(l + "\n")
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %q: %v", prefix, ctx.Err())
		}
	}
}

// wait drains the output and waits for the process to end.
func (p *proc) wait(ctx context.Context, t *testing.T) (workloadlog.Log, error) {
	t.Helper()
	for l := range p.lines {
		p.out.WriteString(l + "\n")
	}
	err := p.cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("process did not end in time: %v", ctx.Err())
	}
	l, perr := workloadlog.Parse(bytes.NewReader(p.out.Bytes()))
	if perr != nil {
		t.Fatal(perr)
	}
	if len(l.Skipped) > 0 {
		t.Errorf("unparsed lines: %+v", l.Skipped)
	}
	return l, err
}

func TestBinarySIGTERM(t *testing.T) {
	const interval, delay = 100 * time.Millisecond, 300 * time.Millisecond
	bin := buildBinary(t)
	ctx := t.Context() // bounded by go test -timeout only: a cold, busy machine is slow, not wrong

	p := startBinary(ctx, t, bin, nil, "--interval="+interval.String(), "--term-delay="+delay.String())
	p.waitLine(ctx, t, "heartbeat seq=3 ")
	sentAt := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLine(ctx, t, "signal=SIGTERM received ")
	// A second SIGTERM during the delay is logged and ignored.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	l, err := p.wait(ctx, t)
	elapsed := time.Since(sentAt)
	if err != nil {
		t.Fatalf("exit: %v, want exit code 0\n%s", err, p.out.String())
	}
	if elapsed < delay {
		t.Errorf("exited %v after SIGTERM, want >= %v", elapsed, delay)
	}

	if l.Start == nil || l.Start.PID != p.cmd.Process.Pid || l.Start.Interval != interval || l.Start.TermDelay != delay {
		t.Errorf("start = %+v, want pid %d interval %v delay %v", l.Start, p.cmd.Process.Pid, interval, delay)
	}
	for i, h := range l.Heartbeats {
		if h.Seq != i+1 {
			t.Fatalf("heartbeat %d has seq %d, want consecutive from 1:\n%s", i, h.Seq, p.out.String())
		}
	}
	sig, ok := l.TermSignal()
	if !ok || sig.Name != "SIGTERM" || sig.ExitingIn != delay {
		t.Fatalf("term signal = %+v (%v)", sig, ok)
	}
	if len(l.Signals) != 2 || !l.Signals[1].Ignored {
		t.Errorf("signals = %+v, want the second one ignored", l.Signals)
	}
	// At 100ms per beat a 300ms delay has about three beats; under load the
	// ticker drops beats, so require only one.
	if n := len(l.HeartbeatsAfter(sig.Time)); n < 1 {
		t.Errorf("%d heartbeats during the delay, want >= 1:\n%s", n, p.out.String())
	}
	if !l.CleanExit() {
		t.Fatalf("no clean exit line:\n%s", p.out.String())
	}
	if d := l.Exit.Time.Sub(sig.Time); d < delay {
		t.Errorf("logged exit %v after the signal, want >= %v", d, delay)
	}
	if last, _ := l.LastHeartbeat(); last.Line > l.Exit.Line || sig.Line > l.Exit.Line {
		t.Errorf("exit line is not last:\n%s", p.out.String())
	}
}

func TestBinarySIGKILL(t *testing.T) {
	bin := buildBinary(t)
	ctx := t.Context() // bounded by go test -timeout only: a cold, busy machine is slow, not wrong

	p := startBinary(ctx, t, bin, nil, "--interval=100ms", "--term-delay=5s")
	p.waitLine(ctx, t, "heartbeat seq=2 ")
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	l, err := p.wait(ctx, t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v, want killed", err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("wait status %v, want killed by SIGKILL", ws)
	}
	if l.Start == nil || len(l.Heartbeats) < 2 {
		t.Errorf("want start and >= 2 heartbeats:\n%s", p.out.String())
	}
	if _, ok := l.TermSignal(); ok || l.Exit != nil {
		t.Errorf("SIGKILL must leave no signal or exit line:\n%s", p.out.String())
	}
}

func TestBinaryEnvConfig(t *testing.T) {
	bin := buildBinary(t)
	ctx := t.Context() // bounded by go test -timeout only: a cold, busy machine is slow, not wrong

	p := startBinary(ctx, t, bin, []string{envInterval + "=50ms", envTermDelay + "=0s"})
	p.waitLine(ctx, t, "heartbeat seq=1 ")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	l, err := p.wait(ctx, t)
	if err != nil {
		t.Fatalf("exit: %v, want 0", err)
	}
	if l.Start == nil || l.Start.Interval != 50*time.Millisecond || l.Start.TermDelay != 0 {
		t.Errorf("start = %+v, want interval and delay from the environment", l.Start)
	}
	if sig, ok := l.TermSignal(); !ok || sig.Name != "SIGINT" || sig.ExitingIn != 0 || !l.CleanExit() {
		t.Errorf("signal %+v (%v), exit %+v; want SIGINT, exiting_in=0s and a clean exit", sig, ok, l.Exit)
	}
}
