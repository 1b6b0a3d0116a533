// Package cachekey turns a build's inputs into a short, stable key, so a build
// whose inputs did not change is found again (as an image label or a file name).
package cachekey

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Key accumulates named inputs. The order of Add calls does not matter.
type Key struct {
	parts map[string]string
	err   error
}

// New returns an empty key.
func New() *Key { return &Key{parts: map[string]string{}} }

// Add records a named input value.
func (k *Key) Add(name, value string) *Key {
	k.parts[name] = value
	return k
}

// AddFile records the content hash of a file.
func (k *Key) AddFile(name, path string) *Key {
	h, err := hashFile(path)
	if err != nil && k.err == nil {
		k.err = fmt.Errorf("hashing input %s: %w", path, err)
	}
	return k.Add(name, h)
}

// AddTree records the content and mode of every regular file below dir.
func (k *Key) AddTree(name, dir string) *Key {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fh, err := hashFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o %s\n", rel, info.Mode().Perm(), fh)
		return nil
	})
	if err != nil && k.err == nil {
		k.err = fmt.Errorf("hashing input tree %s: %w", dir, err)
	}
	return k.Add(name, hex.EncodeToString(h.Sum(nil)))
}

// String returns the key: the first 16 hex digits of a sha256 over all inputs.
func (k *Key) String() string {
	names := make([]string, 0, len(k.parts))
	for n := range k.parts {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s=%s\n", n, k.parts[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Err reports the first input that could not be read.
func (k *Key) Err() error { return k.err }

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	abs, _ := filepath.Abs(path)
	id := identity(info)
	if id != "" {
		if sum, ok := remembered(abs, id); ok {
			return sum, nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if id != "" {
		remember(abs, id, sum)
	}
	return sum, nil
}
