// Package credscan finds what must never leave a run folder, a reference run
// or a workshop bundle: certificates, private keys, kubeconfig credentials,
// tokens, and the values of variables whose names say they are secret
// (DB_PASSWORD=…, "API_KEY":"…"). Runs scan before they write their reports,
// promotion to a reference and bundling scan again.
package credscan

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// pattern is one kind of credential. need is a literal every match
// contains, in lower case when fold (the pattern ignores case): the pattern
// runs only on a window around each place the literal is, from just before
// it to window bytes on, for a file of gigabytes holds the literal, if at
// all, far less often than it holds bytes. A pattern is re, or, where a
// regular expression would be too slow for how often its literal is found,
// at: a function that judges the literal found at b[i:j] itself.
type pattern struct {
	name string
	need string
	fold bool
	re   *regexp.Regexp
	at   func(b []byte, i, j int) bool
}

// credentialPatterns are what must never appear in a run folder.
var credentialPatterns = append([]pattern{
	{name: "PEM certificate", need: "BEGIN", re: regexp.MustCompile(`BEGIN CERTIFICATE`)},
	{name: "PEM private key", need: "BEGIN", re: regexp.MustCompile(`BEGIN (RSA |EC |OPENSSH |ENCRYPTED )?PRIVATE KEY`)},
	{name: "RSA key", need: "BEGIN", re: regexp.MustCompile(`BEGIN RSA`)},
	{name: "kubeconfig client key", need: "client-key-data", re: regexp.MustCompile(`client-key-data`)},
	{name: "kubeconfig client certificate", need: "client-certificate-data", re: regexp.MustCompile(`client-certificate-data`)},
	{name: "kubeconfig CA data", need: "certificate-authority-data", re: regexp.MustCompile(`certificate-authority-data`)},
	{name: "token field", need: "token", re: regexp.MustCompile(`(^|[^A-Za-z])token"?\s*:\s*"?[A-Za-z0-9._\-]{8,}`)},
	{name: "bearer token", need: "bearer", fold: true, re: regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._\-]{16,}`)},
	{name: "JSON web token", need: "eyJhbGciOi", re: regexp.MustCompile(`eyJhbGciOi[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+`)},
}, secretNamed()...)

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
		rel, _ := filepath.Rel(dir, path)
		found, err := file(path, rel)
		if err != nil {
			return fmt.Errorf("reading %s for the credentials check: %w", path, err)
		}
		leaks = append(leaks, found...)
		return nil
	})
	return leaks, err
}

// block is how much of a file is scanned at once: a lab:scale run's
// events.jsonl is gigabytes, and must not be read into memory whole.
const block = 4 << 20

// overlap is what a block keeps of the one before when no line ends in it:
// far longer than the shortest text any pattern matches.
const overlap = 4 << 10

// file scans the file a block at a time, each block ending at a line's end
// (the patterns match within a line), and reports each pattern once.
func file(path, name string) ([]Leak, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var leaks []Leak
	buf := make([]byte, 0, block+overlap)
	var lower []byte // the block in lower case, reused: a run folder is gigabytes
	for {
		n, err := io.ReadFull(f, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		end := err != nil // io.EOF or io.ErrUnexpectedEOF: the last block
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, err
		}
		// Scanned: up to the last line's end, and the rest begins the next
		// block; or, when no line ends here, all of it, and the next block
		// begins with its last overlap bytes again.
		scan, next := len(buf), len(buf)
		if !end {
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				scan, next = i+1, i+1
			} else {
				next = len(buf) - overlap
			}
		}
		for _, l := range scanBytes(name, buf[:scan], &lower) {
			if !seen[l.Pattern] {
				seen[l.Pattern] = true
				leaks = append(leaks, l)
			}
		}
		if end {
			return leaks, nil
		}
		buf = append(buf[:0], buf[next:]...)
	}
}

// window is how far past its literal a pattern's match is looked for: the
// longest match needs a few dozen bytes (a key, some spaces, a colon and
// 8–16 characters); a run of more spaces than this is not looked at.
const window = 256

// Bytes reports what in b, the content of file name, looks like a credential.
func Bytes(name string, b []byte) []Leak {
	var lower []byte
	return scanBytes(name, b, &lower)
}

// scanBytes is Bytes with the buffer for b in lower case passed in, so a
// scan of many blocks allocates it once. Each kind of leak is reported once,
// however many of its patterns match.
func scanBytes(name string, b []byte, lower *[]byte) []Leak {
	var leaks []Leak
	lowered := false
	found := map[string]bool{}
	for _, p := range credentialPatterns {
		if found[p.name] {
			continue
		}
		text := b
		if p.fold {
			if !lowered {
				*lower = lowerASCII((*lower)[:0], b)
				lowered = true
			}
			text = *lower
		}
		if matchNear(p, b, text) {
			found[p.name] = true
			leaks = append(leaks, Leak{File: name, Pattern: p.name})
		}
	}
	return leaks
}

// lowerASCII appends b with A–Z in lower case to dst. Only ASCII changes, so
// every byte keeps its offset (bytes.ToLower may change a non-ASCII
// character's length, and matchNear finds in one and matches in the other);
// every literal a pattern needs is ASCII.
func lowerASCII(dst, b []byte) []byte {
	dst = append(dst, b...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + ('a' - 'A')
		}
	}
	return dst
}

// matchNear runs p on b around each place its literal is found in text (b,
// or b in lower case), from the byte before it: every match holds the
// literal, so none is missed, and ^ in re still means the start of b only.
func matchNear(p pattern, b, text []byte) bool {
	need := []byte(p.need)
	for at := 0; ; {
		i := bytes.Index(text[at:], need)
		if i < 0 {
			return false
		}
		i += at
		at = i + len(need)
		if p.at != nil {
			if p.at(b, i, at) {
				return true
			}
			continue
		}
		if p.re.Match(b[max(i-1, 0):min(at+window, len(b))]) {
			return true
		}
	}
}
