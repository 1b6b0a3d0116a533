package dockerhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// versionTimeout bounds one `docker version`.
const versionTimeout = 15 * time.Second

// defaultSocket is where dockerd listens when started with no -H, and so
// the only socket a dockerd termlab starts can serve.
const defaultSocket = "/var/run/docker.sock"

// EngineState is what the facts of an Engine add up to.
type EngineState int

const (
	// EngineAbsent: `docker version` failed at once, no dockerd owns
	// dockerd's pid file and nothing accepts connections on the socket. Only
	// here may termlab install and start an engine.
	EngineAbsent EngineState = iota
	// EngineAnswers: `docker version` answered.
	EngineAnswers
	// EngineUnresponsive: an engine is there but did not answer: `docker
	// version` ran out of time (slow or hung), or a dockerd runs that is still
	// starting or stopping. Wait for it; never start a second one.
	EngineUnresponsive
	// EngineRefuses: something accepts connections on the socket but
	// `docker version` failed at once, or this user may not connect to the
	// socket. Say so; never start a second one.
	EngineRefuses
)

func (s EngineState) String() string {
	switch s {
	case EngineAnswers:
		return "answers"
	case EngineUnresponsive:
		return "unresponsive"
	case EngineRefuses:
		return "refuses"
	default:
		return "absent"
	}
}

// Engine is what Ensure and doctor decide on about the Docker engine: facts
// read once, never the docker client's words matched again.
type Engine struct {
	Version       string // the server's version; "" when it did not answer
	Err           string // the docker client's first line when it did not answer
	TimedOut      bool   // `docker version` ran out of time rather than failing at once
	Socket        string // the unix socket the client uses; "" when DOCKER_HOST names another kind of address
	SocketAccepts bool   // something accepts connections on Socket
	SocketDenied  bool   // this user may not connect to Socket (permission denied)
	DockerdPID    int    // the running dockerd that owns dockerd's pid file, 0 if none
}

// State decides from the facts.
func (e Engine) State() EngineState {
	switch {
	case e.Version != "":
		return EngineAnswers
	case e.SocketDenied: // waiting would not help
		return EngineRefuses
	case e.TimedOut, e.DockerdPID != 0:
		return EngineUnresponsive
	case e.SocketAccepts:
		return EngineRefuses
	default:
		return EngineAbsent
	}
}

// Describe says in one sentence what the facts show.
func (e Engine) Describe() string {
	who := "an engine"
	switch {
	case e.DockerdPID != 0:
		who = fmt.Sprintf("dockerd (pid %d)", e.DockerdPID)
	case e.SocketAccepts:
		who = "an engine on " + e.Socket
	}
	switch e.State() {
	case EngineAnswers:
		return "Docker " + e.Version + " answers"
	case EngineUnresponsive:
		if !e.TimedOut {
			return fmt.Sprintf("%s runs but does not answer yet (starting or stopping): %s", who, e.Err)
		}
		if e.DockerdPID == 0 && !e.SocketAccepts {
			return fmt.Sprintf("`docker version` did not answer within %s although nothing accepts connections on %s (check DOCKER_HOST and `docker context ls`)", versionTimeout, orDefault(e.Socket))
		}
		return fmt.Sprintf("%s runs but `docker version` did not answer within %s (slow or hung)", who, versionTimeout)
	case EngineRefuses:
		if e.SocketDenied {
			return fmt.Sprintf("this user may not connect to %s (permission denied): add yourself to the docker group (`sudo usermod -aG docker $USER`, then log in again) or run as root", e.Socket)
		}
		return fmt.Sprintf("something accepts connections on %s but `docker version` fails: %s", e.Socket, e.Err)
	default:
		return "no Docker engine answers: " + e.Err
	}
}

func orDefault(socket string) string {
	if socket == "" {
		return "DOCKER_HOST"
	}
	return socket
}

// NoAnswerError is ServerVersion's error: the engine did not answer.
type NoAnswerError struct {
	TimedOut bool          // it did not answer within After (rather than failing at once)
	After    time.Duration // the time it had
	Msg      string        // the docker client's first line, or why it could not run
}

func (e *NoAnswerError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("the Docker engine did not answer within %s", e.After)
	}
	return "the Docker engine does not answer: " + e.Msg
}

// ServerVersion returns the engine's version, or a *NoAnswerError when no
// engine answers within 15 s (ctx's own end is returned as it is).
func ServerVersion(ctx context.Context) (string, error) {
	return serverVersion(ctx, versionTimeout)
}

func serverVersion(ctx context.Context, timeout time.Duration) (string, error) {
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := kindexec.CommandContext(vctx, "docker", "version", "--format", "{{.Server.Version}}").SetStdout(&stdout).SetStderr(&stderr).Run()
	if err == nil {
		return strings.TrimSpace(stdout.String()), nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	msg := strings.TrimSpace(stderr.String())
	if msg == "" {
		msg = err.Error()
	}
	return "", &NoAnswerError{TimedOut: errors.Is(vctx.Err(), context.DeadlineExceeded), After: timeout, Msg: firstLine(msg)}
}

// Probe reads the engine's facts on this machine.
func Probe(ctx context.Context) Engine {
	return probeEngine(ctx, clientSocket(os.Getenv("DOCKER_HOST")), defaultPIDFile, versionTimeout)
}

func probeEngine(ctx context.Context, socket, dockerdPIDFile string, timeout time.Duration) Engine {
	e := Engine{Socket: socket}
	v, err := serverVersion(ctx, timeout)
	if err == nil {
		e.Version = v
		return e
	}
	var na *NoAnswerError
	if errors.As(err, &na) {
		e.TimedOut, e.Err = na.TimedOut, na.Msg
	} else {
		e.Err = err.Error()
	}
	e.DockerdPID = dockerdFromPIDFile(dockerdPIDFile)
	e.SocketAccepts, e.SocketDenied = dialSocket(socket)
	return e
}

// clientSocket is the unix socket the docker client talks to: DOCKER_HOST's
// when it names one, the default otherwise; "" when DOCKER_HOST names
// another kind of address (tcp://, ssh://).
func clientSocket(dockerHost string) string {
	if dockerHost == "" {
		return defaultSocket
	}
	if path, ok := strings.CutPrefix(dockerHost, "unix://"); ok {
		return path
	}
	return ""
}

// dialSocket reports whether something accepts a connection on socket, and
// whether this user was denied connecting to it at all.
func dialSocket(socket string) (accepts, denied bool) {
	if socket == "" {
		return false, false
	}
	c, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return false, errors.Is(err, fs.ErrPermission)
	}
	c.Close()
	return true, false
}

// dockerdFromPIDFile returns the pid in path when a process named dockerd
// has it, or 0. A dockerd with its own pid file serves its own socket, so
// only the one owning dockerd's default pid file counts.
func dockerdFromPIDFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); pid > 0 && strings.TrimSpace(string(comm)) == "dockerd" {
		return pid
	}
	return 0
}
