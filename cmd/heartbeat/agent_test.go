package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/nodeagent"
)

func postRun(t *testing.T, url string, req nodeagent.Request) (int, string, nodeagent.Response) {
	t.Helper()
	body, _ := json.Marshal(req)
	res, err := http.Post(url+"/run", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out nodeagent.Response
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), out
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, "", out
}

// The agent runs only the shapes termlab sends, only for the holder of the
// token whose hash it was given, with no environment entry but a checked
// NAME=VALUE; a run gives the command's output and exit code. The built
// binary is the agent's own chroot helper, into / here.
func TestAgent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	token := "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(agentMux(buildBinary(t), "/", sha256.Sum256([]byte(token))))
	defer srv.Close()
	date := []string{"date", "+%s.%N"}
	for _, tc := range []struct {
		name string
		req  nodeagent.Request
		why  string
	}{
		{"wrong token", nodeagent.Request{Token: "wrong", Argv: date}, "wrong token"},
		{"the hash for the token", nodeagent.Request{Token: nodeagent.TokenHash(token), Argv: date}, "wrong token"},
		{"unlisted command", nodeagent.Request{Token: token, Argv: []string{"rm", "-rf", "/tmp/x"}}, `"rm" is not a program the agent runs`},
		{"a listed program in another shape", nodeagent.Request{Token: token, Argv: []string{"cat", "/etc/shadow"}}, "not as mounthold.Mounts"},
		{"an env entry that is a command", nodeagent.Request{Token: token, Argv: date, Env: []string{"/bin/sh"}}, "is not NAME=VALUE"},
		{"an env entry that loads a library", nodeagent.Request{Token: token, Argv: date, Env: []string{"LD_PRELOAD=/tmp/x.so"}}, "passes no LD_PRELOAD"},
	} {
		code, body, _ := postRun(t, srv.URL, tc.req)
		if code != http.StatusForbidden || !strings.Contains(body, tc.why) {
			t.Errorf("%s: %d %q, want 403 saying %q", tc.name, code, body, tc.why)
		}
	}
	code, _, res := postRun(t, srv.URL, nodeagent.Request{Token: token, Argv: date, Env: []string{"NO_COLOR=1"}})
	if code != http.StatusOK || res.Exit != 0 || !strings.Contains(string(res.Stdout), ".") {
		t.Errorf("date: %d %+v", code, res)
	}
	code, _, res = postRun(t, srv.URL, nodeagent.Request{Token: token, Argv: []string{"stat", "-c", "%i %s", nodeagent.AuditLogDir + "/no-such.log"}})
	if code != http.StatusOK || res.Exit == 0 || !strings.Contains(string(res.Stderr), "No such file") {
		t.Errorf("failing stat: %d %+v", code, res)
	}
}

// The agent listens on the pod's IP only: without one it does not start.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ ip, port, want string }{
		{"10.1.2.3", "20001", "10.1.2.3:20001"},
		{"fd00::5", "20001", "[fd00::5]:20001"},
		{"", "20001", ""},
		{"0.0.0.0", "20001", ""},
		{"::", "20001", ""},
		{"node-1", "20001", ""},
		{"10.1.2.3", "x", ""},
		{"10.1.2.3", "70000", ""},
	} {
		got, err := listenAddr(tc.ip, tc.port)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("listenAddr(%q, %q) = %q, %v; want %q", tc.ip, tc.port, got, err, tc.want)
		}
	}
}

func TestTokenHashEnv(t *testing.T) {
	want := sha256.Sum256([]byte("tok"))
	if got, err := tokenHash(nodeagent.TokenHash("tok")); err != nil || got != want {
		t.Errorf("tokenHash = %x, %v", got, err)
	}
	for _, bad := range []string{"", "tok", nodeagent.TokenHash("tok")[:63], "zz" + nodeagent.TokenHash("tok")[2:]} {
		if _, err := tokenHash(bad); err == nil {
			t.Errorf("tokenHash(%q) accepted it", bad)
		}
	}
}

// Without the hash or the pod's IP the agent does not start.
func TestServeAgentRefusesToStartWithout(t *testing.T) {
	env := map[string]string{nodeagent.TokenHashEnv: nodeagent.TokenHash("tok"), nodeagent.PodIPEnv: "127.0.0.1"}
	for _, missing := range []string{nodeagent.TokenHashEnv, nodeagent.PodIPEnv} {
		getenv := func(k string) string {
			if k == missing {
				return ""
			}
			return env[k]
		}
		if code := serveAgent([]string{"20001", "/"}, getenv); code != 2 {
			t.Errorf("without %s: exit %d, want 2", missing, code)
		}
	}
}

// A command's environment is the request's entries and chroot's PATH,
// nothing of the agent's own (its token hash, its pod IP), and an entry is
// never a word of the command line.
func TestAgentCommandEnvironment(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	t.Setenv(nodeagent.TokenHashEnv, nodeagent.TokenHash("tok"))
	res := runAgentCommand(t.Context(), buildBinary(t), "/", nodeagent.Request{Argv: []string{"env"}, Env: []string{"NO_COLOR=1"}})
	if want := "PATH=" + hostPath + "\nNO_COLOR=1\n"; res.Exit != 0 || string(res.Stdout) != want {
		t.Errorf("env: %+v, want stdout %q", res, want)
	}
}
