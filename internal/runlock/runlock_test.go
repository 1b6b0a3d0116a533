package runlock

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// Another process holding the lock makes Acquire wait and say so; the lock
// is free again once released.
func TestRunLockWaitsForAnotherProcessAndReleases(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) to play the other process")
	}
	t.Setenv("TMPDIR", t.TempDir())
	var out strings.Builder
	log := progress.New(&out)
	release, err := Acquire(context.Background(), log, "unit")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("flock", "-n", Path("unit"), "true").Run(); err == nil {
		t.Fatal("another process got the lock while it was held")
	}
	release()
	if out, err := exec.Command("flock", "-n", Path("unit"), "true").CombinedOutput(); err != nil {
		t.Fatalf("lock not released: %v %s", err, out)
	}

	holder := exec.Command("flock", Path("unit"), "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	for exec.Command("flock", "-n", Path("unit"), "true").Run() == nil {
		time.Sleep(10 * time.Millisecond) // until the other process holds it
	}
	ctx, cancel := context.WithCancel(context.Background())
	log = progress.New(writerFunc(func(p []byte) { out.Write(p); cancel() }))
	if _, err := Acquire(ctx, log, "unit"); err == nil {
		t.Fatal("got the lock another process holds")
	}
	if !strings.Contains(out.String(), "holds") {
		t.Fatalf("no waiting message: %q", out.String())
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
