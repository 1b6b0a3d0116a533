package flock

import (
	"errors"
	"fmt"
	"os"
)

// errHeld is never returned on Windows: lockNB refuses first.
var errHeld = errors.New("held by another process")

// lockNB: termlab's locks guard lab runs and builds, which need Linux or
// macOS with Docker; cmd/termlab refuses those commands on Windows
// (internal/cli), so a lock taken here is a caller that slipped past that.
func lockNB(f *os.File) error {
	return fmt.Errorf("%w: termlab takes file locks only for labs, clusters and builds, which need Linux or macOS with Docker", errors.ErrUnsupported)
}

func unlock(*os.File) error { return nil }
