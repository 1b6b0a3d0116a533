// Package gobuild builds static binaries of third-party Go commands from the Go
// module proxy alone: it writes a scratch module (requires, replaces, optional
// generated main packages) under the user cache directory and runs `go build` in it.
//
// A build is keyed by its inputs (Recipe.Key). The output directory keeps a stamp
// (gobuild.json) of the build that produced its binaries, so a second Build of the
// same recipe is a stat or two. Every Build, cached or not, is appended to
// builds.jsonl in the cache root for measurements.
//
// The recipes for the offline node image (Kubernetes, etcd, CoreDNS, crictl, kwok)
// are in recipes.go, their versions in versions.go.
package gobuild

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/termlab/termlab/internal/flock"
	"github.com/termlab/termlab/internal/progress"
)

// Recipe says what to build. The recipe functions in recipes.go return filled ones.
type Recipe struct {
	Name    string            // "kubernetes", "etcd", ...: names the scratch module and the output dir
	Version string            // the component's version, for names and records
	Require map[string]string // module path -> version
	// Replace maps a module path to "module version" (a published module, never a directory).
	Replace map[string]string
	// MainFiles are generated source files of the scratch module: relative path
	// (e.g. "etcd/main.go") -> source. Build them by listing "./etcd" in Packages.
	MainFiles map[string]string
	// Packages are the main packages to build: import paths, or "./dir" for a
	// generated one. Binary names follow `go build -o dir/` (see Binaries).
	Packages []string
	Tags     []string // build tags
	LDFlags  string   // the -ldflags value; see LDFlags
	// Env is added to the go command's environment after the defaults
	// (CGO_ENABLED=0, GOFLAGS=-mod=mod ...), so it can override them.
	Env []string
	// Checks run after a fresh build; a failing check fails the build and writes no stamp.
	// They are not part of the key: they do not change what is built.
	Checks []Check
}

// Check runs a built binary and wants its combined output to contain Want.
type Check struct {
	Binary string // a name from Binaries()
	Args   []string
	Want   string
}

// Binaries returns the names of the binaries the recipe produces, in Packages order.
func (r Recipe) Binaries() []string {
	names := make([]string, len(r.Packages))
	for i, p := range r.Packages {
		names[i] = binaryName(p)
	}
	return names
}

func (r Recipe) String() string { return r.Name + " " + r.Version }

// Validate reports a recipe that cannot be built.
func (r Recipe) Validate() error {
	if r.Name == "" || r.Version == "" {
		return errors.New("gobuild: recipe needs a Name and a Version")
	}
	if strings.ContainsAny(r.Name+r.Version, `/\ `) {
		return fmt.Errorf("gobuild: recipe %s: name and version must not contain slashes or spaces", r)
	}
	if len(r.Packages) == 0 {
		return fmt.Errorf("gobuild: recipe %s has no Packages", r)
	}
	seen := map[string]string{}
	for _, p := range r.Packages {
		n := binaryName(p)
		if prev, dup := seen[n]; dup {
			return fmt.Errorf("gobuild: recipe %s: %s and %s both build a binary named %q", r, prev, p, n)
		}
		seen[n] = p
	}
	for rel := range r.MainFiles {
		if filepath.IsAbs(rel) || rel != filepath.Clean(rel) || strings.HasPrefix(rel, "..") ||
			rel == "go.mod" || rel == "go.sum" || rel == logName {
			return fmt.Errorf("gobuild: recipe %s: main file %q must be a clean relative path other than go.mod, go.sum, %s", r, rel, logName)
		}
	}
	for m, v := range r.Replace {
		if len(strings.Fields(v)) != 2 {
			return fmt.Errorf("gobuild: recipe %s: replace %s => %q must be \"module version\"", r, m, v)
		}
	}
	for _, c := range r.Checks {
		if _, ok := seen[c.Binary]; !ok {
			return fmt.Errorf("gobuild: recipe %s: check runs %q, which the recipe does not build", r, c.Binary)
		}
	}
	return nil
}

// Toolchain is the part of the build environment that changes the binaries besides the recipe.
type Toolchain struct {
	GoVersion string `json:"go_version"` // "go1.26.8"
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
}

// keySchema changes whenever Build changes how it turns a recipe into binaries.
const keySchema = 1

// buildFlags are the flags every go build gets; they are part of the key.
var buildFlags = []string{"-trimpath"}

// baseEnv is the environment every go command gets before Recipe.Env; part of the key.
var baseEnv = []string{
	"CGO_ENABLED=0",
	// -mod=mod: let go build complete go.sum. -buildvcs=false: the scratch module has no VCS.
	"GOFLAGS=-mod=mod -buildvcs=false",
	// Build with the toolchain that is installed: it is the one in the key, and a
	// toolchain switch would be a download nobody asked for.
	"GOTOOLCHAIN=local",
	"GOWORK=off",
}

// Key is the hex SHA-256 of everything that determines the binaries: the recipe
// (minus Checks), the build flags and environment Build adds, and the toolchain.
// Packages and Tags are sets: their order does not matter.
func (r Recipe) Key(tc Toolchain) string {
	pkgs := append([]string(nil), r.Packages...)
	sort.Strings(pkgs)
	tags := append([]string(nil), r.Tags...)
	sort.Strings(tags)
	in := struct {
		Schema     int
		Name       string
		Version    string
		Require    map[string]string
		Replace    map[string]string
		MainFiles  map[string]string
		Packages   []string
		Tags       []string
		LDFlags    string
		Env        []string
		BuildFlags []string
		BaseEnv    []string
		Toolchain  Toolchain
	}{keySchema, r.Name, r.Version, r.Require, r.Replace, r.MainFiles, pkgs, tags, r.LDFlags, r.Env, buildFlags, baseEnv, tc}
	b, err := json.Marshal(in) // maps marshal with sorted keys: the encoding is canonical
	if err != nil {
		panic(err) // only strings, maps and slices of strings
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Binary is one built file.
type Binary struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Size int64  `json:"size_bytes"`
}

// Record describes one Build call. The stamp in the output directory (gobuild.json)
// is the Record of the build that produced its binaries; builds.jsonl in the cache
// root has one Record per call, cached or not.
type Record struct {
	Recipe          string    `json:"recipe"`
	Version         string    `json:"version"`
	Key             string    `json:"key"`
	Cached          bool      `json:"cached"`
	Started         time.Time `json:"started"`
	DurationSeconds float64   `json:"duration_seconds"`
	TidySeconds     float64   `json:"tidy_seconds,omitempty"`
	BuildSeconds    float64   `json:"build_seconds,omitempty"`
	Toolchain
	CPUs     int      `json:"cpus"`
	OutDir   string   `json:"out_dir"`
	Binaries []Binary `json:"binaries"`
	// PID is the process that asked for the build: the journal is shared
	// by every termlab process on the machine, and a measurement counts its own.
	PID int `json:"pid,omitempty"`
}

// Result is what Build did.
type Result struct {
	Record
	// Built is the record of the build that produced the binaries: the same as
	// Record for a fresh build, the stamp's for a cache hit.
	Built Record
}

// Path returns the path of the named binary.
func (res Result) Path(name string) string {
	for _, b := range res.Binaries {
		if b.Name == name {
			return b.Path
		}
	}
	return ""
}

const (
	stampName  = "gobuild.json"
	logName    = "build.log"
	recordsLog = "builds.jsonl"
)

// DefaultCacheRoot is os.UserCacheDir()/termlab: outside the repository, so a fresh
// CI clone on the same machine finds what an earlier run built.
func DefaultCacheRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("gobuild: no user cache directory: %w", err)
	}
	return filepath.Join(dir, "termlab"), nil
}

// BinDir is the conventional output directory of a recipe:
// os.UserCacheDir()/termlab/bin/<name>-<version>.
func BinDir(r Recipe) (string, error) {
	root, err := DefaultCacheRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", r.Name+"-"+r.Version), nil
}

// Builder builds recipes. The zero value is not usable; Build uses a default one.
type Builder struct {
	// CacheRoot holds gobuild/<name>-<version>/ (the scratch modules and their
	// build logs) and builds.jsonl.
	CacheRoot string
	Log       *progress.Logger
	// TickEvery is how often a running go build reports that it is alive; 30s if zero.
	TickEvery time.Duration
}

// Build builds r into outDir with the default cache root (DefaultCacheRoot).
// A nil log prints nothing.
func Build(ctx context.Context, r Recipe, outDir string, log *progress.Logger) (Result, error) {
	root, err := DefaultCacheRoot()
	if err != nil {
		return Result{}, err
	}
	return (&Builder{CacheRoot: root, Log: log}).Build(ctx, r, outDir)
}

// Build builds r's binaries into outDir, or returns at once when outDir's stamp
// says they were built from the same inputs and they are still there.
func (b *Builder) Build(ctx context.Context, r Recipe, outDir string) (res Result, err error) {
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	if b.CacheRoot == "" {
		return Result{}, errors.New("gobuild: Builder.CacheRoot is empty")
	}
	log := b.Log
	if log == nil {
		log = progress.New(io.Discard)
	}
	if outDir, err = filepath.Abs(outDir); err != nil {
		return Result{}, err
	}
	started := time.Now()
	done := log.Step(fmt.Sprintf("go build %s (%s)", r, strings.Join(r.Binaries(), ", ")))
	defer func() { done(err) }()

	env := append(append(append([]string(nil), os.Environ()...), baseEnv...), r.Env...)
	tc, err := toolchain(ctx, env)
	if err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: %w", r, err)
	}
	key := r.Key(tc)
	finish := func(rec Record, built Record) (Result, error) {
		rec.Started = started
		rec.DurationSeconds = time.Since(started).Seconds()
		if !rec.Cached {
			built = rec
			if err := writeJSON(filepath.Join(outDir, stampName), rec); err != nil {
				return Result{}, fmt.Errorf("gobuild: %s: writing stamp: %w", r, err)
			}
		}
		if err := appendRecord(filepath.Join(b.CacheRoot, recordsLog), rec); err != nil {
			log.Warnf("gobuild: %s: recording the build: %v", r, err)
		}
		return Result{Record: rec, Built: built}, nil
	}
	base := Record{Recipe: r.Name, Version: r.Version, Key: key, Toolchain: tc, CPUs: runtime.NumCPU(), OutDir: outDir, PID: os.Getpid()}

	if stamp, bins, ok := cached(outDir, key, r.Binaries()); ok {
		log.Infof("%s: cached in %s (key %.12s, built %s in %.0fs)", r, outDir, key, stamp.Started.Format(time.RFC3339), stamp.DurationSeconds)
		rec := base
		rec.Cached, rec.Binaries = true, bins
		return finish(rec, stamp)
	}

	dir := filepath.Join(b.CacheRoot, "gobuild", r.Name+"-"+r.Version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: %w", r, err)
	}
	unlock, err := flock.Acquire(ctx, dir+".lock", func(string) { log.Infof("%s: waiting for another build of it to finish", r) })
	if err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: locking %s: %w", r, dir, err)
	}
	defer unlock()
	// Whoever held the lock may just have built the same thing.
	if stamp, bins, ok := cached(outDir, key, r.Binaries()); ok {
		rec := base
		rec.Cached, rec.Binaries = true, bins
		return finish(rec, stamp)
	}

	log.Debugf("%s: key %s, scratch module %s", r, key, dir)
	if err := writeScratch(dir, r, goLineFor(tc.GoVersion)); err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: writing scratch module: %w", r, err)
	}
	logPath := filepath.Join(dir, logName)
	logf, err := os.Create(logPath)
	if err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: %w", r, err)
	}
	defer logf.Close()
	run := func(step string, args ...string) error {
		fmt.Fprintf(logf, "$ go %s\n", shellQuote(args))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // let go stop its compilers
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return &StepError{Recipe: r.String(), Step: step, Log: logPath, Tail: tailLines(logPath, 30), Err: err}
		}
		return nil
	}

	rec := base
	t := time.Now()
	if err := run("go mod tidy", "mod", "tidy"); err != nil {
		return Result{}, err
	}
	rec.TidySeconds = time.Since(t).Seconds()

	// The stamp goes first: binaries half-replaced by a failed build must not look cached.
	if err := os.Remove(filepath.Join(outDir, stampName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("gobuild: %s: %w", r, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: %w", r, err)
	}
	args := append([]string{"build"}, buildFlags...)
	if len(r.Tags) > 0 {
		args = append(args, "-tags", strings.Join(r.Tags, ","))
	}
	if r.LDFlags != "" {
		args = append(args, "-ldflags", r.LDFlags)
	}
	args = append(args, "-o", outDir+string(filepath.Separator))
	args = append(args, r.Packages...)
	t = time.Now()
	stopTick := log.Ticker("building "+r.String(), cmp.Or(b.TickEvery, 30*time.Second))
	err = run("go build", args...)
	stopTick()
	if err != nil {
		return Result{}, err
	}
	rec.BuildSeconds = time.Since(t).Seconds()

	if rec.Binaries, err = statBinaries(outDir, r.Binaries()); err != nil {
		return Result{}, fmt.Errorf("gobuild: %s: after go build: %w", r, err)
	}
	for _, c := range r.Checks {
		if err := runCheck(ctx, filepath.Join(outDir, c.Binary), c); err != nil {
			return Result{}, fmt.Errorf("gobuild: %s: check: %w", r, err)
		}
	}
	return finish(rec, Record{})
}

// StepError is a failed go command of a build.
type StepError struct {
	Recipe string   // "kubernetes v1.37.2"
	Step   string   // "go mod tidy", "go build"
	Log    string   // the full log
	Tail   []string // its last lines
	Err    error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("gobuild: %s: %s failed: %v (full log: %s); last lines:\n%s",
		e.Recipe, e.Step, e.Err, e.Log, strings.Join(e.Tail, "\n"))
}

func (e *StepError) Unwrap() error { return e.Err }

// toolchains remembers toolchain's answers by environment: each go env is
// 0.1 s, once per recipe in every cluster:up.
var toolchains sync.Map

// toolchain asks the go command that will build what it is and what it targets.
func toolchain(ctx context.Context, env []string) (Toolchain, error) {
	key := strings.Join(env, "\x00")
	if tc, ok := toolchains.Load(key); ok {
		return tc.(Toolchain), nil
	}
	tc, err := askToolchain(ctx, env)
	if err == nil {
		toolchains.Store(key, tc)
	}
	return tc, err
}

func askToolchain(ctx context.Context, env []string) (Toolchain, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "-json", "GOVERSION", "GOOS", "GOARCH")
	cmd.Env = env
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return Toolchain{}, fmt.Errorf("go env: %w%s", err, stderrOf(err))
	}
	var v struct{ GOVERSION, GOOS, GOARCH string }
	if err := json.Unmarshal(out, &v); err != nil {
		return Toolchain{}, fmt.Errorf("go env: %w", err)
	}
	return Toolchain{GoVersion: v.GOVERSION, GOOS: v.GOOS, GOARCH: v.GOARCH}, nil
}

// cached reports whether outDir's stamp has key and every binary is still there
// with the size the stamp recorded.
func cached(outDir, key string, names []string) (Record, []Binary, bool) {
	b, err := os.ReadFile(filepath.Join(outDir, stampName))
	if err != nil {
		return Record{}, nil, false
	}
	var stamp Record
	if json.Unmarshal(b, &stamp) != nil || stamp.Key != key {
		return Record{}, nil, false
	}
	want := map[string]int64{}
	for _, bin := range stamp.Binaries {
		want[bin.Name] = bin.Size
	}
	bins, err := statBinaries(outDir, names)
	if err != nil {
		return Record{}, nil, false
	}
	for _, bin := range bins {
		if size, ok := want[bin.Name]; !ok || size != bin.Size {
			return Record{}, nil, false
		}
	}
	return stamp, bins, true
}

func statBinaries(outDir string, names []string) ([]Binary, error) {
	bins := make([]Binary, 0, len(names))
	for _, n := range names {
		p := filepath.Join(outDir, n)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("%s is not an executable file", p)
		}
		bins = append(bins, Binary{Name: n, Path: p, Size: fi.Size()})
	}
	return bins, nil
}

// writeScratch rewrites the scratch module: go.mod and the main files. go.sum is
// kept (it only saves checksum lookups), everything else is removed.
func writeScratch(dir string, r Recipe, goLine string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != "go.sum" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(renderGoMod(r, goLine)), 0o644); err != nil {
		return err
	}
	for rel, src := range r.MainFiles {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func runCheck(ctx context.Context, bin string, c Check) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, c.Args...).CombinedOutput()
	line := strings.Join(append([]string{filepath.Base(bin)}, c.Args...), " ")
	if err != nil {
		return fmt.Errorf("%s: %w: %s", line, err, bytes.TrimSpace(out))
	}
	if !strings.Contains(string(out), c.Want) {
		return fmt.Errorf("%s printed %q, want it to contain %q", line, bytes.TrimSpace(out), c.Want)
	}
	return nil
}

func tailLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendRecord(path string, rec Record) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	// One write of one line: O_APPEND keeps concurrent writers' lines whole.
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// shellQuote renders args for the log, quoting those a reader could not split back.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
