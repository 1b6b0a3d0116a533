//go:build e2e

package workshop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
)

// TestOfflineBundle makes a bundle of this repository, loads it into a fresh
// folder and runs the bundle's own binary the way a participant without Go
// would: no go on PATH, GOPROXY=off, an empty module cache and build cache, a
// fresh HOME, and a dead HTTP(S) proxy. cluster:up (reusing the running
// cluster), lab:force and results:compare must work from the bundle alone.
// It needs the running cluster (go tool mage cluster:up) and Go to bundle.
//
//	go test -tags e2e -run TestOfflineBundle -v -timeout 20m ./internal/workshop/
//
// What it cannot show on a shared machine: the images are loaded into the
// same engine that already has them (a load into an empty engine and a
// cluster created from the loaded node image are for a clean machine).
func TestOfflineBundle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	log := progress.New(testWriter{t})
	env, err := stack.Connect(ctx, log)
	if err != nil {
		t.Skipf("no running cluster: %v", err)
	}
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()

	archive := filepath.Join(work, "termlab-workshop.tar.gz")
	res, err := Bundle(ctx, BundleOptions{Root: root, Out: archive, Images: images.Auto, Log: log, Labs: labs.All})
	if err != nil {
		t.Fatalf("workshop:bundle: %v", err)
	}
	t.Logf("bundle: %s, made in %s", MiB(res.Size), res.Took.Round(time.Second))

	// A truncated copy is refused before anything changes.
	bad := filepath.Join(work, "truncated.tar.gz")
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b[:len(b)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, bad, LoadOptions{Dest: filepath.Join(work, "bad"), Log: log}); err == nil || !strings.Contains(err.Error(), "nothing was loaded or unpacked") {
		t.Fatalf("a truncated bundle: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "bad")); err == nil {
		t.Fatal("a truncated bundle created its folder")
	}

	dest := filepath.Join(work, TopDir)
	if _, err := Load(ctx, archive, LoadOptions{Dest: dest, Log: log}); err != nil {
		t.Fatalf("workshop:load: %v", err)
	}

	// The participant: Docker, and nothing else.
	for _, d := range []string{"home", "gomodcache", "cache"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	clean := []string{
		"PATH=" + pathWithoutGo(t),
		"HOME=" + filepath.Join(work, "home"),
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
		"GOMODCACHE=" + filepath.Join(work, "gomodcache"),
		"TERMLAB_CACHE_DIR=" + filepath.Join(work, "cache"),
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		clean = append(clean, "DOCKER_HOST="+h)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(dest, BinaryFile), args...)
		cmd.Dir = dest
		cmd.Env = clean
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("termlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if _, err := exec.LookPath("go"); err == nil {
		// (the test process has go; the child's PATH must not)
		if out, err := exec.Command("env", append([]string{"-i"}, append(clean, "sh", "-c", "command -v go")...)...).CombinedOutput(); err == nil {
			t.Fatalf("go is still on the participant's PATH: %s", out)
		}
	}

	out := run("cluster:up")
	if !strings.Contains(out, "images from the workshop bundle") || strings.Contains(out, "building") {
		t.Errorf("cluster:up did not take the bundle's images as they are:\n%s", out)
	}
	if err := waitNoActiveRuns(ctx, log, env.Client, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	run("lab:force")
	out = run("results:compare", "--run=force")
	if !strings.Contains(out, "matches the reference") {
		t.Errorf("results:compare from the bundle:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dest, "results", "force", "latest", "report.md")); err != nil {
		t.Errorf("no report in the bundle folder: %v", err)
	}

	// diagnose from the bundle's binary (cmd/termlab, kubectl's flags):
	// through the cluster's kubeconfig with node pods (which it must remove).
	// kube-proxy's pod on a worker: --node-access alone opens no node pod on
	// the control plane (CoreDNS's node on kind), whose disk holds the CA.
	proxies, err := env.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy", FieldSelector: "spec.nodeName=" + env.Workers[0].String()})
	if err != nil || len(proxies.Items) == 0 {
		t.Fatalf("no kube-proxy pod on %s to diagnose: %v", env.Workers[0], err)
	}
	target := "pod/" + proxies.Items[0].Name
	for _, args := range [][]string{
		{"diagnose", target, "-n", "kube-system", "--kubeconfig=" + env.KubeconfigPath, "--node-access"},
	} {
		out = run(args...)
		if !strings.Contains(out, "is not being deleted") || !strings.Contains(out, "runs on the node") {
			t.Errorf("termlab %s: the answer does not say the healthy pod runs:\n%s", strings.Join(args, " "), out)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dest, "results", "diagnose")); err != nil || len(entries) == 0 {
		t.Errorf("no diagnosis in the bundle folder: %v", err)
	}
	left, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: nodepod.PurposeLabel})
	if err != nil || len(left.Items) > 0 {
		t.Errorf("diagnose left node-access namespaces: %v (%v)", left, err)
	}
}

// pathWithoutGo is PATH without the folder of the go command.
func pathWithoutGo(t *testing.T) string {
	goBin, _ := exec.LookPath("go")
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if goBin != "" && filepath.Clean(d) == filepath.Dir(goBin) {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
