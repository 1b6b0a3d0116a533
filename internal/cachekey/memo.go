package cachekey

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// The node image's key hashes about 870 MB of inputs (the Kubernetes
// binaries, the root filesystem), 1.2 s on every cluster:up and lab run.
// A file's hash is remembered with its identity (device, inode, size,
// modification and change times), in ~/.cache/termlab/file-hashes.json, and
// taken from there while the identity is unchanged: any write changes the
// change time, which no one can set back.

// memoMin is the size from which a file's hash is remembered.
const memoMin = 1 << 20

type memoEntry struct {
	Identity string `json:"identity"`
	SHA256   string `json:"sha256"`
}

var memoMu sync.Mutex

func memoPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "termlab", "file-hashes.json"), nil
}

func readMemo() map[string]memoEntry {
	m := map[string]memoEntry{}
	p, err := memoPath()
	if err != nil {
		return m
	}
	if b, err := os.ReadFile(p); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// remembered returns the hash kept for path if its identity is unchanged.
func remembered(path, id string) (string, bool) {
	memoMu.Lock()
	defer memoMu.Unlock()
	e, ok := readMemo()[path]
	return e.SHA256, ok && e.Identity == id
}

// remember keeps path's hash (best effort: a failed write costs a rehash).
func remember(path, id, sum string) {
	memoMu.Lock()
	defer memoMu.Unlock()
	p, err := memoPath()
	if err != nil {
		return
	}
	m := readMemo()
	for k := range m {
		if _, err := os.Stat(k); err != nil {
			delete(m, k) // files that are gone
		}
	}
	m[path] = memoEntry{Identity: id, SHA256: sum}
	b, err := json.Marshal(m)
	if err != nil || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}
