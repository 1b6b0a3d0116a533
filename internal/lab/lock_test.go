package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

func TestRunLockExcludesAndReleases(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out strings.Builder
	log := progress.New(&out)
	release, err := AcquireRunLock(context.Background(), log, "unit")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if _, err := AcquireRunLock(ctx, log, "unit"); err == nil {
		t.Fatal("second holder got the lock")
	}
	if !strings.Contains(out.String(), "holds") {
		t.Fatalf("no waiting message: %q", out.String())
	}
	release()
	again, err := AcquireRunLock(context.Background(), log, "unit")
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	again()
}
