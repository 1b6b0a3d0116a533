package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/syncbuf"
	"github.com/termlab/termlab/internal/workloadlog"
)

// parse reads the workload's log written to s.
func parse(t *testing.T, s *syncbuf.Buffer) workloadlog.Log {
	t.Helper()
	l, err := workloadlog.Parse(strings.NewReader(s.String()))
	if err != nil || len(l.Skipped) > 0 {
		t.Fatalf("parse: %v, skipped %+v", err, l.Skipped)
	}
	return l
}

func TestServeOnTerm(t *testing.T) {
	for _, onTerm := range []string{workloadlog.OnTermExit, workloadlog.OnTermDrain, workloadlog.OnTermIgnore} {
		t.Run(onTerm, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var out syncbuf.Buffer
			sigs := make(chan os.Signal, 1)
			code := make(chan int, 1)
			go func() { code <- serveOn(ln, serveConfig{OnTerm: onTerm}, "pod-a", &out, sigs) }()
			url := "http://" + ln.Addr().String() + "/"
			a := get(url, time.Now().Add(time.Second))
			outcome, backend := a.outcome, a.backend
			if outcome != workloadlog.OutcomeOK || backend != "pod-a" {
				t.Fatalf("before SIGTERM: %s from %q", outcome, backend)
			}
			sigs <- syscall.SIGTERM
			switch onTerm {
			case workloadlog.OnTermIgnore:
				// Still serving after the signal is logged.
				deadline := time.Now().Add(5 * time.Second)
				for len(parse(t, &out).Signals) == 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if o := get(url, time.Now().Add(time.Second)).outcome; o != workloadlog.OutcomeOK {
					t.Errorf("after an ignored SIGTERM: %s, want ok", o)
				}
				l := parse(t, &out)
				if s, ok := l.TermSignal(); !ok || s.OnTerm != workloadlog.OnTermIgnore || l.Exit != nil {
					t.Errorf("log %+v", l)
				}
			default:
				if c := <-code; c != 0 {
					t.Errorf("exit code %d", c)
				}
				l := parse(t, &out)
				if l.Serving == nil || l.Serving.OnTerm != onTerm || !l.CleanExit() {
					t.Errorf("log %+v", l)
				}
				if s, ok := l.TermSignal(); !ok || s.OnTerm != onTerm {
					t.Errorf("signal %+v", l.Signals)
				}
				if a := get(url, time.Now().Add(time.Second)); a.outcome != workloadlog.OutcomeRefused {
					t.Errorf("after exit: %s (%s), want refused", a.outcome, a.errWord)
				}
			}
		})
	}
}

func TestSleepHookWritesIntoTheLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "pid1.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := sleepHook([]string{"30ms"}, log); code != 0 {
		t.Fatalf("exit %d", code)
	}
	b, _ := os.ReadFile(log)
	l, _ := workloadlog.Parse(bytes.NewReader(b))
	start, okStart := l.PreStopStarted()
	end, okEnd := l.PreStopEnded()
	if !okStart || !okEnd || start.Sleep != 30*time.Millisecond || end.Time.Sub(start.Time) < 30*time.Millisecond {
		t.Errorf("log %q", b)
	}
	if code := sleepHook([]string{"soon"}, log); code != 2 {
		t.Errorf("bad duration: exit %d, want 2", code)
	}
}

func TestClientLogsEveryRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	go serveOn(ln, serveConfig{OnTerm: workloadlog.OnTermExit}, "pod-b", &syncbuf.Buffer{}, sigs)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()
	cfg, err := parseClientConfig([]string{"--every=10ms", "--timeout=500ms", "up@5ms=http://" + ln.Addr().String() + "/", "down=" + closedURL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out syncbuf.Buffer
	sendRequests(ctx, cfg, &lockedWriter{out: &out})
	l := parse(t, &out)
	counts := map[string]int{}
	for _, q := range l.Requests {
		counts[q.Target+"/"+q.Outcome]++
		if q.Target == "up" && q.Outcome == workloadlog.OutcomeOK && q.Backend != "pod-b" {
			t.Errorf("backend %q", q.Backend)
		}
	}
	// Counts only: how many requests a 5 ms and a 10 ms period fit into
	// 200 ms depends on the machine's load (16 to 12 was seen at a load of
	// 20), and parseClientConfig's test checks the periods themselves.
	if counts["up/ok"] < 2 || counts["down/refused"] < 2 || len(l.Requests) != counts["up/ok"]+counts["down/refused"] {
		t.Errorf("outcomes %v", counts)
	}
	sigs <- syscall.SIGTERM
}

func TestParseClientConfig(t *testing.T) {
	for _, bad := range [][]string{nil, {"noequals"}, {"a@soon=http://x/"}, {"@5ms=http://x/"}, {"--every=0s", "a=http://x/"}, {"a b=http://x/"}} {
		if _, err := parseClientConfig(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	cfg, err := parseClientConfig([]string{"--every=10ms", "up@5ms=http://a/", "down=http://b/"})
	if err != nil || len(cfg.Targets) != 2 || cfg.Targets[0].Every != 5*time.Millisecond || cfg.Targets[1].Every != 10*time.Millisecond {
		t.Errorf("per-target periods: %+v, %v", cfg, err)
	}
	if _, err := parseServeConfig([]string{"--on-term=maybe"}); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("bad --on-term: %v", err)
	}
}

func TestExitDropsRequestsInFlightDrainFinishesThem(t *testing.T) {
	for _, tc := range []struct{ onTerm, want string }{{workloadlog.OnTermExit, workloadlog.OutcomeReset}, {workloadlog.OnTermDrain, workloadlog.OutcomeOK}} {
		t.Run(tc.onTerm, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			sigs := make(chan os.Signal, 1)
			done := make(chan int, 1)
			go func() {
				done <- serveOn(ln, serveConfig{OnTerm: tc.onTerm, AnswerAfter: 300 * time.Millisecond}, "pod-c", &syncbuf.Buffer{}, sigs)
			}()
			got := make(chan string, 1)
			go func() {
				got <- get("http://"+ln.Addr().String()+"/", time.Now().Add(2*time.Second)).outcome
			}()
			time.Sleep(100 * time.Millisecond) // the request is in the handler
			sigs <- syscall.SIGTERM
			if o := <-got; o != tc.want {
				t.Errorf("a request in flight at SIGTERM: %s, want %s", o, tc.want)
			}
			<-done
		})
	}
}

// TestClientLogsItsSourcePort: the port logged is the one the server saw
// the connection come from, for an answered request and for one that timed
// out unanswered after its connect.
func TestClientLogsItsSourcePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan int, 4)
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen <- c.RemoteAddr().(*net.TCPAddr).Port
			if i == 0 { // the first is answered, the second never is
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\npod-x"))
				c.Close()
			} else {
				defer c.Close()
			}
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	for _, want := range []string{workloadlog.OutcomeOK, workloadlog.OutcomeTimeout} {
		a := get(url, time.Now().Add(300*time.Millisecond))
		server := <-seen
		if a.outcome != want || a.port != server || a.port == 0 {
			t.Errorf("%+v: want outcome %s from port %d (the server's view)", a, want, server)
		}
		if want == workloadlog.OutcomeOK && a.backend != "pod-x" {
			t.Errorf("backend %q", a.backend)
		}
	}
}

// TestRefusedConnectKeepsItsPort: a refused connect is classified by its
// errno and still says its source port.
func TestRefusedConnectKeepsItsPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	a := get("http://"+addr+"/", time.Now().Add(time.Second))
	if a.outcome != workloadlog.OutcomeRefused || a.errWord != "ECONNREFUSED" || a.port == 0 {
		t.Errorf("%+v: want refused with a port", a)
	}
}
