package lab

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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

// credentialPatterns are what must never appear in a run folder.
var credentialPatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"PEM certificate", regexp.MustCompile(`BEGIN CERTIFICATE`)},
	{"PEM private key", regexp.MustCompile(`BEGIN (RSA |EC |OPENSSH |ENCRYPTED )?PRIVATE KEY`)},
	{"RSA key", regexp.MustCompile(`BEGIN RSA`)},
	{"kubeconfig client key", regexp.MustCompile(`client-key-data`)},
	{"kubeconfig client certificate", regexp.MustCompile(`client-certificate-data`)},
	{"kubeconfig CA data", regexp.MustCompile(`certificate-authority-data`)},
	{"token field", regexp.MustCompile(`(^|[^A-Za-z])token"?\s*:\s*"?[A-Za-z0-9._\-]{8,}`)},
	{"bearer token", regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._\-]{16,}`)},
	{"JSON web token", regexp.MustCompile(`eyJhbGciOi[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+`)},
}

// Leak is a credential-like string found in a file.
type Leak struct {
	File    string
	Pattern string
}

func (l Leak) String() string { return l.File + " (" + l.Pattern + ")" }

// ScanForCredentials reads every file under dir and reports each that holds
// something that looks like a certificate, key or token.
func ScanForCredentials(dir string) ([]Leak, error) {
	var leaks []Leak
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s for the credentials check: %w", path, err)
		}
		rel, _ := filepath.Rel(dir, path)
		for _, p := range credentialPatterns {
			if p.re.Match(b) {
				leaks = append(leaks, Leak{File: rel, Pattern: p.name})
			}
		}
		return nil
	})
	return leaks, err
}
