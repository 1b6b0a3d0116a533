package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/nodeagent"
)

func postRun(t *testing.T, url string, req nodeagent.Request) (int, nodeagent.Response) {
	t.Helper()
	body, _ := json.Marshal(req)
	res, err := http.Post(url+"/run", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out nodeagent.Response
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode, out
}

// The agent runs only listed commands, only for the token's holder; a run
// gives the command's output and exit code. /usr/bin/env stands in for the
// heartbeat binary (env chroot / … is the same chroot, done by coreutils).
func TestAgent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	token := "0123456789abcdef0123"
	srv := httptest.NewServer(agentMux("/usr/bin/env", "/", token))
	defer srv.Close()
	if code, _ := postRun(t, srv.URL, nodeagent.Request{Token: "wrong", Argv: []string{"ls", "/"}}); code != http.StatusForbidden {
		t.Errorf("wrong token: %d", code)
	}
	if code, _ := postRun(t, srv.URL, nodeagent.Request{Token: token, Argv: []string{"rm", "-rf", "/tmp/x"}}); code != http.StatusForbidden {
		t.Errorf("unlisted command: %d", code)
	}
	code, res := postRun(t, srv.URL, nodeagent.Request{Token: token, Argv: []string{"cat"}, Stdin: []byte("hello")})
	if code != http.StatusOK || string(res.Stdout) != "hello" || res.Exit != 0 {
		t.Errorf("cat: %d %+v", code, res)
	}
	code, res = postRun(t, srv.URL, nodeagent.Request{Token: token, Argv: []string{"ls", "/no/such/dir"}})
	if code != http.StatusOK || res.Exit == 0 || !strings.Contains(string(res.Stderr), "No such file") {
		t.Errorf("failing ls: %d %+v", code, res)
	}
}
