package release

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/version"
)

// KrewUser's PATH is krew's links, kubectl's directory and krew's, and
// nothing of the machine's: a plugin found there came from krew.
func TestKrewUserPATH(t *testing.T) {
	u := KrewUser{Krew: Krew{Dir: "/cache/krew-v0.4.3"}, Kubectl: "/cache/kubectl/v1.37.2/kubectl", KrewRoot: "/tmp/k", Home: "/tmp/h"}
	want := "/tmp/k/bin:/cache/kubectl/v1.37.2:/cache/krew-v0.4.3"
	if runtime.GOOS == "windows" {
		t.Skip("the PATH separator differs")
	}
	if got := u.PATH(); got != want {
		t.Errorf("PATH %q, want %q", got, want)
	}
	env := u.Command(context.Background(), "/", "version").Env
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") && kv != "PATH="+want {
			t.Errorf("the command's %s, want PATH=%s", kv, want)
		}
	}
	if !slices.Contains(env, "KREW_ROOT=/tmp/k") || !slices.Contains(env, "HOME=/tmp/h") || !slices.Contains(env, "KREW_NO_UPGRADE_CHECK=1") {
		t.Errorf("environment %q", env)
	}
	if KrewDir("/cache") != filepath.Join("/cache", "krew-"+KrewVersion) {
		t.Errorf("KrewDir %s does not change with the version", KrewDir("/cache"))
	}
}

// krewKubectl is a kubectl to run krew through: TERMLAB_KUBECTL, the one
// termlab took from its cluster's node image (internal/lab.Kubectl caches
// it under <cache>/kubectl/<version>/), or kubectl on PATH.
func krewKubectl(t *testing.T) string {
	if k := os.Getenv("TERMLAB_KUBECTL"); k != "" {
		return k
	}
	if cache, err := os.UserCacheDir(); err == nil {
		found, _ := filepath.Glob(filepath.Join(cache, "termlab", "kubectl", "v*", "kubectl"))
		if len(found) > 0 {
			return found[len(found)-1]
		}
	}
	k, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl: set TERMLAB_KUBECTL")
	}
	return k
}

// The release of this checkout for this machine is installed by krew
// itself (built from its module) from the archive and manifest Run writes,
// runs as `kubectl termlab version` and reports the version and commit it
// was stamped with, and is gone after `kubectl krew uninstall`. An archive
// that differs from the manifest's sha256 by one byte is refused. No
// cluster needed; building krew and termlab takes minutes on a cold build
// cache, so it runs when asked: TERMLAB_KREW=1.
func TestKrewInstallsTheRelease(t *testing.T) {
	if os.Getenv("TERMLAB_KREW") != "1" {
		t.Skip("builds krew and termlab (minutes on a cold cache): TERMLAB_KREW=1 runs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var log bytes.Buffer
	defer func() { t.Logf("progress:\n%s", log.String()) }()
	logger := progress.New(&log)

	k, err := BuildKrew(ctx, logger, filepath.Join(project.CacheDir(), "bin"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	host := Platform{runtime.GOOS, runtime.GOARCH}
	res, err := Run(ctx, Options{Root: root, Out: t.TempDir(), Version: "v0.0.0-krewtest", Platforms: []Platform{host}, Log: logger})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ValidateManifest(ctx, logger, filepath.Join(project.CacheDir(), "bin"), res.Manifest); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	u := KrewUser{Krew: k, Kubectl: krewKubectl(t), KrewRoot: t.TempDir(), Home: t.TempDir()}
	archive := res.Artifacts[0].Path

	// One byte changed: krew compares the sha256 and installs nothing.
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	tampered := filepath.Join(t.TempDir(), filepath.Base(archive))
	if err := os.WriteFile(tampered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := u.Install(ctx, res.Manifest, tampered); err == nil || !strings.Contains(out, "checksum") {
		t.Errorf("krew installed an archive whose sha256 is not the manifest's (%v):\n%s", err, out)
	}
	if _, linked := u.Linked(Name); linked {
		t.Fatal("a refused install left a link")
	}

	out, err := u.Install(ctx, res.Manifest, archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl krew install:\n%s", out)
	if bin, linked := u.Linked(Name); !linked {
		t.Fatalf("krew installed, but %s is not there", bin)
	}
	if plugins, err := u.Plugins(ctx); err != nil || !slices.Contains(plugins, Binary+hostExe()) {
		t.Errorf("kubectl plugin list: %q (%v), want %s", plugins, err, Binary)
	}
	var stdout, stderr bytes.Buffer
	cmd := u.Command(ctx, t.TempDir(), Name, "version", "-o", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl termlab version: %v\n%s", err, stderr.String())
	}
	var info version.Info
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		t.Fatalf("kubectl termlab version -o json: %v\n%s", err, stdout.String())
	}
	if info.Version != res.Version || info.Commit != res.Stamp.Commit {
		t.Errorf("kubectl termlab version says %s %s, want the release's %s %s", info.Version, info.Commit, res.Version, res.Stamp.Commit)
	}

	if out, err := u.Uninstall(ctx, Name); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if bin, linked := u.Linked(Name); linked {
		t.Errorf("uninstalled, but %s is still there", bin)
	}
	if plugins, err := u.Plugins(ctx); err != nil || slices.Contains(plugins, Binary+hostExe()) {
		t.Errorf("after uninstall kubectl plugin list: %q (%v)", plugins, err)
	}
}
