package gobuild

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockDir takes an exclusive flock on path, so two processes never write the same
// scratch module at once. While another holds it, waiting is called once and the
// lock is retried until ctx ends. The lock dies with the process.
func lockDir(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	retry := time.NewTicker(500 * time.Millisecond)
	defer retry.Stop()
	for announced := false; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if !announced {
			waiting()
			announced = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-retry.C:
		}
	}
}
