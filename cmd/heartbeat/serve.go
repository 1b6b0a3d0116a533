package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/workloadlog"
)

// lab:graceful's workload, three more parts of this one binary:
//
//	heartbeat serve [--listen=:8080] [--on-term=exit|drain|ignore] [--answer-after=0s]
//	    answers every HTTP request, after --answer-after, with its pod's name (POD_NAME) and, on
//	    SIGTERM, exits at once, drains (stops accepting, finishes what is in
//	    flight, exits) or ignores it
//	heartbeat sleep <duration>
//	    an exec preStop hook: sleeps, writing its start and end into the log
//	    of the container's main process (PID 1), since a hook's own output
//	    goes nowhere
//	heartbeat client   (client.go)

const envPodNameServe = "POD_NAME"

// serveConfig is `heartbeat serve`'s configuration.
type serveConfig struct {
	Listen string
	OnTerm string
	// AnswerAfter is how long each request takes to answer: the work a real
	// handler does, so that requests are in flight when SIGTERM comes.
	AnswerAfter time.Duration
}

func parseServeConfig(args []string) (serveConfig, error) {
	cfg := serveConfig{Listen: ":8080", OnTerm: workloadlog.OnTermExit}
	fs := flag.NewFlagSet("heartbeat serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to serve on")
	fs.StringVar(&cfg.OnTerm, "on-term", cfg.OnTerm, "what to do on SIGTERM: exit, drain or ignore")
	fs.DurationVar(&cfg.AnswerAfter, "answer-after", 0, "how long each request takes to answer")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch cfg.OnTerm {
	case workloadlog.OnTermExit, workloadlog.OnTermDrain, workloadlog.OnTermIgnore:
	default:
		return cfg, fmt.Errorf("--on-term=%q: want exit, drain or ignore", cfg.OnTerm)
	}
	return cfg, nil
}

// serve is `heartbeat serve`; it returns the exit code.
func serve(args []string, getenv func(string) string, out io.Writer) int {
	cfg, err := parseServeConfig(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat serve:", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat serve:", err)
		return 1
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	return serveOn(ln, cfg, getenv(envPodNameServe), out, sigs)
}

// serveOn serves on ln until SIGTERM says otherwise. Each log line is one
// unbuffered write, so a SIGKILL loses nothing already logged.
func serveOn(ln net.Listener, cfg serveConfig, name string, out io.Writer, sigs <-chan os.Signal) int {
	emit := func(line string) { fmt.Fprintln(out, line) }
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(cfg.AnswerAfter) // the handler's work; a process that exits drops it
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintln(w, name)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	emit(workloadlog.ServingLine(ln.Addr().String(), cfg.OnTerm, os.Getpid(), time.Now()))
	for {
		select {
		case err := <-errc:
			fmt.Fprintln(os.Stderr, "heartbeat serve:", err)
			return 1
		case s := <-sigs:
			emit(workloadlog.ServeSignalLine(signalName(s), cfg.OnTerm, time.Now()))
			switch cfg.OnTerm {
			case workloadlog.OnTermIgnore:
				continue
			case workloadlog.OnTermExit:
				// What a program with no SIGTERM handling of its own does:
				// the listener and every connection close with the process.
				_ = srv.Close()
			case workloadlog.OnTermDrain:
				// Shutdown closes the listener, then waits for the requests in
				// flight; the kubelet's SIGKILL bounds it, not this process.
				if err := srv.Shutdown(context.Background()); err != nil && !errors.Is(err, http.ErrServerClosed) {
					fmt.Fprintln(os.Stderr, "heartbeat serve: drain:", err)
				}
			}
			emit(workloadlog.ExitLine(0, time.Now()))
			return 0
		}
	}
}

// pid1Log is where an exec preStop hook's lines go: the main process's
// stdout, which the runtime keeps as the container's log.
const pid1Log = "/proc/1/fd/1"

// sleepHook is `heartbeat sleep <duration>`; it returns the exit code.
func sleepHook(args []string, logTo string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "heartbeat sleep: want one duration, e.g. 5s")
		return 2
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < 0 {
		fmt.Fprintf(os.Stderr, "heartbeat sleep: bad duration %q\n", args[0])
		return 2
	}
	var out io.Writer = os.Stdout
	if f, err := os.OpenFile(logTo, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		defer f.Close()
		out = f
	}
	fmt.Fprintln(out, workloadlog.PreStopStartLine(d, time.Now()))
	time.Sleep(d) // the hook's whole job; the kubelet bounds it by the grace period
	fmt.Fprintln(out, workloadlog.PreStopEndLine(time.Now()))
	return 0
}
