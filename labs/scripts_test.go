package labs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/labtest"
)

// TestScriptsDoWhatTermlabDoes runs each kind of action of every lab's
// reference run through scripts/<lab>.sh, the way -by=script asks for it
// (`scripts/<lab>.sh <kind> <target>`, NS the run's namespace), with kubectl
// and docker replaced by fakes that write down what they were asked. Every
// command the script sends that changes something must be one of the
// commands termlab names as the action's equivalent. go tool mage test runs
// only some labs' scripts on the cluster (one run per action kind), so this
// is what keeps every other script honest between soaks.
func TestScriptsDoWhatTermlabDoes(t *testing.T) {
	tools := fakeTools(t)
	for _, d := range All {
		t.Run(d.Name, func(t *testing.T) {
			rec := labtest.Load(t, filepath.Join("..", "results", "reference", d.Name))
			acts := labtest.ActorActions(rec)
			if len(acts) == 0 {
				t.Fatal("the reference run has no action a script would do")
			}
			for _, a := range acts {
				if err := scriptDoes(t, tools, lab.ScriptPath("..", d.Name), rec, a); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// A script that leaves out what makes the action what it is, or lacks the
// action, fails.
func TestScriptsDoWhatTermlabDoesFailsAWrongScript(t *testing.T) {
	tools := fakeTools(t)
	rec := labtest.Load(t, filepath.Join("..", "results", "reference", "force"))
	acts := labtest.ActorActions(rec)
	if len(acts) != 1 || acts[0].Kind != evidence.ActionForceDelete {
		t.Fatalf("lab:force's reference actions %v, want one force-delete", acts)
	}
	for name, body := range map[string]string{
		"no --force":       `force-delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }`,
		"another pod":      `force-delete() { kubectl delete pod other -n "$NS" --force --grace-period=0 --wait=false; }`,
		"only reads":       `force-delete() { kubectl get pod "$1" -n "$NS"; }`,
		"no such action":   `delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }`,
		"the action fails": `force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; exit 1; }`,
	} {
		t.Run(name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "force.sh")
			text := "set -euo pipefail\n" + body + "\n" + `declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }` + "\n\"$@\"\n"
			if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
				t.Fatal(err)
			}
			err := scriptDoes(t, tools, script, rec, acts[0])
			if err == nil {
				t.Fatalf("a script with %s passed", name)
			}
			t.Log(err)
		})
	}
}

// fakeTools is a folder with kubectl and docker that write their arguments
// to $FAKE_LOG (NUL between words, RS after each command) and answer a
// pod's uid from $FAKE_DIR/uid-<pod> (lab:mount's script asks for it).
func fakeTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fake := `#!/usr/bin/env bash
{ printf '%s\0' "$(basename "$0")" "$@"; printf '\036'; } >>"$FAKE_LOG"
if [ "$(basename "$0")" = kubectl ] && [ "${1:-}" = get ] && [[ "$*" == *'{.metadata.uid}'* ]]; then cat "$FAKE_DIR/uid-$3"; fi
`
	for _, tool := range []string{"kubectl", "docker"} {
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scriptDoes runs the script's step for action a of the recorded run and
// says how what it sent differs from termlab's equivalent (nil: it does not).
func scriptDoes(t *testing.T, tools, script string, rec *evidence.Record, a evidence.Action) error {
	t.Helper()
	work := t.TempDir()
	for _, pod := range rec.Pods() {
		if uids := rec.UIDsOf(pod); len(uids) > 0 {
			if err := os.WriteFile(filepath.Join(work, "uid-"+pod), []byte(uids[0]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	log := filepath.Join(work, "log")
	cmd := exec.Command("bash", script, string(a.Kind), a.Target)
	cmd.Env = append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NS="+rec.Namespace, "KUBECONFIG="+filepath.Join(work, "no-kubeconfig"), "FAKE_LOG="+log, "FAKE_DIR="+work)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s %s: %v\n%s", filepath.Base(script), a.Kind, a.Target, err, out)
	}
	sent, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range commandsOf(a.Equivalent) {
		want[effectOf(c)] = true
	}
	changes := 0
	for _, c := range strings.Split(strings.TrimSuffix(string(sent), "\036"), "\036") {
		words := strings.Split(strings.TrimSuffix(c, "\x00"), "\x00")
		if c == "" || isRead(words) {
			continue
		}
		changes++
		if !want[effectOf(words)] {
			return fmt.Errorf("%s %s %s sent %q, which is not in termlab's equivalent %q", filepath.Base(script), a.Kind, a.Target, strings.Join(words, " "), a.Equivalent)
		}
	}
	if changes == 0 {
		return fmt.Errorf("%s %s %s changed nothing; termlab's equivalent is %q", filepath.Base(script), a.Kind, a.Target, a.Equivalent)
	}
	return nil
}

// isRead: a kubectl get, which a script may send to find what it acts on.
func isRead(words []string) bool {
	return len(words) > 1 && words[0] == "kubectl" && words[1] == "get"
}

// effectOf is a command reduced to what decides what it does, so a script
// may spell it its own way: kubectl's full resource names and --overwrite
// go, and of systemd-run only the unit, its working directory and the
// command it runs stay (the timers and descriptions are termlab's own).
func effectOf(words []string) string {
	var out []string
	systemdRun := false
	for i, w := range words {
		switch {
		case w == "--overwrite":
			continue
		case w == "apiservices.apiregistration.k8s.io":
			w = "apiservice"
		case w == "systemd-run":
			systemdRun = true
		case systemdRun && strings.HasPrefix(w, "-"):
			if !strings.HasPrefix(w, "--unit=") && !strings.HasPrefix(w, "--property=WorkingDirectory=") {
				continue
			}
		case systemdRun:
			return strings.Join(slices.Concat(out, words[i:]), "\x00")
		}
		out = append(out, w)
	}
	return strings.Join(out, "\x00")
}

// commandsOf splits an equivalent command line into its commands ("&&"
// between them) and their words, as sh would for the quoting termlab
// writes: '…' (with '\” inside), "…" and backslashes.
func commandsOf(line string) [][]string {
	var cmds [][]string
	var cmd []string
	var word strings.Builder
	inWord, single, double, escaped := false, false, false, false
	end := func() {
		if !inWord {
			return
		}
		if w := word.String(); w == "&&" {
			cmds, cmd = append(cmds, cmd), nil
		} else {
			cmd = append(cmd, w)
		}
		word.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case escaped:
			word.WriteRune(r)
			escaped = false
		case single:
			if r == '\'' {
				single = false
			} else {
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case double:
			if r == '"' {
				double = false
			} else {
				word.WriteRune(r)
			}
		case r == '\'':
			single, inWord = true, true
		case r == '"':
			double, inWord = true, true
		case r == ' ' || r == '\t':
			end()
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	end()
	return append(cmds, cmd)
}

func TestCommandsOf(t *testing.T) {
	got := commandsOf(`docker exec w systemd-run '--description=the pod'\''s volume' "a b" x\ y && kubectl patch p -p '{"a":null}'`)
	want := [][]string{{"docker", "exec", "w", "systemd-run", "--description=the pod's volume", "a b", "x y"}, {"kubectl", "patch", "p", "-p", `{"a":null}`}}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 2 || len(got[0]) != 7 {
		t.Fatalf("commandsOf: %q, want %q", got, want)
	}
}
