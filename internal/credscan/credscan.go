// Package credscan finds what must never leave a run folder, a reference run
// or a workshop bundle: certificates, private keys, kubeconfig credentials
// and tokens. Runs scan before they write their reports, promotion to a
// reference and bundling scan again.
package credscan

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

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

// Dir reads every file under dir and reports each that holds something that
// looks like a certificate, key or token.
func Dir(dir string) ([]Leak, error) {
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
		leaks = append(leaks, Bytes(rel, b)...)
		return nil
	})
	return leaks, err
}

// Bytes reports what in b, the content of file name, looks like a credential.
func Bytes(name string, b []byte) []Leak {
	var leaks []Leak
	for _, p := range credentialPatterns {
		if p.re.Match(b) {
			leaks = append(leaks, Leak{File: name, Pattern: p.name})
		}
	}
	return leaks
}
