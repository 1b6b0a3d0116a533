package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// lockWait bounds how long a run waits for another run on the same cluster.
const lockWait = 15 * time.Minute

// AcquireRunLock serialises lab runs (and resets) on one cluster across processes (a lab
// repairs whatever another run left, so two at once would undo each other).
// The kernel drops the lock when the holder dies, even by SIGKILL, and the
// next run then repairs what it left.
func AcquireRunLock(ctx context.Context, log *progress.Logger, cluster string) (release func(), err error) {
	path := filepath.Join(os.TempDir(), "termlab-lab-"+cluster+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lab lock %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	announced := false
	for {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			break
		}
		if !announced {
			holder, _ := os.ReadFile(path)
			log.Infof("another lab run on cluster %q holds %s (pid %s): waiting for it (at most %s)", cluster, path, strings.TrimSpace(string(holder)), lockWait)
			announced = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another lab run on cluster %q to finish (lock %s): %w", cluster, path, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
