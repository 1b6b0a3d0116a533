package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/nodeagent"
)

//	heartbeat agent <port> <root>        serves node commands over HTTP (below)
//
// The node pod of a lab that stops a kubelet (internal/nodepod, agent mode)
// cannot use pods/exec: exec goes through the very kubelet the lab stops.
// The API server's pods/proxy goes to the pod's IP directly, so this agent,
// on the node's network, answers while the kubelet is down. It runs inside
// <root> only the command shapes termlab sends (nodeagent.Allowed), with an
// environment of its caller's checked entries only, and only for a caller
// that knows the token the pod got from its Secret (TERMLAB_AGENT_TOKEN).

// agentMaxSeconds bounds a command (crictl logs -f ends with its container).
const agentMaxSeconds = 3600

func serveAgent(args []string, getenv func(string) string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "heartbeat agent: want <port> <root>")
		return 2
	}
	token := getenv(nodeagent.TokenEnv)
	if len(token) < 16 {
		fmt.Fprintln(os.Stderr, "heartbeat agent: TERMLAB_AGENT_TOKEN is missing or short")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "heartbeat agent:", err)
		return 1
	}
	mux := agentMux(self, args[1], token)
	srv := &http.Server{Addr: ":" + args[0], Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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

// agentMux serves /healthz and /run; self is the program that runs
// `chroot <root> argv…` (this binary).
func agentMux(self, root, token string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		var req nodeagent.Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(req.Token), []byte(token)) != 1 {
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
