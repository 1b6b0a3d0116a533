package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/testbin"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	return testbin.BuildStatic(t, "pause")
}

func TestBinaryExitsOnSignal(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx := t.Context() // bounded by go test -timeout only
			cmd := exec.CommandContext(ctx, bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()

			waitIdle(ctx, t, cmd.Process.Pid)
			// A SIGCHLD with no child to reap must not end or upset it.
			if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Fatalf("exited before being signalled: %v", err)
			default:
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v, want 0", err)
				}
			case <-ctx.Done():
				t.Fatal("did not exit after", sig)
			}
		})
	}
}

// waitIdle waits until pid has settled into its signal loop. A signal that
// arrives before signal.Notify would take the default action (the Go runtime
// catches SIGTERM from its start, so /proc's SigCgt alone proves nothing):
// wait until every thread of the process sleeps, which it does only once main
// blocks on the signal channel. During start-up on a loaded machine every
// thread can sleep for a moment while the main goroutine waits to be
// scheduled (seen in CI while go test compiled other packages), so the
// process must stay asleep for idleFor: a runnable goroutine with an idle P
// wakes a thread at once, whereas a blocked one stays asleep for good.
func waitIdle(ctx context.Context, t *testing.T, pid int) {
	t.Helper()
	const idleFor = 200 * time.Millisecond
	var since time.Time
	for {
		if !allSleeping(t, pid) {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) >= idleFor {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pid %d never went idle: %v", pid, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func allSleeping(t *testing.T, pid int) bool {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no tasks for pid %d: %v", pid, err)
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// "pid (comm) S ...": the state follows the last ')'.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		if fields := bytes.Fields(rest); len(fields) == 0 || string(fields[0]) != "S" {
			return false
		}
	}
	return true
}

func TestRun(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		sigs := make(chan os.Signal, 3)
		sigs <- syscall.SIGCHLD
		sigs <- sig
		sigs <- syscall.SIGCHLD // must never be read
		if code := run(sigs); code != 0 || len(sigs) != 1 {
			t.Errorf("%v: run = %d with %d signals left, want 0 and 1 left", sig, code, len(sigs))
		}
	}
}

func TestReap(t *testing.T) {
	// Nothing to reap: no children.
	if pids, err := reap(); err != nil || len(pids) != 0 {
		t.Fatalf("reap() = %v, %v; want nothing", pids, err)
	}
	// Start children and never Wait for them: they become zombies.
	var want []int
	for range 3 {
		c := exec.Command("/bin/true")
		if err := c.Start(); err != nil {
			t.Skip("cannot start /bin/true:", err)
		}
		want = append(want, c.Process.Pid)
	}
	// A live child must not block reaping.
	live := exec.Command("/bin/sleep", "30")
	if err := live.Start(); err != nil {
		t.Skip("cannot start /bin/sleep:", err)
	}
	defer func() { _ = live.Process.Kill(); _, _ = reap() }()

	ctx := t.Context() // bounded by go test -timeout only
	var got []int
	for len(got) < len(want) {
		pids, err := reap()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pids...)
		select {
		case <-ctx.Done():
			t.Fatalf("reaped %v, want %v", got, want)
		case <-time.After(5 * time.Millisecond):
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("reaped %v, want %v", got, want)
	}
	for _, pid := range want {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("pid %d still exists after reaping", pid)
		}
	}
}
