package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/nodeagent"
)

//	heartbeat agent <port> <root>        serves node commands over HTTP (below)
//
// The node pod of a lab that stops a kubelet (internal/nodepod, agent mode)
// cannot use pods/exec: exec goes through the very kubelet the lab stops.
// The API server's pods/proxy goes to the pod's IP directly, so this agent,
// on the node's network, answers while the kubelet is down. It listens on
// the pod's IP only (TERMLAB_AGENT_POD_IP, from the downward API), runs
// inside <root> only the command shapes termlab sends (nodeagent.Allowed),
// with an environment of its caller's checked entries only, and only for a
// caller whose token hashes to TERMLAB_AGENT_TOKEN_SHA256.

// agentMaxSeconds bounds a command (crictl logs -f ends with its container).
const agentMaxSeconds = 3600

func serveAgent(args []string, getenv func(string) string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "heartbeat agent: want <port> <root>")
		return 2
	}
	hash, err := tokenHash(getenv(nodeagent.TokenHashEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat agent:", err)
		return 2
	}
	addr, err := listenAddr(getenv(nodeagent.PodIPEnv), args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat agent:", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat agent:", err)
		return 1
	}
	mux := agentMux(self, args[1], hash)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "heartbeat agent:", err)
		return 1
	}
	return 0
}

// tokenHash reads TERMLAB_AGENT_TOKEN_SHA256: the SHA-256 of the token a
// caller must present, in hex.
func tokenHash(env string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	b, err := hex.DecodeString(env)
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("%s is missing or not a hex SHA-256 (%d characters)", nodeagent.TokenHashEnv, len(env))
	}
	copy(h[:], b)
	return h, nil
}

// listenAddr is the pod's IP and the port: never every interface (with
// the host's network those are the node's, every one of them).
func listenAddr(podIP, port string) (string, error) {
	ip := net.ParseIP(podIP)
	if ip == nil || ip.IsUnspecified() {
		return "", fmt.Errorf("%s is %q, not the pod's IP: the agent listens on that address only", nodeagent.PodIPEnv, podIP)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("port %q is not a port number", port)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

// agentMux serves /healthz and /run; self is the program that runs
// `chroot <root> argv…` (this binary); hash is the token's SHA-256.
func agentMux(self, root string, hash [sha256.Size]byte) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		var req nodeagent.Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		got := sha256.Sum256([]byte(req.Token))
		if subtle.ConstantTimeCompare(got[:], hash[:]) != 1 {
			http.Error(w, "wrong token", http.StatusForbidden)
			return
		}
		if err := nodeagent.Allowed(req.Argv); err != nil {
			http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
			return
		}
		if err := nodeagent.CheckEnv(req.Env); err != nil {
			http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(runAgentCommand(r.Context(), self, root, req))
	})
	return mux
}

// runAgentCommand runs the request as `heartbeat chroot <root> argv…`, its
// environment the request's entries alone (checked by CheckEnv; chroot
// adds PATH): nothing of the agent's own, and no env(1) that could take an
// entry for a command.
func runAgentCommand(ctx context.Context, self, root string, req nodeagent.Request) nodeagent.Response {
	secs := req.Seconds
	if secs <= 0 || secs > agentMaxSeconds {
		secs = agentMaxSeconds
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, append([]string{"chroot", root}, req.Argv...)...)
	cmd.Env = append([]string{}, req.Env...) // non-nil: nothing inherited
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if req.Stdin != nil {
		cmd.Stdin = bytes.NewReader(req.Stdin)
	}
	err := cmd.Run()
	res := nodeagent.Response{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.Exit = exit.ExitCode()
	case err != nil:
		res.Exit, res.Error = -1, err.Error()
	}
	return res
}
