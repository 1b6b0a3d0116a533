// Package progress prints what a long operation is doing, with elapsed time,
// so that a user watching a 15-minute build knows it is alive and where it is.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Logger writes human progress lines. The zero value is not usable; use New or Default.
type Logger struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
	// Verbose enables Debugf lines.
	Verbose bool
	// stepDone, if set, is told each finished step and how long it took.
	stepDone func(name string, took time.Duration)
}

// WithStepHook returns a logger writing the same lines, which also tells
// fn each step that finished without error and how long it took (for a
// measurement that wants the breakdown).
func (l *Logger) WithStepHook(fn func(name string, took time.Duration)) *Logger {
	return &Logger{out: l.out, start: l.start, Verbose: l.Verbose, stepDone: fn}
}

// New returns a Logger writing to out.
func New(out io.Writer) *Logger { return &Logger{out: out, start: time.Now()} }

var defaultLogger = New(os.Stderr)

// Default is the process-wide logger (stderr); TERMLAB_VERBOSE=1 turns on debug lines.
func Default() *Logger {
	defaultLogger.Verbose = os.Getenv("TERMLAB_VERBOSE") != ""
	return defaultLogger
}

func (l *Logger) linef(prefix, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "[%6.1fs] %s%s\n", time.Since(l.start).Seconds(), prefix, fmt.Sprintf(format, args...))
}

// Infof prints a line a user should read.
func (l *Logger) Infof(format string, args ...any) { l.linef("", format, args...) }

// Warnf prints a warning.
func (l *Logger) Warnf(format string, args ...any) { l.linef("WARNING: ", format, args...) }

// Debugf prints only when Verbose is set.
func (l *Logger) Debugf(format string, args ...any) {
	if l.Verbose {
		l.linef("  debug: ", format, args...)
	}
}

// Step announces a named step and returns a function that reports how it ended
// and how long it took. Use it as:
//
//	done := log.Step("building node image")
//	err := build()
//	done(err)
func (l *Logger) Step(name string) func(error) {
	begin := time.Now()
	l.linef("▶ ", "%s ...", name)
	return func(err error) {
		took := time.Since(begin).Round(100 * time.Millisecond)
		if err != nil {
			l.linef("✗ ", "%s failed after %s: %v", name, took, err)
			return
		}
		l.linef("✓ ", "%s (%s)", name, took)
		if l.stepDone != nil {
			l.stepDone(name, time.Since(begin))
		}
	}
}

// Ticker prints "still <name> (<elapsed>)" every interval until the returned stop is called.
// It is for steps that run silently for minutes (go build, debootstrap).
func (l *Logger) Ticker(name string, every time.Duration) (stop func()) {
	begin := time.Now()
	return l.Every(every, func() string {
		return fmt.Sprintf("… still %s (%s)", name, time.Since(begin).Round(time.Second))
	})
}

// Every prints say() every interval until the returned stop is called; stop
// returns once no more can be printed. It is for waits that can say how far
// they have got ("12000 of 20000 pods Running").
func (l *Logger) Every(interval time.Duration, say func() string) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.linef("", "%s", say())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-ended
	}
}
