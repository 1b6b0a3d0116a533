// Package dockerhost makes sure a Docker engine answers and can run the
// privileged containers kind needs. On a Linux host where we are root and apt
// exists, it installs Debian's docker.io and starts dockerd by hand (these hosts
// have no systemd); elsewhere it changes nothing and says what is missing.
package dockerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
	daemonJSON          = "/etc/docker/daemon.json"
)

// ServerVersion returns the engine's version, or an error when no engine answers.
func ServerVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := kindexec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").SetStdout(&stdout).SetStderr(&stderr).Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("the Docker engine does not answer: %s", firstLine(msg))
	}
	return strings.TrimSpace(stdout.String()), nil
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
	if _, err := exec.LookPath("apt-get"); err != nil {
		if _, err := exec.LookPath("dockerd"); err != nil {
			return false, "no apt-get and no dockerd: install a Docker engine with your package manager and start it"
		}
	}
	return true, ""
}

// Ensure returns the version of an answering engine, installing and starting
// one first if the host allows it. The wrapper runtime is registered before
// dockerd starts when the host's capability bounding set is incomplete.
func Ensure(ctx context.Context, log *progress.Logger, repoRoot string) (string, error) {
	if v, err := ServerVersion(ctx); err == nil {
		return v, nil
	}
	ok, why := CanProvision()
	if !ok {
		return "", fmt.Errorf("no Docker engine answers and termlab will not install one here: %s", why)
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		if err := installDockerIO(ctx, log); err != nil {
			return "", err
		}
	}
	if missing := hostMissingCaps(); len(missing) > 0 {
		done := log.Step(fmt.Sprintf("registering %s runtime (host bounding set lacks %s)", WrapperRuntime, strings.Join(missing, ",")))
		err := InstallWrapper(ctx, repoRoot)
		done(err)
		if err != nil {
			return "", err
		}
	}
	// A dockerd that is still starting or shutting down answers nothing yet:
	// wait for it instead of starting a second one.
	if pid := runningDockerd(); pid != 0 {
		log.Infof("a dockerd (pid %d) is running but not answering yet: waiting for it", pid)
		if v, err := waitAnswerOrExit(ctx, pid, 90*time.Second); err == nil {
			return v, nil
		} else if runningDockerd() != 0 {
			return "", fmt.Errorf("dockerd pid %d neither answers nor exits: %w (see %s)", pid, err, DaemonLog)
		}
	}
	removeStalePIDFile(defaultPIDFile)
	done := log.Step("starting dockerd (log: " + DaemonLog + ")")
	err := startDockerd(ctx)
	done(err)
	if err != nil {
		return "", err
	}
	return ServerVersion(ctx)
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
	for _, args := range [][]string{{"update", "-q"}, {"install", "-y", "-q", "--no-install-recommends", "docker.io", "iptables"}} {
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
// default runtime, keeping any other daemon.json settings.
func InstallWrapper(ctx context.Context, repoRoot string) error {
	if err := os.MkdirAll(filepath.Dir(WrapperPath), 0o755); err != nil {
		return err
	}
	if prebuilt := filepath.Join(repoRoot, PrebuiltWrapperFile); fileExists(prebuilt) {
		// A workshop bundle ships it: participants have no Go.
		if err := copyExecutable(prebuilt, WrapperPath); err != nil {
			return fmt.Errorf("installing the runtime wrapper from %s: %w", prebuilt, err)
		}
	} else {
		if err := ownbuild.Build(ctx, repoRoot, "./cmd/termlab-runc", WrapperPath, ownbuild.Target{}); err != nil {
			return fmt.Errorf("building the runtime wrapper: %w", err)
		}
	}
	cfg := map[string]any{}
	if data, err := os.ReadFile(daemonJSON); err == nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("reading %s: %w", daemonJSON, err)
		}
	}
	merged := WithWrapperRuntime(cfg, WrapperPath)
	data, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(daemonJSON), 0o755); err != nil {
		return err
	}
	return os.WriteFile(daemonJSON, append(data, '\n'), 0o644)
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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

// runningDockerd returns the pid of the dockerd that owns the default pid file
// (and so the default socket), or 0. Other engines on other sockets don't count.
func runningDockerd() int {
	data, err := os.ReadFile(defaultPIDFile)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); pid > 0 && strings.TrimSpace(string(comm)) == "dockerd" {
		return pid
	}
	return 0
}

// waitAnswerOrExit waits until the engine answers (its version) or pid is gone.
func waitAnswerOrExit(ctx context.Context, pid int, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if v, err := ServerVersion(ctx); err == nil {
			return v, nil
		}
		if syscall.Kill(pid, 0) != nil {
			return "", fmt.Errorf("dockerd pid %d exited", pid)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// removeStalePIDFile removes dockerd's pid file when no dockerd has that pid
// (left by a dockerd that was killed), which would otherwise stop it starting.
func removeStalePIDFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); pid > 0 && strings.TrimSpace(string(comm)) == "dockerd" {
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
