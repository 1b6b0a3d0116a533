//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
)

// terminal is one side of a pseudo-terminal whose output is kept and searched.
type terminal struct {
	f    *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	more chan struct{}
}

func newTerminal(f *os.File) *terminal {
	t := &terminal{f: f, more: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				t.mu.Lock()
				t.out.Write(buf[:n])
				t.mu.Unlock()
				select {
				case t.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				close(t.more)
				return
			}
		}
	}()
	return t
}

// await waits until re matches the output after offset from, and returns
// the submatches and the offset after the match.
func (t *terminal) await(tt *testing.T, re *regexp.Regexp, from int, within time.Duration) ([]string, int) {
	tt.Helper()
	deadline := time.After(within)
	for {
		t.mu.Lock()
		text := t.out.String()
		t.mu.Unlock()
		if from > len(text) {
			from = len(text)
		}
		if loc := re.FindStringSubmatchIndex(text[from:]); loc != nil {
			var subs []string
			for i := 0; i < len(loc); i += 2 {
				if loc[i] < 0 {
					subs = append(subs, "")
					continue
				}
				subs = append(subs, text[from+loc[i]:from+loc[i+1]])
			}
			return subs, from + loc[1]
		}
		select {
		case _, ok := <-t.more:
			if !ok {
				tt.Fatalf("the terminal closed before %q appeared; output:\n%s", re, text[from:])
			}
		case <-deadline:
			tt.Fatalf("%q did not appear within %s; output:\n%s", re, within, text[from:])
		}
	}
}

func (t *terminal) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.String()
}

// TestByYou runs `go tool mage lab:finalizer -by=you` on one pseudo-terminal
// and plays the participant in an interactive bash on another: it types each
// command termlab asks for, but first, at the force delete, an ordinary
// delete, which termlab must name ("saw DELETE … with no gracePeriodSeconds
// …; this step wants gracePeriodSeconds 0") before taking the right one. The
// run must pass on the claims decided from what the API server recorded.
func TestByYou(t *testing.T) {
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := project.KubeconfigPath(root)

	// The participant's terminal: an interactive bash with the cluster's
	// kubeconfig and, first on PATH, the kubectl termlab offers (the
	// cluster's own version, from the control-plane node): a fresh machine has none.
	env := connect(t)
	kubectl, err := lab.Kubectl(context.Background(), env.ControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	shell := exec.Command("bash", "--norc", "--noprofile", "-i")
	shell.Dir = root
	shell.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PS1=participant$ ", "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
	shellPty, err := pty.Start(shell)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { shellPty.Close(); _ = shell.Process.Kill(); _ = shell.Wait() }()
	newTerminal(shellPty) // drained, so the shell never blocks on its output

	// termlab's terminal.
	termlab := exec.Command("go", "tool", "mage", "lab:finalizer", "-by=you")
	termlab.Dir = root
	termlabPty, err := pty.Start(termlab)
	if err != nil {
		t.Fatal(err)
	}
	defer termlabPty.Close()
	tl := newTerminal(termlabPty)
	exited := make(chan error, 1)
	go func() { exited <- termlab.Wait() }()

	var transcript strings.Builder
	say := func(format string, args ...any) {
		line := time.Now().UTC().Format("15:04:05.000") + " " + strings.TrimSpace(strings.ReplaceAll(sprintf(format, args...), "\r", ""))
		transcript.WriteString(line + "\n")
		t.Log(line)
	}
	prompt := regexp.MustCompile(`>>> Your turn \(([a-z-]+) ([a-z0-9-]+)\)\. In another terminal, type:\s*\r?\n\s*\r?\n\s+(\S[^\r\n]*)\r?\n`)
	wrongShown := regexp.MustCompile(`!!! Not this step's command: ([^\r\n]*)`)
	seen := regexp.MustCompile(`ok: seen ([^\r\n]*)`)
	typeIn := func(cmd string) {
		say("participant$ %s", cmd)
		if _, err := io.WriteString(shellPty, cmd+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	at, steps, wrongTyped := 0, 0, false
	for steps < 6 { // held and held-kwok: delete, force delete, remove the finalizer
		m, next := tl.await(t, prompt, at, 6*time.Minute)
		at = next
		kind, target, cmd := m[1], m[2], m[3]
		say("termlab asks (%s %s): %s", kind, target, cmd)
		if kind == "force-delete" && !wrongTyped {
			wrongTyped = true
			wrong := strings.Replace(cmd, " --force --grace-period=0", "", 1)
			typeIn(wrong)
			w, next := tl.await(t, wrongShown, at, time.Minute)
			at = next
			say("termlab: Not this step's command: %s", w[1])
			if !strings.Contains(w[1], "this step wants gracePeriodSeconds 0") {
				t.Errorf("the wrong command was named %q, want it to say the step wants gracePeriodSeconds 0", w[1])
			}
		}
		typeIn(cmd)
		s, next := tl.await(t, seen, at, time.Minute)
		at = next
		say("termlab: ok: seen %s", s[1])
		steps++
	}
	verdict := regexp.MustCompile(`lab:finalizer run (\S+): (pass|fail) \((\d+) claims\) — (\S+)`)
	v, _ := tl.await(t, verdict, at, 3*time.Minute)
	say("termlab: lab:finalizer run %s: %s (%s claims)", v[1], v[2], v[3])
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("go tool mage lab:finalizer -by=you: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Error("termlab did not exit after its verdict")
	}
	if !wrongTyped {
		t.Error("no force delete step was asked for")
	}
	if v[2] != "pass" {
		t.Errorf("verdict %s, want pass; see %s\n%s", v[2], v[4], tl.text())
	}
	// The wrong command is in the record, the claims cite the audit log.
	report, err := os.ReadFile(v[4])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(report, []byte("audit.jsonl")) {
		t.Errorf("%s does not cite audit.jsonl", v[4])
	}
	record, _ := os.ReadFile(filepath.Join(filepath.Dir(v[4]), "record.json"))
	if !bytes.Contains(record, []byte("a wrong command: saw DELETE pods/held")) {
		t.Errorf("record.json does not note the wrong command")
	}
	out := filepath.Join(filepath.Dir(v[4]), "by-you-transcript.txt")
	if err := os.WriteFile(out, []byte(transcript.String()), 0o644); err == nil {
		t.Logf("transcript: %s", out)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
