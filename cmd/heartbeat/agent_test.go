package main

import (
	"bytes"
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
// token, with no environment entry but a checked
// NAME=VALUE; a run gives the command's output and exit code. The built
// binary is the agent's own chroot helper, into / here.
func TestAgent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	token := "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(agentMux(buildBinary(t), "/", token))
	defer srv.Close()
	date := []string{"date", "+%s.%N"}
	for _, tc := range []struct {
		name string
		req  nodeagent.Request
		why  string
	}{
		{"wrong token", nodeagent.Request{Token: "wrong", Argv: date}, "wrong token"},
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

// A command's environment is the request's entries and chroot's PATH,
// nothing of the agent's own (its token), and an entry is
// never a word of the command line.
func TestAgentCommandEnvironment(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	t.Setenv(nodeagent.TokenEnv, "0123456789abcdef0123")
	res := runAgentCommand(t.Context(), buildBinary(t), "/", nodeagent.Request{Argv: []string{"env"}, Env: []string{"NO_COLOR=1"}})
	if want := "PATH=" + hostPath + "\nNO_COLOR=1\n"; res.Exit != 0 || string(res.Stdout) != want {
		t.Errorf("env: %+v, want stdout %q", res, want)
	}
}
