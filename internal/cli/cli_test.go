package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/version"
)

// kubeconfig writes a kubeconfig whose current context has namespace ns
// (none when ""), points KUBECONFIG at it and returns its path. The server
// is never asked: these tests stop before anything is read.
func kubeconfig(t *testing.T, ns string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: not-a-secret}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: "` + ns + `"}
current-context: ctx
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", p)
	return p
}

// invoke runs the binary as name with args, diagnose replaced by a recorder
// that returns code; it returns the exit code, the request diagnose got
// (nil if it never ran) and stderr.
func invoke(t *testing.T, name string, code int, args ...string) (int, *diagnoseRequest, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, display: name}
	var got *diagnoseRequest
	a.diagnose = func(_ context.Context, _ *app, req diagnoseRequest) int {
		got = &req
		return code
	}
	return a.run(context.Background(), args), got, stderr.String()
}

func TestDiagnoseArguments(t *testing.T) {
	kubeconfig(t, "from-context")
	tests := []struct {
		name string
		args []string
		want target
	}{
		{"pod/x with -n", []string{"diagnose", "pod/x", "-n", "shop"}, target{Namespace: "shop", Pod: "x"}},
		{"pods/x, the plural", []string{"diagnose", "pods/x", "--namespace=shop"}, target{Namespace: "shop", Pod: "x"}},
		{"x with -n is a pod", []string{"diagnose", "x", "-n", "shop"}, target{Namespace: "shop", Pod: "x"}},
		{"pod x", []string{"diagnose", "pod", "x", "-n", "shop"}, target{Namespace: "shop", Pod: "x"}},
		{"no -n: the context's namespace, as kubectl", []string{"diagnose", "pod/x"}, target{Namespace: "from-context", Pod: "x"}},
		{"ns/x", []string{"diagnose", "ns/x"}, target{Namespace: "x"}},
		{"namespace/x", []string{"diagnose", "namespace/x"}, target{Namespace: "x"}},
		{"namespace x", []string{"diagnose", "namespace", "x"}, target{Namespace: "x"}},
		{"ns/x ignores -n, as kubectl does for a namespace", []string{"diagnose", "ns/x", "-n", "other"}, target{Namespace: "x"}},
		{"flags before the object", []string{"diagnose", "-o", "json", "-n", "shop", "x"}, target{Namespace: "shop", Pod: "x"}},
		{"-A: everything being deleted", []string{"diagnose", "-A"}, target{All: true}},
		{"--all-namespaces -o json", []string{"diagnose", "--all-namespaces", "-o", "json"}, target{All: true}},
		{"no object: what is stuck in the context's namespace", []string{"diagnose"}, target{All: true, Namespace: "from-context"}},
		{"no object, -n: what is stuck in it", []string{"diagnose", "-n", "shop", "--older-than", "5m"}, target{All: true, Namespace: "shop"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, req, stderr := invoke(t, "termlab", 0, tc.args...)
			if code != 0 || req == nil {
				t.Fatalf("exit %d, diagnose ran: %v; stderr:\n%s", code, req != nil, stderr)
			}
			if req.target != tc.want {
				t.Errorf("target %+v, want %+v", req.target, tc.want)
			}
		})
	}
}

func TestDiagnoseFlags(t *testing.T) {
	kc := kubeconfig(t, "")
	code, req, stderr := invoke(t, "kubectl termlab", 0, "diagnose", "pod/x", "-o", "json", "--node-access", "--evidence-dir", "/tmp/ev", "--kubeconfig", kc, "--context", "ctx")
	if code != 0 || req == nil {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if req.Output != outputJSON || !req.NodeAccess || req.EvidenceDir != "/tmp/ev" || *req.Flags.KubeConfig != kc || *req.Flags.Context != "ctx" {
		t.Errorf("request %+v", req)
	}
	// A context without a namespace: "default", as kubectl.
	if req.target != (target{Namespace: "default", Pod: "x"}) {
		t.Errorf("target %+v, want default/x", req.target)
	}
	// The exit code is diagnose's.
	if code, _, _ := invoke(t, "termlab", diagnose.ExitHeld, "diagnose", "x"); code != diagnose.ExitHeld {
		t.Errorf("exit %d, want diagnose's %d", code, diagnose.ExitHeld)
	}
}

// A bad flag or argument is exit 3 before anything is read, and says what is accepted.
func TestDiagnoseUsageErrors(t *testing.T) {
	kubeconfig(t, "ns")
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"unknown flag", []string{"diagnose", "pod/x", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"-o yaml", []string{"diagnose", "pod/x", "-o", "yaml"}, "want text or json"},
		{"no object --watch", []string{"diagnose", "--watch"}, "--watch follows one object"},
		{"another resource", []string{"diagnose", "deployment/web"}, `not "deployment"`},
		{"empty name", []string{"diagnose", "pod/"}, "want pod/<name>"},
		{"a path", []string{"diagnose", "pod/a/b"}, "want pod/<name>"},
		{"two objects", []string{"diagnose", "pod/a", "pod/b"}, "one object"},
		{"three arguments", []string{"diagnose", "pod", "a", "b"}, "one object"},
		{"unknown command", []string{"diagnoze", "pod/x"}, "Commands: cluster:down"},
		{"-A and an object", []string{"diagnose", "-A", "pod/x"}, "-A diagnoses every pod and namespace stuck deleting: give no object"},
		{"-A --watch", []string{"diagnose", "-A", "--watch"}, "and no --watch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, req, stderr := invoke(t, "kubectl termlab", 0, tc.args...)
			if code != diagnose.ExitUsage {
				t.Errorf("exit %d, want %d", code, diagnose.ExitUsage)
			}
			if req != nil {
				t.Errorf("diagnose ran with %+v", req)
			}
			if !strings.Contains(stderr, tc.says) {
				t.Errorf("stderr does not say %q:\n%s", tc.says, stderr)
			}
			if tc.args[0] == "diagnose" && !strings.Contains(stderr, "Usage: kubectl termlab diagnose [pod/<name> | ns/<name>") {
				t.Errorf("stderr does not show what is accepted:\n%s", stderr)
			}
		})
	}
}

// As kubectl's plugin the binary is called kubectl-termlab, and its help says `kubectl termlab`.
func TestInvokedAsPlugin(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"/usr/local/bin/" + PluginName, "diagnose", "--help"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "kubectl termlab diagnose [pod/<name>") || !strings.Contains(stdout.String(), "--kubeconfig") {
		t.Errorf("exit %d; help:\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := Run(context.Background(), []string{"termlab", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "termlab [command]") || strings.Contains(stdout.String(), "kubectl termlab [command]") {
		t.Errorf("exit %d; help:\n%s", code, stdout.String())
	}
}

// The mage targets' commands need a checkout, and say so outside one.
func TestRepoCommandsOutsideACheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("TERMLAB_ROOT", "")
	for _, cmd := range []string{"lab:force", "lab:all", "cluster:up", "cluster:status", "cluster:down", "results:index", "results:compare", "workshop", "workshop:run", "workshop:reset"} {
		code, _, stderr := invoke(t, "termlab", 0, cmd)
		if code != diagnose.ExitUsage || !strings.Contains(stderr, " runs inside a termlab checkout") || !strings.Contains(stderr, "TERMLAB_ROOT") {
			t.Errorf("%s outside a checkout: exit %d, stderr:\n%s", cmd, code, stderr)
		}
	}
	// workshop:verify reads an archive and needs no checkout: it gets as far
	// as the archive (missing here) and fails on it, not on the checkout.
	code, _, stderr := invoke(t, "termlab", 0, "workshop:verify", "no-such.tar.gz")
	if code != 1 || strings.Contains(stderr, "runs inside a termlab checkout") || !strings.Contains(stderr, "no-such.tar.gz") {
		t.Errorf("workshop:verify outside a checkout: exit %d, stderr:\n%s", code, stderr)
	}
}

// --help groups the commands that need a checkout apart from the others;
// every command that runs anywhere is named here, so one added later without
// a group, or a checkout command put among them, fails.
func TestHelpGroupsCheckoutCommands(t *testing.T) {
	root := (&app{display: "termlab"}).rootCommand()
	anywhere := map[string]bool{"diagnose": true, "version": true, "workshop:load": true, "workshop:verify": true}
	for _, c := range root.Commands() {
		want := groupCheckout
		if anywhere[c.Name()] {
			want = groupAnywhere
		}
		if c.GroupID != want {
			t.Errorf("%s is in group %q, want %q", c.Name(), c.GroupID, want)
		}
	}
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	checkoutAt := strings.Index(help, "Commands that need a termlab checkout")
	if checkoutAt < 0 || strings.Index(help, "  cluster:up") < checkoutAt || strings.Index(help, "  diagnose") > checkoutAt {
		t.Errorf("--help does not list cluster:up under the checkout group and diagnose before it:\n%s", help)
	}
}

// mage's single-dash flags work for the mage targets' commands; diagnose
// refuses them rather than read -nodeaccess as -n odeaccess.
func TestMageStyleFlags(t *testing.T) {
	root := (&app{display: "termlab"}).rootCommand()
	got, err := magestyle(root, []string{"lab:stuck", "-by=script", "-nodeaccess", "-allownodefaults=w2", "-kubeconfig", "k", "-x"})
	want := []string{"lab:stuck", "--by=script", "--nodeaccess", "--allownodefaults=w2", "--kubeconfig", "k", "-x"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("magestyle = %q, %v; want %q", got, err, want)
	}
	cmd, args, err := root.Find(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args[:len(args)-1]); err != nil {
		t.Fatal(err)
	}
	f := labFlags(cmd)
	if *f.By != "script" || !*f.NodeAccess || *f.AllowNodeFaults != "w2" || *f.Kubeconfig != "k" || f.Context != nil {
		t.Errorf("lab flags %+v", f)
	}
	// kubectl's -nkube-system is -n kube-system.
	if got, err := magestyle(root, []string{"diagnose", "pod/x", "-nkube-system"}); err != nil || got[2] != "-nkube-system" {
		t.Errorf("diagnose's -nkube-system: %q, %v", got, err)
	}
	kubeconfig(t, "ns")
	code, req, stderr := invoke(t, "kubectl termlab", 0, "diagnose", "pod/x", "-nodeaccess")
	if code != diagnose.ExitUsage || req != nil || !strings.Contains(stderr, "write --node-access") {
		t.Errorf("diagnose -nodeaccess: exit %d, ran %v, stderr:\n%s", code, req != nil, stderr)
	}
}

func TestEvidenceRoot(t *testing.T) {
	if got, _ := evidenceRoot("/ev"); got != "/ev" {
		t.Errorf("--evidence-dir: %s", got)
	}
	t.Setenv("TERMLAB_ROOT", "/src/termlab")
	if got, _ := evidenceRoot(""); got != "/src/termlab/results" {
		t.Errorf("inside a checkout: %s, want its results/", got)
	}
	t.Chdir(t.TempDir())
	t.Setenv("TERMLAB_ROOT", "")
	t.Setenv("XDG_STATE_HOME", "/state")
	if got, _ := evidenceRoot(""); got != "/state/termlab" {
		t.Errorf("outside, XDG_STATE_HOME: %s", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, _ := evidenceRoot(""); got != "/home/u/.local/state/termlab" {
		t.Errorf("outside, no XDG_STATE_HOME: %s", got)
	}
}

// Without any kubeconfig kubectl's flags would fall back to localhost:8080;
// diagnose says instead that nothing names a cluster, and where it looked:
// exit 2, nothing read.
func TestDiagnoseWithoutKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"termlab", "diagnose", "pod/x", "--evidence-dir", t.TempDir()}, &stdout, &stderr)
	if code != diagnose.ExitUndecided || !strings.Contains(stderr.String(), "no kubeconfig names a cluster: looked in "+os.Getenv("KUBECONFIG")) || strings.Contains(stderr.String(), "localhost:8080") || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
	}
}

func TestVersionPrintsWhichTermlab(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := Run(t.Context(), []string{"kubectl-termlab", "version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("termlab version exit %d: %s", code, stderr.String())
	}
	want := version.Get()
	for _, s := range []string{"termlab " + want.Version + "\n", "commit:    " + want.Commit, "built:     ", "go:        " + want.Go, "client-go: " + want.ClientGo} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("termlab version does not say %q:\n%s", s, stdout.String())
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := Run(t.Context(), []string{"termlab", "version", "-o", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("termlab version -o json exit %d: %s", code, stderr.String())
	}
	var got version.Info
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	if got != version.Get() {
		t.Errorf("version -o json = %+v, want %+v", got, version.Get())
	}
	stdout.Reset()
	if code := Run(t.Context(), []string{"termlab", "version", "--output=yaml"}, &stdout, &stderr); code != diagnose.ExitUsage {
		t.Errorf("version --output=yaml exit %d, want %d (usage)", code, diagnose.ExitUsage)
	}
}

// Ctrl-C before diagnose decided exits 130, as a shell reports an
// interrupted command, not 2 ("could not decide").
func TestDiagnoseInterruptedExits130(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"termlab", "diagnose", "pod/x", "--kubeconfig", kubeconfig, "--evidence-dir", dir}, &stdout, &stderr)
	if code != diagnose.ExitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, diagnose.ExitInterrupted, stderr.String())
	}
}
