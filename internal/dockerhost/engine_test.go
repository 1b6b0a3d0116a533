package dockerhost

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestEngineState(t *testing.T) {
	const sock = "/var/run/docker.sock"
	cases := []struct {
		name     string
		e        Engine
		want     EngineState
		describe string
	}{
		{"answers", Engine{Version: "26.1.5"}, EngineAnswers, "Docker 26.1.5 answers"},
		{"slow, dockerd runs", Engine{TimedOut: true, Socket: sock, SocketAccepts: true, DockerdPID: 42}, EngineUnresponsive, "dockerd (pid 42) runs but `docker version` did not answer within 15s"},
		{"slow, socket accepts", Engine{TimedOut: true, Socket: sock, SocketAccepts: true}, EngineUnresponsive, "an engine on " + sock + " runs but `docker version` did not answer"},
		{"slow, nothing seen", Engine{TimedOut: true, Socket: sock}, EngineUnresponsive, "check DOCKER_HOST"},
		{"dockerd starting", Engine{Err: "Cannot connect to the Docker daemon", DockerdPID: 42}, EngineUnresponsive, "starting or stopping"},
		{"socket accepts, fails at once", Engine{Err: "client version 1.52 is too new", Socket: sock, SocketAccepts: true}, EngineRefuses, "but `docker version` fails: client version"},
		{"permission denied", Engine{Err: "permission denied while trying to connect", Socket: sock, DockerdPID: 42, SocketDenied: true}, EngineRefuses, "docker group"},
		{"nothing", Engine{Err: "Cannot connect to the Docker daemon", Socket: sock}, EngineAbsent, "no Docker engine answers: Cannot connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.State(); got != tc.want {
				t.Fatalf("state %s, want %s", got, tc.want)
			}
			if d := tc.e.Describe(); !strings.Contains(d, tc.describe) {
				t.Fatalf("describe %q lacks %q", d, tc.describe)
			}
		})
	}
}

func TestClientSocket(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  defaultSocket,
		"unix:///run/user/1000/docker.sock": "/run/user/1000/docker.sock",
		"tcp://10.0.0.1:2375":               "",
		"ssh://me@host":                     "",
	} {
		if got := clientSocket(in); got != want {
			t.Errorf("clientSocket(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSocketAccepts(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.sock")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stale := filepath.Join(dir, "stale.sock")
	sl, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	sl.SetUnlinkOnClose(false) // what a killed dockerd leaves
	sl.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatal(err)
	}
	if accepts, denied := dialSocket(live); !accepts || denied {
		t.Error("a listening socket does not accept")
	}
	for _, s := range []string{stale, filepath.Join(dir, "none.sock"), ""} {
		if accepts, denied := dialSocket(s); accepts || denied {
			t.Errorf("a stale or missing socket %q: accepts %v, denied %v", s, accepts, denied)
		}
	}
}

func TestDockerdFromPIDFile(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self.pid") // this test's pid: a process, but not dockerd
	if err := os.WriteFile(self, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid := dockerdFromPIDFile(self); pid != 0 {
		t.Fatalf("the test itself taken for dockerd")
	}
	if pid := dockerdFromPIDFile(filepath.Join(dir, "none.pid")); pid != 0 {
		t.Fatal("a missing pid file names a dockerd")
	}
}

func TestNoHostChanges(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": true} {
		if got := noHostChanges(v); got != want {
			t.Errorf("%s=%q: %v, want %v", NoHostChangesEnv, v, got, want)
		}
	}
}
