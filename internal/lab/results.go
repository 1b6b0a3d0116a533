package lab

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// NewRunID is a sortable, unique run id: UTC time and 4 random hex digits,
// e.g. 20261202-103000-1a2b. It is also a valid part of a namespace name.
func NewRunID(now time.Time) string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// pointLatest makes <labDir>/latest a relative symlink to the run folder.
func pointLatest(labDir, runID string) error {
	tmp := filepath.Join(labDir, ".latest-"+runID)
	_ = os.Remove(tmp)
	if err := os.Symlink(runID, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(labDir, "latest"))
}
