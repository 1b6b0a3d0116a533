// Command heartbeat is the labs' workload: it logs a heartbeat line every
// interval and, on SIGTERM or SIGINT, keeps beating for a configurable delay
// before logging a clean exit and exiting 0.
//
// It is meant to run as PID 1 of a container built from this one static
// binary. It installs its own signal handlers (PID 1 gets no default ones) and
// starts no child processes, so it has nothing to reap.
//
// Configuration, highest precedence first: the flag, then the environment
// variable, then the default.
//
//	--interval   HEARTBEAT_INTERVAL  1s  time between heartbeats (> 0)
//	--term-delay TERM_DELAY          0s  how long to keep going after SIGTERM
//
// The log format is defined in internal/workloadlog, which also parses it.
//
// For lab:statefulset the same binary has two more parts (ledger.go):
// `heartbeat ledger` serves the ledger, and a heartbeat with LEDGER_URL set
// also posts its identity there every LEDGER_EVERY (500ms). For the
// node-access pod it has `idle` and `chroot` (node.go). For lab:graceful it
// has `serve`, `sleep` (serve.go) and `client` (client.go). For what a lab
// changes in the cluster (a taint, an APIService) it has `switch`
// (switch.go), the dead-man's switch that undoes it if termlab is killed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/workloadlog"
)

type config struct {
	Interval  time.Duration
	TermDelay time.Duration
}

const (
	envInterval  = "HEARTBEAT_INTERVAL"
	envTermDelay = "TERM_DELAY"
)

// parseConfig applies flags over environment variables over defaults.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	cfg := config{Interval: time.Second}
	fs := flag.NewFlagSet("heartbeat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.DurationVar(&cfg.Interval, "interval", cfg.Interval, "time between heartbeats (env "+envInterval+")")
	fs.DurationVar(&cfg.TermDelay, "term-delay", cfg.TermDelay, "how long to keep going after SIGTERM before exiting 0 (env "+envTermDelay+")")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, e := range []struct {
		flag, env string
		dst       *time.Duration
	}{{"interval", envInterval, &cfg.Interval}, {"term-delay", envTermDelay, &cfg.TermDelay}} {
		if v := getenv(e.env); v != "" && !set[e.flag] {
			d, err := time.ParseDuration(v)
			if err != nil {
				return config{}, fmt.Errorf("%s: %w", e.env, err)
			}
			*e.dst = d
		}
	}
	if cfg.Interval <= 0 {
		return config{}, errors.New("interval must be > 0")
	}
	if cfg.TermDelay < 0 {
		return config{}, errors.New("term delay must be >= 0")
	}
	return cfg, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "ledger" {
		os.Exit(serveLedger(os.Getenv))
	}
	if len(os.Args) == 2 && os.Args[1] == "idle" {
		os.Exit(idle())
	}
	if len(os.Args) >= 2 && os.Args[1] == "agent" {
		os.Exit(serveAgent(os.Args[2:], os.Getenv))
	}
	if len(os.Args) >= 2 && os.Args[1] == "serve" {
		os.Exit(serve(os.Args[2:], os.Getenv, os.Stdout))
	}
	if len(os.Args) >= 2 && os.Args[1] == "sleep" {
		os.Exit(sleepHook(os.Args[2:], pid1Log))
	}
	if len(os.Args) >= 2 && os.Args[1] == "client" {
		os.Exit(runClient(os.Args[2:], os.Stdout))
	}
	if len(os.Args) == 2 && os.Args[1] == "switch" {
		os.Exit(runSwitch(os.Getenv))
	}
	if len(os.Args) >= 2 && os.Args[1] == "chroot" {
		os.Exit(chrootExec(os.Args[2:]))
	}
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat:", err)
		os.Exit(2)
	}
	writer, writes, err := parseWriterConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat:", err)
		os.Exit(2)
	}
	if writes {
		// It dies with the process: a killed writer stops writing at once.
		go writeLedger(context.Background(), writer, time.Now)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	os.Exit(run(cfg, os.Stdout, sigs))
}

// run beats until a signal's delay has passed and returns the exit code.
// Each line is written with a single write, unbuffered, so a SIGKILL loses
// nothing already logged.
func run(cfg config, out io.Writer, sigs <-chan os.Signal) int {
	emit := func(line string) { fmt.Fprintln(out, line) }
	emit(workloadlog.StartLine(os.Getpid(), cfg.Interval, cfg.TermDelay, time.Now()))

	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	var exitAt <-chan time.Time // nil (never ready) until a signal arrives
	seq := 0
	for {
		select {
		case <-tick.C:
			seq++
			emit(workloadlog.HeartbeatLine(seq, time.Now()))
		case s := <-sigs:
			if exitAt != nil {
				emit(workloadlog.SignalIgnoredLine(signalName(s), time.Now()))
				continue
			}
			emit(workloadlog.SignalLine(signalName(s), time.Now(), cfg.TermDelay))
			exitAt = time.After(cfg.TermDelay)
		case <-exitAt:
			emit(workloadlog.ExitLine(0, time.Now()))
			return 0
		}
	}
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}
