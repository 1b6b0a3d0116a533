// Package gotest runs `go test -v` for the test target and, when it fails,
// ends with a digest: each failed test with the lines it logged. A failure's
// reason is then in the last screen of the output, which is often all a CI
// log keeps, rather than minutes of scroll above it.
package gotest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Run runs `go test args…` (args should include -v), streams its output to
// out and, if it fails, writes the digest of its failures after it.
func Run(out io.Writer, args ...string) error {
	cmd := exec.Command("go", append([]string{"test"}, args...)...)
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running go test: %w", err)
	}
	d := NewDigest()
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		fmt.Fprintln(out, sc.Text())
		d.Line(sc.Text())
	}
	_, _ = io.Copy(out, pipe) // a line too long for the scanner: passed on as it is
	err = cmd.Wait()
	if err != nil {
		d.Write(out)
		return fmt.Errorf("running \"go test %s\": %w", strings.Join(args, " "), err)
	}
	return nil
}

// Digest follows `go test -v` output and keeps, per test, the lines it
// logged (file_test.go:NN: …, with their continuation lines).
type Digest struct {
	current string
	logged  map[string][]string
	failed  []string
	inLog   bool
}

func NewDigest() *Digest { return &Digest{logged: map[string][]string{}} }

var (
	runLine  = regexp.MustCompile(`^=== (RUN|CONT|NAME)\s+(\S+)`)
	failLine = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	logLine  = regexp.MustCompile(`^\s+[\w.-]+\.go:\d+: `)
	pkgFail  = regexp.MustCompile(`^(FAIL|ok|PASS)\b`)
)

// Line takes one line of the output.
func (d *Digest) Line(s string) {
	switch {
	case runLine.MatchString(s):
		d.current, d.inLog = runLine.FindStringSubmatch(s)[2], false
	case failLine.MatchString(s):
		d.failed = append(d.failed, failLine.FindStringSubmatch(s)[1])
		d.inLog = false
	case logLine.MatchString(s) && d.current != "":
		d.logged[d.current] = append(d.logged[d.current], strings.TrimSpace(s))
		d.inLog = true
	case d.inLog && strings.HasPrefix(s, "        "):
		// A multi-line message goes on, indented further.
		l := d.logged[d.current]
		l[len(l)-1] += "\n      " + strings.TrimSpace(s)
	case pkgFail.MatchString(s) || strings.HasPrefix(s, "=== "):
		d.inLog = false
	default:
		d.inLog = false
	}
}

// Failed lists the failed tests that are not failed only through a failed
// subtest: the ones to look at.
func (d *Digest) Failed() []string {
	var out []string
	for _, name := range d.failed {
		if len(d.logged[name]) == 0 && d.hasFailedChild(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func (d *Digest) hasFailedChild(name string) bool {
	for _, f := range d.failed {
		if strings.HasPrefix(f, name+"/") {
			return true
		}
	}
	return false
}

// digestLines is how many of a failed test's last logged lines are shown.
const digestLines = 25

// Write writes the digest: nothing if no test failed (a build error is
// already the last thing printed).
func (d *Digest) Write(w io.Writer) {
	failed := d.Failed()
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d failed test(s), with the last lines each logged:\n", len(failed))
	for _, name := range failed {
		lines := d.logged[name]
		fmt.Fprintf(w, "--- %s\n", name)
		if len(lines) > digestLines {
			fmt.Fprintf(w, "    (%d earlier lines above)\n", len(lines)-digestLines)
			lines = lines[len(lines)-digestLines:]
		}
		for _, l := range lines {
			if len(l) > 600 {
				l = l[:600] + " …"
			}
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}
