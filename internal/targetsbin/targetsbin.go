// Package targetsbin runs termlab's mage targets from one compiled binary.
//
// mage compiles the magefile and everything it imports before it runs
// anything, printing nothing: on a new machine that was minutes of silence.
// So magefiles/ holds only a thin magefile that imports this package (the
// standard library and two small termlab packages, seconds to compile), and
// the targets live in magefiles/targets. Main compiles them, with progress,
// into .termlab/bin/targets-<key>, the key a hash of the sources, and then
// replaces the thin magefile's process with that binary: the same process,
// arguments and environment, so mage's -l, -h and -v, its flag checks and
// its Ctrl-C handling are the targets' own generated main's.
package targetsbin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/flock"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/sourcekey"
)

// Dir is the targets' magefile folder, relative to the repository root.
const Dir = "magefiles/targets"

// keyFormat changes when what goes into the key changes.
const keyFormat = "targetsbin/1"

// tickEvery is how often a compile says how far it has got.
const tickEvery = 5 * time.Second

// Main compiles the targets if this checkout has no binary for its
// sources, then execs it with this process's arguments. It returns only
// by exiting: 1 when the targets cannot be compiled or run.
func Main() {
	log := progress.New(os.Stderr)
	exe, err := Ensure(context.Background(), log)
	if err == nil {
		err = syscall.Exec(exe, append([]string{exe}, os.Args[1:]...), os.Environ())
		err = fmt.Errorf("running the compiled targets %s: %w", exe, err)
	}
	log.Warnf("%v", err)
	os.Exit(1)
}

// Ensure returns the path of the targets binary for the checkout around the
// working directory, compiling it first when its sources changed.
func Ensure(ctx context.Context, log *progress.Logger) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	// The checkout mage runs in, whatever TERMLAB_ROOT names: its sources
	// are the targets to run.
	root, err := project.RootAbove(wd)
	if err != nil {
		return "", err
	}
	key, err := Key(root, os.Getenv)
	if err != nil {
		return "", fmt.Errorf("hashing the targets' sources: %w", err)
	}
	bin := filepath.Join(project.StateDir(root), "bin")
	exe := filepath.Join(bin, "targets-"+key)
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("making %s: %w", bin, err)
	}
	// One compile per checkout at a time: mage writes its generated main
	// into Dir while it compiles.
	unlock, err := flock.Acquire(ctx, filepath.Join(bin, ".compile.lock"), func(holder string) {
		log.Infof("go tool mage (pid %s) is compiling this checkout's targets; waiting for it", holder)
	})
	if err != nil {
		return "", fmt.Errorf("taking the compile lock: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(exe); err == nil {
		return exe, nil // compiled while we waited
	}
	done := log.Step(fmt.Sprintf("compiling termlab's targets into %s (only when the sources changed; on a new machine it downloads the modules and compiles about 800 packages: minutes)", relTo(root, exe)))
	tmp := exe + fmt.Sprintf(".%d.tmp", os.Getpid())
	err = Compile(ctx, root, tmp, Platform{}, log)
	if err == nil {
		err = os.Rename(tmp, exe)
	}
	done(err)
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	prune(bin, filepath.Base(exe))
	return exe, nil
}

// Compile runs `go tool mage -d magefiles/targets -compile out` in root
// with GOFLAGS=-v, printing every tickEvery how many modules it downloaded
// and packages it compiled; lines that are neither (compile errors) pass
// through to the log at once.
func Compile(ctx context.Context, root, out string, p Platform, log *progress.Logger) error {
	args := []string{"tool", "mage", "-d", Dir, "-compile", out}
	if p.GOOS != "" {
		// mage's flags, not GOOS/GOARCH: those would cross-compile mage itself.
		args = append(args, "-goos", p.GOOS, "-goarch", p.GOARCH)
	}
	cmd := exec.CommandContext(ctx, goCommand(), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -v"))
	if p.Static {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var c Counter
	var other []string
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			if line := sc.Text(); !c.Add(line) {
				other = append(other, line)
				log.Infof("  %s", line)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	stop := log.Every(tickEvery, c.String)
	err := cmd.Run()
	pw.Close()
	<-read
	stop()
	if err != nil {
		return fmt.Errorf("go tool mage -d %s -compile: %w%s", Dir, err, tail(other, 20))
	}
	return nil
}

// Platform is what a binary is compiled for; the zero value is this machine
// with its Go defaults.
type Platform struct {
	GOOS, GOARCH string
	// Static builds without cgo (a binary for another machine).
	Static bool
}

// Counter counts what `go build -v` says: modules downloaded and packages
// compiled.
type Counter struct {
	mu                  sync.Mutex
	downloads, packages int
	latest              string
}

// Add counts one line of output and reports whether it was a download or
// a package; other lines (errors, mage's own words) are not counted.
func (c *Counter) Add(line string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mod, ok := strings.CutPrefix(line, "go: downloading "); ok {
		c.downloads++
		c.latest = mod
		return true
	}
	if isImportPath(line) {
		c.packages++
		c.latest = line
		return true
	}
	return false
}

// String is the progress line.
func (c *Counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downloads == 0 && c.packages == 0 {
		return "… compiling the targets: resolving the packages"
	}
	latest := "latest " + c.latest
	if c.latest == mainPackage {
		latest = "now the targets' main package, then linking: about 15 s"
	}
	return fmt.Sprintf("… compiling the targets: %d modules downloaded, %d packages compiled (%s)", c.downloads, c.packages, latest)
}

// mainPackage is how `go build -v` names the package of files given by
// name: mage's generated main with the targets, compiled and linked last.
const mainPackage = "command-line-arguments"

// isImportPath: `go build -v` prints each package it compiles as its bare
// import path ("fmt", "k8s.io/client-go/rest"); errors have spaces or colons.
func isImportPath(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t:#") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./-_~+", r)) {
			return false
		}
	}
	return true
}

// Key hashes what the compiled targets depend on: the checkout's sources
// (internal/sourcekey), with this key's format.
func Key(root string, getenv func(string) string) (string, error) {
	return sourcekey.Of(root, keyFormat, getenv)
}

// prune removes the binaries of earlier sources (a running one keeps its
// file until it ends) and leftovers of cut compiles.
func prune(bin, keep string) {
	entries, _ := os.ReadDir(bin)
	for _, e := range entries {
		if n := e.Name(); n != keep && strings.HasPrefix(n, "targets-") {
			_ = os.Remove(filepath.Join(bin, n))
		}
	}
}

// goCommand is the go mage itself uses (-gocmd), else go.
func goCommand() string {
	if g := os.Getenv("MAGEFILE_GOCMD"); g != "" {
		return g
	}
	return "go"
}

func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func tail(lines []string, n int) string {
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return ":\n" + strings.Join(lines, "\n")
}
