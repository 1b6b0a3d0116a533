// Package dockerhost makes sure a Docker engine answers and can run the
// privileged containers kind needs. On a Linux host where we are root and apt
// exists, it installs Debian's docker.io and starts dockerd by hand (these hosts
// have no systemd); elsewhere, or with TERMLAB_NO_HOST_CHANGES set, it changes
// nothing and says what is missing and what to do instead.
package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/capfilter"
	"github.com/termlab/termlab/internal/ownbuild"
	"github.com/termlab/termlab/internal/progress"
)

const (
	// DaemonLog is where a dockerd we start writes its log.
	DaemonLog = "/var/log/termlab-dockerd.log"
	// PIDFile records the pid of a dockerd we started, so we only ever stop our own.
	PIDFile = "/run/termlab-dockerd.pid"
	// WrapperPath is where the capability-dropping runtime wrapper is installed.
	WrapperPath = "/usr/local/libexec/termlab/termlab-runc"
	// WrapperRuntime is the runtime name registered in daemon.json.
	WrapperRuntime = "termlab-runc"
	// PrebuiltWrapperFile is the wrapper binary a workshop bundle carries at its root.
	PrebuiltWrapperFile = "termlab-runc"
	// DaemonJSON is dockerd's configuration file, where the wrapper is
	// registered (the file as it was kept in DaemonJSON + BackupSuffix).
	DaemonJSON = "/etc/docker/daemon.json"
)

// NoHostChangesEnv, set to anything but a false value ("0", "false"),
// declines every change to this host: installing Docker, editing
// daemon.json, installing the runtime wrapper, starting dockerd. Each one
// becomes an error that says what to do instead, before anything changes.
const NoHostChangesEnv = "TERMLAB_NO_HOST_CHANGES"

// NoHostChanges reports whether NoHostChangesEnv declines host changes.
func NoHostChanges() bool { return noHostChanges(os.Getenv(NoHostChangesEnv)) }

func noHostChanges(v string) bool {
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b // a value that is not a boolean still declines
}

// CanProvision reports whether this host lets us install and start dockerd
// ourselves, and if not, why.
func CanProvision() (bool, string) {
	switch {
	case runtime.GOOS != "linux":
		return false, "not Linux: start Docker Desktop (or another engine) and run again"
	case os.Geteuid() != 0:
		return false, "not root: install Docker (e.g. `sudo apt-get install docker.io`), start it, add yourself to the docker group, and run again"
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && !isDefaultSocket(clientSocket(h)) {
		return false, "DOCKER_HOST=" + h + " names another engine than the one termlab would start (" + defaultSocket + "): start that engine, or unset DOCKER_HOST"
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		if _, err := exec.LookPath("dockerd"); err != nil {
			return false, "no apt-get and no dockerd: install a Docker engine with your package manager and start it"
		}
	}
	return true, ""
}

func isDefaultSocket(socket string) bool {
	return socket == defaultSocket || socket == "/run/docker.sock"
}

// Ensure returns the version of an answering engine, installing and starting
// one first if the host allows it. An engine that is there but slow is waited
// for, never replaced. The wrapper runtime is registered before dockerd starts
// when the host's capability bounding set is incomplete.
func Ensure(ctx context.Context, log *progress.Logger, repoRoot string) (string, error) {
	return newHost().ensure(ctx, log, repoRoot)
}

// host is the machine Ensure works on: where its files are, how its engine
// is probed, and the changes termlab may make to it. newHost is this
// machine; tests give temporary paths and fakes, so nothing real is touched.
type host struct {
	daemonJSON     string
	wrapperPath    string
	dockerdPIDFile string        // dockerd's own pid file
	noChanges      bool          // NoHostChangesEnv: say what to do, change nothing
	patience       time.Duration // how long an unresponsive engine is waited for
	pollEvery      time.Duration

	probe        func(context.Context) Engine
	canProvision func() (bool, string)
	lookPath     func(string) (string, error)
	missingCaps  func() []string

	installDocker        func(context.Context, *progress.Logger) error
	installWrapperBinary func(ctx context.Context, repoRoot, dst string) error
	startDockerd         func(context.Context) error
}

func newHost() *host {
	h := &host{
		daemonJSON:     DaemonJSON,
		wrapperPath:    WrapperPath,
		dockerdPIDFile: defaultPIDFile,
		noChanges:      NoHostChanges(),
		patience:       90 * time.Second,
		pollEvery:      500 * time.Millisecond,

		canProvision:         CanProvision,
		lookPath:             exec.LookPath,
		missingCaps:          hostMissingCaps,
		installDocker:        installDockerIO,
		installWrapperBinary: installWrapperBinary,
	}
	socket := clientSocket(os.Getenv("DOCKER_HOST"))
	h.probe = func(ctx context.Context) Engine {
		return probeEngine(ctx, socket, h.dockerdPIDFile, versionTimeout)
	}
	h.startDockerd = func(ctx context.Context) error {
		removeStalePIDFile(h.dockerdPIDFile)
		return startDockerd(ctx)
	}
	return h
}

func (h *host) ensure(ctx context.Context, log *progress.Logger, repoRoot string) (string, error) {
	e := h.probe(ctx)
	if e.State() == EngineUnresponsive {
		log.Infof("%s: waiting up to %s for it", e.Describe(), h.patience)
		e = h.waitWhileUnresponsive(ctx, e)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch e.State() {
	case EngineAnswers:
		return e.Version, nil
	case EngineUnresponsive:
		return "", fmt.Errorf("%s, nor in %s more: termlab will not install or start a second engine beside it. "+
			"Look at its log (%s if termlab started it), wait and run again, or stop it yourself", e.Describe(), h.patience, DaemonLog)
	case EngineRefuses:
		return "", fmt.Errorf("%s: termlab will not install or start a second engine beside it", e.Describe())
	}
	if ok, why := h.canProvision(); !ok {
		return "", fmt.Errorf("no Docker engine answers and termlab will not install one here: %s", why)
	}
	changes, err := h.changes(repoRoot)
	if err != nil {
		return "", err
	}
	if h.noChanges {
		return "", declined(e, changes)
	}
	log.Infof("%s: termlab will %s (set %s=1 to do it yourself instead)", e.Describe(), whats(changes), NoHostChangesEnv)
	for _, c := range changes {
		if err := c.apply(ctx, log); err != nil {
			return "", err
		}
	}
	if e = h.probe(ctx); e.State() != EngineAnswers {
		return "", fmt.Errorf("after termlab's changes (%s): %s", whats(changes), e.Describe())
	}
	return e.Version, nil
}

// waitWhileUnresponsive probes again until the engine answers, goes away or
// patience runs out, and returns the last facts.
func (h *host) waitWhileUnresponsive(ctx context.Context, e Engine) Engine {
	deadline := time.NewTimer(h.patience)
	defer deadline.Stop()
	tick := time.NewTicker(h.pollEvery)
	defer tick.Stop()
	for e.State() == EngineUnresponsive {
		select {
		case <-ctx.Done():
			return e
		case <-deadline.C:
			return e
		case <-tick.C:
			e = h.probe(ctx)
		}
	}
	return e
}

// change is one change to this host, and what a person does instead when
// NoHostChangesEnv declines it.
type change struct {
	what    string // what termlab would do
	instead string // the command or content that does it by hand
	apply   func(context.Context, *progress.Logger) error
}

// aptSteps install Debian's docker.io.
var aptSteps = [][]string{{"update", "-q"}, {"install", "-y", "-q", "--no-install-recommends", "docker.io", "iptables"}}

// changes lists, before anything changes, what this host needs for an
// engine to answer. Reading daemon.json fails here, not halfway.
func (h *host) changes(repoRoot string) ([]change, error) {
	var cs []change
	if _, err := h.lookPath("dockerd"); err != nil {
		var cmds []string
		for _, args := range aptSteps {
			cmds = append(cmds, "apt-get "+strings.Join(args, " "))
		}
		cs = append(cs, change{
			what:    "install Debian's docker.io with apt-get",
			instead: "run `" + strings.Join(cmds, " && ") + "`",
			apply:   h.installDocker,
		})
	}
	missing := h.missingCaps()
	if len(missing) == 0 {
		return append(cs, h.startChange()), nil
	}
	lacks := strings.Join(missing, ",")
	if !h.noChanges || !fileExists(h.wrapperPath) {
		cs = append(cs, change{
			what:    fmt.Sprintf("install the %s runtime wrapper at %s (the host's bounding set lacks %s)", WrapperRuntime, h.wrapperPath, lacks),
			instead: "run `" + wrapperCommand(repoRoot, h.wrapperPath) + "`",
			apply: func(ctx context.Context, log *progress.Logger) error {
				done := log.Step(fmt.Sprintf("installing the %s runtime (host bounding set lacks %s)", WrapperRuntime, lacks))
				err := h.installWrapperBinary(ctx, repoRoot, h.wrapperPath)
				done(err)
				return err
			},
		})
	}
	cfg, err := readDaemonConfig(h.daemonJSON)
	if err != nil {
		return nil, err
	}
	if _, changed, err := cfg.wrapperSettings(h.wrapperPath); err != nil {
		return nil, err
	} else if changed {
		what := fmt.Sprintf("create %s making %s dockerd's default runtime", h.daemonJSON, WrapperRuntime)
		if cfg.exists {
			what = fmt.Sprintf("make %s dockerd's default runtime in %s (its other keys kept, the file as it was kept in %s)", WrapperRuntime, h.daemonJSON, h.daemonJSON+BackupSuffix)
		}
		cs = append(cs, change{
			what:    what,
			instead: "merge these keys into " + h.daemonJSON + ":\n" + indent(WrapperSnippet(h.wrapperPath), "       "),
			apply: func(_ context.Context, log *progress.Logger) error {
				did, err := registerWrapper(h.daemonJSON, h.wrapperPath)
				if did != "" {
					log.Infof("%s: %s", WrapperRuntime, did)
				}
				return err
			},
		})
	}
	return append(cs, h.startChange()), nil
}

func (h *host) startChange() change {
	return change{
		what:    "start dockerd",
		instead: "run `dockerd >>" + DaemonLog + " 2>&1 &` (or `service docker start`) and wait for `docker version` to answer",
		apply: func(ctx context.Context, log *progress.Logger) error {
			done := log.Step("starting dockerd (log: " + DaemonLog + ")")
			err := h.startDockerd(ctx)
			done(err)
			return err
		},
	}
}

// wrapperCommand builds or copies the wrapper to dst by hand.
func wrapperCommand(repoRoot, dst string) string {
	if prebuilt := filepath.Join(repoRoot, PrebuiltWrapperFile); fileExists(prebuilt) {
		return fmt.Sprintf("install -D -m 0755 %s %s", prebuilt, dst)
	}
	return fmt.Sprintf("mkdir -p %s && cd %s && CGO_ENABLED=0 go build -trimpath -o %s ./cmd/termlab-runc", filepath.Dir(dst), repoRoot, dst)
}

// declined is the error when NoHostChangesEnv declines the changes: each
// one with what to do instead.
func declined(e Engine, cs []change) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, and %s is set, so termlab changed nothing on this host. To do it yourself:", e.Describe(), NoHostChangesEnv)
	for i, c := range cs {
		fmt.Fprintf(&b, "\n  %d. %s: %s", i+1, c.what, c.instead)
	}
	fmt.Fprintf(&b, "\nthen run again (or unset %s to let termlab do it)", NoHostChangesEnv)
	return errors.New(b.String())
}

func whats(cs []change) string {
	ws := make([]string, len(cs))
	for i, c := range cs {
		ws[i] = c.what
	}
	return strings.Join(ws, ", ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func hostMissingCaps() []string {
	b, err := capfilter.OwnBounding()
	if err != nil {
		return nil
	}
	return capfilter.Missing(b)
}

func installDockerIO(ctx context.Context, log *progress.Logger) error {
	logPath := filepath.Join(os.TempDir(), "termlab-apt-docker.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	done := log.Step("installing Debian's docker.io with apt-get (log: " + logPath + ")")
	stop := log.Ticker("installing docker.io", 30*time.Second)
	defer stop()
	for _, args := range aptSteps {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Run(); err != nil {
			err = fmt.Errorf("apt-get %s failed (see %s): %w", strings.Join(args, " "), logPath, err)
			done(err)
			return err
		}
	}
	done(nil)
	return nil
}

// InstallWrapper builds cmd/termlab-runc into WrapperPath and makes it dockerd's
// default runtime, keeping any other daemon.json settings (and the file as it
// was, in daemon.json + BackupSuffix). It ignores NoHostChangesEnv: Ensure
// is what asks.
func InstallWrapper(ctx context.Context, repoRoot string) error {
	if err := installWrapperBinary(ctx, repoRoot, WrapperPath); err != nil {
		return err
	}
	_, err := registerWrapper(DaemonJSON, WrapperPath)
	return err
}

// installWrapperBinary puts the wrapper at dst: the workshop bundle's
// prebuilt one (participants have no Go), or built from repoRoot.
func installWrapperBinary(ctx context.Context, repoRoot, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if prebuilt := filepath.Join(repoRoot, PrebuiltWrapperFile); fileExists(prebuilt) {
		if err := copyExecutable(prebuilt, dst); err != nil {
			return fmt.Errorf("installing the runtime wrapper from %s: %w", prebuilt, err)
		}
		return nil
	}
	if err := ownbuild.Build(ctx, repoRoot, "./cmd/termlab-runc", dst, ownbuild.Target{}); err != nil {
		return fmt.Errorf("building the runtime wrapper: %w", err)
	}
	return nil
}

// WithWrapperRuntime returns daemon.json settings with the wrapper registered
// as the default runtime; other keys and runtimes are kept.
func WithWrapperRuntime(cfg map[string]any, path string) map[string]any {
	out := map[string]any{}
	for k, v := range cfg {
		out[k] = v
	}
	runtimes, _ := out["runtimes"].(map[string]any)
	merged := map[string]any{}
	for k, v := range runtimes {
		merged[k] = v
	}
	merged[WrapperRuntime] = map[string]any{"path": path}
	out["runtimes"] = merged
	out["default-runtime"] = WrapperRuntime
	return out
}

// WrapperRegistered reports whether dockerd's default runtime is our wrapper.
func WrapperRegistered(ctx context.Context) bool {
	out, err := kindexec.Output(kindexec.CommandContext(ctx, "docker", "info", "--format", "{{.DefaultRuntime}}"))
	return err == nil && strings.TrimSpace(string(out)) == WrapperRuntime
}

func startDockerd(ctx context.Context) error {
	logf, err := os.OpenFile(DaemonLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening dockerd log: %w", err)
	}
	defer logf.Close()
	// Not CommandContext: dockerd must outlive this process (the cluster runs on it).
	cmd := exec.Command("dockerd")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = ownSession()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting dockerd: %w", err)
	}
	pid := cmd.Process.Pid
	_ = os.WriteFile(PIDFile, []byte(strconv.Itoa(pid)+"\n"), 0o644)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("dockerd exited at start (%v); last log lines:\n%s", err, tail(DaemonLog, 20))
		case <-deadline.C:
			return fmt.Errorf("dockerd (pid %d) did not answer within 90s; last log lines:\n%s", pid, tail(DaemonLog, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if _, err := ServerVersion(ctx); err == nil {
				_ = cmd.Process.Release()
				return nil
			}
		}
	}
}

// defaultPIDFile is where a dockerd serving the default socket records its pid.
const defaultPIDFile = "/var/run/docker.pid"

// removeStalePIDFile removes dockerd's pid file when no dockerd has that pid
// (left by a dockerd that was killed), which would otherwise stop it starting.
func removeStalePIDFile(path string) {
	if _, err := os.Stat(path); err != nil || dockerdFromPIDFile(path) != 0 {
		return
	}
	_ = os.Remove(path)
}

// ProbePrivileged starts a privileged container from image and removes it;
// it is the real test that kind's node containers can run here.
func ProbePrivileged(ctx context.Context, image string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := kindexec.Output(kindexec.CommandContext(ctx, "docker", "run", "-d", "--privileged", "--label", "termlab.dev/probe=true", image))
	if err != nil {
		return fmt.Errorf("starting a privileged container from %s: %w", image, err)
	}
	id := strings.TrimSpace(string(out))
	return kindexec.CommandContext(ctx, "docker", "rm", "-f", id).Run()
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// copyExecutable copies src to dst (mode 0755) through a temporary file, so
// a dockerd using dst never sees half a binary.
func copyExecutable(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
