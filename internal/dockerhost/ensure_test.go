package dockerhost

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// fakeHost is a host in a temporary directory whose probe returns probes in
// turn (the last one again and again) and whose changes are only recorded.
type fakeHost struct {
	*host
	probes []Engine
	probed int
	did    []string
	log    bytes.Buffer
}

func newFakeHost(t *testing.T, probes ...Engine) *fakeHost {
	dir := t.TempDir()
	f := &fakeHost{probes: probes}
	f.host = &host{
		daemonJSON:     filepath.Join(dir, "docker", "daemon.json"),
		wrapperPath:    filepath.Join(dir, "libexec", "termlab-runc"),
		dockerdPIDFile: filepath.Join(dir, "docker.pid"),
		patience:       30 * time.Millisecond,
		pollEvery:      time.Millisecond,
		probe: func(context.Context) Engine {
			e := f.probes[min(f.probed, len(f.probes)-1)]
			f.probed++
			return e
		},
		canProvision: func() (bool, string) { return true, "" },
		lookPath:     func(string) (string, error) { return "/usr/sbin/dockerd", nil },
		missingCaps:  func() []string { return nil },
		installDocker: func(context.Context, *progress.Logger) error {
			f.did = append(f.did, "install docker.io")
			return nil
		},
		installWrapperBinary: func(_ context.Context, _, dst string) error {
			f.did = append(f.did, "install wrapper")
			return nil
		},
		startDockerd: func(context.Context) error {
			f.did = append(f.did, "start dockerd")
			return nil
		},
	}
	return f
}

func (f *fakeHost) ensure(ctx context.Context) (string, error) {
	return f.host.ensure(ctx, progress.New(&f.log), "/src/termlab")
}

// bare makes the fake a host with no dockerd and an incomplete bounding set,
// so every change would be needed.
func (f *fakeHost) bare() {
	f.lookPath = func(string) (string, error) { return "", errors.New("not found") }
	f.missingCaps = func() []string { return []string{"CAP_SYS_RESOURCE"} }
}

var (
	absent   = Engine{Err: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock", Socket: defaultSocket}
	answers  = Engine{Version: "26.1.5", Socket: defaultSocket}
	slow     = Engine{TimedOut: true, Err: "signal: killed", Socket: defaultSocket, SocketAccepts: true, DockerdPID: 4242}
	starting = Engine{Err: "Cannot connect to the Docker daemon", Socket: defaultSocket, DockerdPID: 4242}
	refuses  = Engine{Err: "permission denied", Socket: defaultSocket, SocketAccepts: true}
)

func TestEnsureNeverReplacesASlowEngine(t *testing.T) {
	f := newFakeHost(t, slow)
	f.bare() // even where everything would be installed
	_, err := f.ensure(context.Background())
	if err == nil {
		t.Fatal("a slow engine that never answers passed")
	}
	for _, want := range []string{"dockerd (pid 4242) runs but `docker version` did not answer within 15s", "will not install or start a second engine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if len(f.did) != 0 || f.probed < 2 {
		t.Fatalf("did %v after %d probes: want nothing, after waiting", f.did, f.probed)
	}
	if _, err := os.Stat(f.daemonJSON); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("daemon.json written under a running engine: %v", err)
	}
}

func TestEnsureWaitsForAnEngine(t *testing.T) {
	cases := []struct {
		name   string
		probes []Engine
		did    []string
	}{
		{"slow, then answers", []Engine{slow, slow, answers}, nil},
		{"starting, then answers", []Engine{starting, answers}, nil},
		{"stopping, then gone: start one", []Engine{starting, absent, answers}, []string{"start dockerd"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHost(t, tc.probes...)
			v, err := f.ensure(context.Background())
			if err != nil || v != "26.1.5" {
				t.Fatalf("%q %v", v, err)
			}
			if strings.Join(f.did, ",") != strings.Join(tc.did, ",") {
				t.Fatalf("did %v, want %v", f.did, tc.did)
			}
		})
	}
}

func TestEnsureRefusingEngineIsReportedAtOnce(t *testing.T) {
	f := newFakeHost(t, refuses)
	f.bare()
	_, err := f.ensure(context.Background())
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "second engine") {
		t.Fatalf("error %v", err)
	}
	if len(f.did) != 0 || f.probed != 1 {
		t.Fatalf("did %v after %d probes", f.did, f.probed)
	}
}

func TestEnsureDeclinedChangesNothingAndSaysWhatToDo(t *testing.T) {
	f := newFakeHost(t, absent)
	f.bare()
	f.noChanges = true
	if err := os.MkdirAll(filepath.Dir(f.daemonJSON), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.daemonJSON, []byte(userDaemonJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.ensure(context.Background())
	if err == nil {
		t.Fatal("declined changes passed")
	}
	msg := err.Error()
	for _, want := range []string{
		"no Docker engine answers: Cannot connect",
		NoHostChangesEnv + " is set, so termlab changed nothing",
		"1. install Debian's docker.io with apt-get: run `apt-get update -q && apt-get install -y -q --no-install-recommends docker.io iptables`",
		"2. install the termlab-runc runtime wrapper at " + f.wrapperPath,
		"cd /src/termlab && CGO_ENABLED=0 go build -trimpath -o " + f.wrapperPath + " ./cmd/termlab-runc",
		"3. make termlab-runc dockerd's default runtime in " + f.daemonJSON + " (its other keys kept",
		`"default-runtime": "termlab-runc"`,
		`"path": "` + f.wrapperPath + `"`,
		"4. start dockerd: run `dockerd >>" + DaemonLog,
		"unset " + NoHostChangesEnv,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(f.did) != 0 {
		t.Fatalf("did %v", f.did)
	}
	if b, _ := os.ReadFile(f.daemonJSON); string(b) != userDaemonJSON {
		t.Fatalf("daemon.json changed: %s", b)
	}
	onlyFiles(t, filepath.Dir(f.daemonJSON), "daemon.json")
}

func TestEnsureDeclinedNamesOnlyWhatIsMissing(t *testing.T) {
	f := newFakeHost(t, absent)
	f.noChanges = true
	f.missingCaps = func() []string { return []string{"CAP_SYS_RESOURCE"} }
	// The wrapper is installed and registered already: only dockerd is missing.
	if err := os.MkdirAll(filepath.Dir(f.wrapperPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.wrapperPath, []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := registerWrapper(f.daemonJSON, f.wrapperPath); err != nil {
		t.Fatal(err)
	}
	_, err := f.ensure(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1. start dockerd") || strings.Contains(err.Error(), "2.") {
		t.Fatalf("error %v", err)
	}
}

func TestEnsureProvisionsInOrderAndTellsIt(t *testing.T) {
	f := newFakeHost(t, absent, answers)
	f.bare()
	if err := os.MkdirAll(filepath.Dir(f.daemonJSON), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.daemonJSON, []byte(userDaemonJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := f.ensure(context.Background())
	if err != nil || v != "26.1.5" {
		t.Fatalf("%q %v", v, err)
	}
	if got := strings.Join(f.did, ","); got != "install docker.io,install wrapper,start dockerd" {
		t.Fatalf("did %s", got)
	}
	if got := readJSON(t, f.daemonJSON); got["default-runtime"] != WrapperRuntime || got["log-level"] != "warn" {
		t.Fatalf("daemon.json %v", got)
	}
	if b, _ := os.ReadFile(f.daemonJSON + BackupSuffix); string(b) != userDaemonJSON {
		t.Fatalf("backup %q", b)
	}
	for _, want := range []string{"termlab will install Debian's docker.io", "set " + NoHostChangesEnv + "=1", "kept in " + f.daemonJSON + BackupSuffix} {
		if !strings.Contains(f.log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, f.log.String())
		}
	}
}

func TestEnsureChangesNothingWhereItMayNot(t *testing.T) {
	f := newFakeHost(t, absent)
	f.bare()
	f.canProvision = func() (bool, string) { return false, "not root: install Docker" }
	if _, err := f.ensure(context.Background()); err == nil || !strings.Contains(err.Error(), "not root") {
		t.Fatalf("error %v", err)
	}
	if len(f.did) != 0 {
		t.Fatalf("did %v", f.did)
	}
}

func TestEnsureStopsWithItsContext(t *testing.T) {
	f := newFakeHost(t, slow)
	f.bare()
	f.patience = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	f.probe = func(context.Context) Engine {
		f.probed++
		if f.probed == 3 {
			cancel()
		}
		return slow
	}
	if _, err := f.ensure(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if len(f.did) != 0 {
		t.Fatalf("did %v", f.did)
	}
}
