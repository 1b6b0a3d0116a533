package flock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The lock excludes another process and is released; in-process it is re-entrant.
func TestExcludesOtherProcessesAndIsReentrant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	release, err := Acquire(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("re-entrant acquire: %v", err)
	}
	// flock(1) in another process must not get it while we hold it.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) to play the other process")
	}
	if out, err := exec.Command("flock", "-n", path, "true").CombinedOutput(); err == nil {
		t.Fatalf("another process took the lock while it was held: %s", out)
	}
	again()
	if err := exec.Command("flock", "-n", path, "true").Run(); err == nil {
		t.Fatal("one release of two freed the lock")
	}
	release()
	release() // idempotent
	if out, err := exec.Command("flock", "-n", path, "true").CombinedOutput(); err != nil {
		t.Fatalf("lock not released: %v %s", err, out)
	}
}

// A waiter is told who holds the lock and gives up when its context ends.
func TestWaiterHearsTheHolderAndStopsWithItsContext(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) to play the other process")
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	if err := os.WriteFile(path, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("flock", path, "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	// Wait until the other process holds it (flock -n fails).
	for exec.Command("flock", "-n", path, "true").Run() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var heard string
	_, err := Acquire(ctx, path, func(h string) { heard = h; cancel() })
	if err == nil || !strings.Contains(err.Error(), "waiting for the lock") {
		t.Fatalf("err = %v, want a wait that ended with its context", err)
	}
	if heard != "4242" {
		t.Errorf("holder = %q, want the pid the file names", heard)
	}
}
