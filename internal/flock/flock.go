// Package flock is the one exclusive file lock termlab uses between
// processes: lab runs on one cluster, builds of one scratch module. The
// kernel drops a flock when its holder dies, even by SIGKILL, so a lock is
// never left behind. Within one process a lock is re-entrant: a lab target
// that holds the cluster's run lock can call code that takes it again.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// retryEvery is how often a held lock is tried again; it only sets how soon
// a waiter notices the release.
const retryEvery = 500 * time.Millisecond

var (
	mu   sync.Mutex
	held = map[string]*lock{}
)

type lock struct {
	f     *os.File
	count int
}

// Acquire takes the exclusive lock on path, creating the file. While another
// process holds it, waiting is called once (with what the file says: the
// holder's pid) and the lock is retried until ctx ends. The file records this
// process's pid. release is idempotent.
func Acquire(ctx context.Context, path string, waiting func(holder string)) (release func(), err error) {
	path = filepath.Clean(path)
	mu.Lock()
	if l, ok := held[path]; ok {
		l.count++
		mu.Unlock()
		return releaser(path), nil
	}
	mu.Unlock()

	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %s: %w", path, err)
	}
	for announced := false; ; {
		err := lockNB(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errHeld) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !announced && waiting != nil {
			holder, _ := os.ReadFile(path)
			waiting(string(trimSpace(holder)))
			announced = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, context.Cause(ctx))
		case <-time.After(retryEvery):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	mu.Lock()
	held[path] = &lock{f: f, count: 1}
	mu.Unlock()
	return releaser(path), nil
}

func releaser(path string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			l := held[path]
			if l == nil {
				return
			}
			if l.count--; l.count == 0 {
				_ = unlock(l.f)
				l.f.Close()
				delete(held, path)
			}
		})
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
