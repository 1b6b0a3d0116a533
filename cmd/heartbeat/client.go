package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/workloadlog"
)

// `heartbeat client --every=20ms --timeout=1s name[@period]=url …` sends
// one GET to each url every period (its own, or --every), on a fixed schedule (a slow answer does
// not delay the next request), each on a new TCP connection, and logs every
// request when it ends: start, end, outcome and the pod that answered.
//
// A new connection per request is what makes each request a fresh routing
// decision by the node's kube-proxy rules; a kept-alive connection stays on
// the backend it was opened to, whatever the rules say later.

type clientConfig struct {
	Every   time.Duration
	Timeout time.Duration
	Targets []clientTarget
}

// clientTarget is one URL and its own period (--every unless name@period=url).
type clientTarget struct {
	Name, URL string
	Every     time.Duration
}

func parseClientConfig(args []string) (clientConfig, error) {
	cfg := clientConfig{Every: 20 * time.Millisecond, Timeout: time.Second}
	fs := flag.NewFlagSet("heartbeat client", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.DurationVar(&cfg.Every, "every", cfg.Every, "time between requests to each target")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "how long a request may take")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.Every <= 0 || cfg.Timeout <= 0 {
		return cfg, errors.New("--every and --timeout must be > 0")
	}
	for _, a := range fs.Args() {
		name, url, ok := strings.Cut(a, "=")
		if !ok || name == "" || url == "" || strings.ContainsAny(name, " =") {
			return cfg, fmt.Errorf("target %q: want name=url or name@period=url", a)
		}
		t := clientTarget{Name: name, URL: url, Every: cfg.Every}
		if n, every, ok := strings.Cut(name, "@"); ok {
			d, err := time.ParseDuration(every)
			if err != nil || d <= 0 || n == "" {
				return cfg, fmt.Errorf("target %q: bad period %q", a, every)
			}
			t.Name, t.Every = n, d
		}
		cfg.Targets = append(cfg.Targets, t)
	}
	if len(cfg.Targets) == 0 {
		return cfg, errors.New("no targets: want name=url …")
	}
	return cfg, nil
}

// lockedWriter writes each line with one write, whatever the goroutine.
type lockedWriter struct {
	mu  sync.Mutex
	out io.Writer
}

func (w *lockedWriter) line(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintln(w.out, s)
}

// runClient is `heartbeat client`; it returns the exit code.
func runClient(args []string, out io.Writer) int {
	cfg, err := parseClientConfig(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat client:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	sendRequests(ctx, cfg, &lockedWriter{out: out})
	return 0
}

// sendRequests runs every target's schedule until ctx ends, then waits for
// the requests in flight.
func sendRequests(ctx context.Context, cfg clientConfig, w *lockedWriter) {
	var wg sync.WaitGroup
	for _, t := range cfg.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(t.Every)
			defer tick.Stop()
			var inFlight sync.WaitGroup
			defer inFlight.Wait()
			for seq := 1; ; seq++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				inFlight.Add(1)
				go func(seq int) {
					defer inFlight.Done()
					start := time.Now()
					a := get(t.URL, start.Add(cfg.Timeout))
					w.line(workloadlog.RequestLine(t.Name, seq, start, time.Now(), a.outcome, a.backend, a.port, a.errWord))
				}(seq)
			}
		}()
	}
	wg.Wait()
}

// answer is what one request came to.
type answer struct {
	outcome, backend, errWord string
	// port is the connection's source port, 0 when it got none.
	port int
}

// get sends one GET on a new connection of its own and classifies what
// came back, all before deadline. It speaks HTTP itself rather than through
// net/http's Transport, which may hand a connection dialed for one request
// to another and never says which source port a failed dial had.
func get(rawURL string, deadline time.Time) answer {
	u, err := url.Parse(rawURL)
	if err != nil {
		return answer{outcome: workloadlog.OutcomeError, errWord: "bad-url"}
	}
	hostPort := u.Host
	if u.Port() == "" {
		hostPort = net.JoinHostPort(u.Hostname(), "80")
	}
	addr, err := net.ResolveTCPAddr("tcp", hostPort)
	if err != nil {
		o, w := classify(err)
		return answer{outcome: o, errWord: w}
	}
	conn, port, err := connectFrom(addr, deadline)
	if err != nil {
		o, w := classify(err)
		return answer{outcome: o, errWord: w, port: port}
	}
	defer conn.Close()
	a := answer{port: port}
	a.outcome, a.backend, a.errWord = exchange(conn, u, deadline)
	return a
}

// exchange sends the GET on conn and reads the answer.
func exchange(conn net.Conn, u *url.URL, deadline time.Time) (outcome, backend, errWord string) {
	if err := conn.SetDeadline(deadline); err != nil {
		o, w := classify(err)
		return o, "", w
	}
	req := &http.Request{Method: http.MethodGet, URL: u, Host: u.Host, Header: http.Header{}, Close: true, ProtoMajor: 1, ProtoMinor: 1}
	if err := req.Write(conn); err != nil {
		o, w := classify(err)
		return o, "", w
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		o, w := classify(err)
		return o, "", w
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		o, w := classify(err)
		return o, "", w
	}
	if resp.StatusCode != http.StatusOK {
		return workloadlog.OutcomeError, "", fmt.Sprintf("http-%d", resp.StatusCode)
	}
	return workloadlog.OutcomeOK, strings.TrimSpace(string(body)), ""
}

// classify names a failed request's outcome from its error, by the errno
// underneath: the kernel's word, not an error message's.
func classify(err error) (outcome, word string) {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return workloadlog.OutcomeRefused, "ECONNREFUSED"
	case errors.Is(err, syscall.ECONNRESET):
		return workloadlog.OutcomeReset, "ECONNRESET"
	case errors.Is(err, syscall.EPIPE):
		return workloadlog.OutcomeReset, "EPIPE"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return workloadlog.OutcomeReset, "EOF"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return workloadlog.OutcomeTimeout, "timeout"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return workloadlog.OutcomeError, "EHOSTUNREACH"
	case errors.Is(err, syscall.ENETUNREACH):
		return workloadlog.OutcomeError, "ENETUNREACH"
	}
	return workloadlog.OutcomeError, errorWord(err)
}

// errorWord is a one-word name for an error no errno names.
func errorWord(err error) string {
	words := strings.FieldsFunc(err.Error(), func(r rune) bool { return r == ' ' || r == ':' || r == '"' || r == '=' })
	if len(words) == 0 {
		return "unknown"
	}
	return strings.Join(words[max(0, len(words)-2):], "-")
}
