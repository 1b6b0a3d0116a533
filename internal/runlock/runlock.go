// Package runlock serialises everything that changes a termlab cluster's
// state across processes: lab runs, cluster:up's repair and health check,
// workshop resets. Each of them repairs what earlier runs left (a stopped
// kubelet, a stuck finalizer), so two at once would undo each other: a
// cluster:up in the middle of lab:orphan would restart the kubelet the lab
// stopped on purpose. The lock is re-entrant within a process (internal/flock).
package runlock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/termlab/termlab/internal/flock"
	"github.com/termlab/termlab/internal/progress"
)

// Wait bounds how long one waits for another process's run on the same
// cluster: longer than any lab takes (lab:orphan, the longest, takes about a
// minute; a whole lab:all a few).
const Wait = 15 * time.Minute

// Path is the lock file of the named cluster.
func Path(cluster string) string {
	return filepath.Join(os.TempDir(), "termlab-lab-"+cluster+".lock")
}

// Acquire takes the cluster's run lock, waiting (and saying so) while another
// process holds it.
func Acquire(ctx context.Context, log *progress.Logger, cluster string) (release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	path := Path(cluster)
	release, err = flock.Acquire(ctx, path, func(holder string) {
		log.Infof("another termlab run on cluster %q holds %s (pid %s): waiting for it (at most %s)", cluster, path, holder, Wait)
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for another termlab run on cluster %q to finish: %w", cluster, err)
	}
	return release, nil
}
