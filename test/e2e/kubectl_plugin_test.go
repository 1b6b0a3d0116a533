//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/release"
	"github.com/termlab/termlab/internal/version"
)

// TestKubectlTermlabPlugin installs the plugin as a krew user would: the
// release archive of this checkout for this machine's OS and arch and its
// manifest (internal/release, as `go tool mage release` writes them), put
// in place by krew itself (built from its Go module) with `kubectl krew
// install --manifest --archive` into a KREW_ROOT of its own. A real kubectl
// of the cluster's own version then runs it as a plugin, with nothing but
// the kubeconfig: a pod held by a finalizer on a real worker must come back
// as JSON on stdout with the finalizer's finding blocking and exit code 1,
// and its namespace must parse too. Last, `kubectl krew uninstall termlab`
// and the plugin is gone from kubectl's PATH. Only this machine's platform
// is released: the six take minutes to build, and krew installs only its
// own platform's archive anyway (the other platforms are built and
// validated by go tool mage release).
func TestKubectlTermlabPlugin(t *testing.T) {
	env := connect(t)
	if len(env.Workers) == 0 {
		t.Fatal("no real workers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	// The code under test is this module's (the test runs in test/e2e),
	// whatever checkout TERMLAB_ROOT names for the cluster.
	module, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	log := progress.Default()
	krew, err := release.BuildKrew(ctx, log, filepath.Join(project.CacheDir(), "bin"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := release.Run(ctx, release.Options{Root: module, Out: t.TempDir(), Platforms: []release.Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := lab.Kubectl(ctx, env.ControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	// The plugin's world: kubectl, krew and what krew links on PATH, no
	// KUBECONFIG, no checkout around it, the report folder under
	// XDG_STATE_HOME. Everything krew writes is under KREW_ROOT, a temporary
	// directory: nothing is left on any exit path.
	state, work := t.TempDir(), t.TempDir()
	user := release.KrewUser{Krew: krew, Kubectl: kubectl, KrewRoot: t.TempDir(), Home: t.TempDir(), Env: []string{"XDG_STATE_HOME=" + state}}
	if out, err := user.Install(ctx, rel.Manifest, rel.Artifacts[0].Path); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("kubectl krew install --manifest=%s --archive=%s:\n%s", rel.Manifest, rel.Artifacts[0].Path, out)
	}
	if bin, ok := user.Linked(release.Name); !ok {
		t.Fatalf("kubectl krew install said nothing wrong, but %s is not there", bin)
	}
	home := user.Home

	runID := lab.NewRunID(time.Now())
	ns, name := "termlab-plugin-"+runID, "held"
	const finalizer, second = "lab.example.com/plugin-test", "lab.example.com/plugin-second"
	core := env.Client.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{lab.RunIDLabel: runID}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// On every exit path: the finalizer goes, then the namespace, and the
	// test waits for it to be gone.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := core.Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(diagnose.FinalizersPatch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer after the test: %v", err)
		}
		deleteNamespaceAndWait(ctx, t, core, ns)
	})

	worker := env.Workers[0].String()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{finalizer, second}, Labels: map[string]string{lab.RunIDLabel: runID}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": worker},
			Containers: []corev1.Container{{
				Name: "heartbeat", Image: env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--interval=200ms"},
			}},
		},
	}
	if _, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRunning(ctx, t, env, ns, name)
	// kubectl delete --wait=false: the request is accepted, the finalizer
	// holds the object. A 1 s grace period: its deletionTimestamp (the grace
	// deadline) is in the past by the time -A looks with --older-than=0s.
	grace := int64(1)
	if err := core.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}

	plugin := func(args ...string) (int, []byte, string) {
		t.Helper()
		cmd := user.Command(ctx, work, append([]string{"termlab"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		t.Logf("kubectl termlab %s:\n%s", strings.Join(args, " "), stderr.String())
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return exit.ExitCode(), stdout.Bytes(), stderr.String()
		case err != nil:
			t.Fatalf("running kubectl termlab: %v", err)
		}
		return 0, stdout.Bytes(), stderr.String()
	}

	// The release krew installed is the one that runs.
	code, out, _ := plugin("version", "-o", "json")
	var info version.Info
	if err := strictJSON(out, &info); err != nil || code != 0 {
		t.Fatalf("kubectl termlab version -o json: exit %d, %v\n%s", code, err, out)
	}
	if info.Version != rel.Version || info.Commit != rel.Stamp.Commit {
		t.Errorf("kubectl termlab version says %s %s, want the release's %s %s", info.Version, info.Commit, rel.Version, rel.Stamp.Commit)
	}

	code, out, stderr := plugin("diagnose", "pod/"+name, "-n", ns, "-o", "json", "--kubeconfig", env.KubeconfigPath)
	var s diagnose.Summary
	if err := strictJSON(out, &s); err != nil {
		t.Fatalf("stdout is not a pod's summary.json alone: %v\n%s", err, out)
	}
	f, ok := s.Finding(diagnose.FindFinalizer(finalizer))
	if !ok || f.Level != diagnose.Blocking {
		t.Errorf("finding %s: %+v (found %v), want blocking; answer: %s", diagnose.FindFinalizer(finalizer), f, ok, s.Answer)
	}
	if s.Pod != ns+"/"+name || s.Node != worker {
		t.Errorf("summary of pod %q on %q, want %s/%s on %s", s.Pod, s.Node, ns, name, worker)
	}
	if code != diagnose.ExitHeld {
		t.Errorf("exit code %d, want %d (held, cause found)", code, diagnose.ExitHeld)
	}
	// The folder is under XDG_STATE_HOME, and stdout is its summary.json byte for byte.
	dir := evidenceLine(t, stderr)
	if rel, err := filepath.Rel(filepath.Join(state, "termlab", "diagnose"), dir); err != nil || strings.HasPrefix(rel, "..") {
		t.Errorf("report folder %s, want under %s", dir, filepath.Join(state, "termlab", "diagnose"))
	}
	if written, err := os.ReadFile(filepath.Join(dir, diagnose.SummaryFile)); err != nil || !bytes.Equal(written, out) {
		t.Errorf("stdout differs from %s (%v)", filepath.Join(dir, diagnose.SummaryFile), err)
	}

	code, out, _ = plugin("diagnose", "ns/"+ns, "-o", "json", "--kubeconfig", env.KubeconfigPath)
	var nsum diagnose.NamespaceSummary
	if err := strictJSON(out, &nsum); err != nil {
		t.Fatalf("stdout is not a namespace's summary.json alone: %v\n%s", err, out)
	}
	if nsum.Namespace != ns {
		t.Errorf("summary of namespace %q, want %s", nsum.Namespace, ns)
	}
	// The namespace is not deleted, but its pod is held: that pod's finding blocks.
	if f, ok := nsum.Finding(diagnose.FindPod(name)); !ok || f.Level != diagnose.Blocking || code != diagnose.ExitHeld {
		t.Errorf("finding %s: %+v (found %v), exit %d; want blocking, exit %d", diagnose.FindPod(name), f, ok, code, diagnose.ExitHeld)
	}

	// With no object, the namespace's stuck objects are listed (its pod was
	// deleted seconds ago: --older-than=0s), with its cause, and the whole
	// exits 1 (something held, cause found).
	code, out, _ = plugin("diagnose", "-n", ns, "--older-than=0s", "--kubeconfig", env.KubeconfigPath)
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "pod/"+ns+"/"+name+" ") {
			line = l
		}
	}
	if code != diagnose.ExitHeld || !strings.Contains(line, "finalizer") {
		t.Errorf("diagnose -n %s: exit %d, the held pod's line %q; want exit %d and its finalizer named:\n%s", ns, code, line, diagnose.ExitHeld, out)
	}
	code, out, _ = plugin("diagnose", "-A", "--older-than=0s", "-o", "json", "--kubeconfig", env.KubeconfigPath)
	var all diagnose.AllSummary
	if err := strictJSON(out, &all); err != nil {
		t.Fatalf("diagnose -A -o json is not the -A summary alone: %v\n%s", err, out)
	}
	found := false
	for _, r := range all.Rows {
		found = found || (r.Kind == diagnose.KindPod && r.Namespace == ns && r.Name == name && r.Code == diagnose.ExitHeld && r.Dir != "" &&
			slices.Contains(r.WhoCanRelease, "the controller of "+finalizer) && r.SafestStep != "" && r.Requests > 0)
	}
	if !found || code != diagnose.ExitHeld || all.SchemaVersion != diagnose.AllSchemaVersion {
		t.Errorf("diagnose -A -o json: exit %d, schemaVersion %d, rows %+v; want %s/%s held with its report, its finalizer's controller named, a safest step and its requests counted", code, all.SchemaVersion, all.Rows, ns, name)
	}
	// By default what has been deleting for under a minute is not stuck yet.
	if code, out, _ = plugin("diagnose", "-n", ns, "--kubeconfig", env.KubeconfigPath); code != diagnose.ExitClear || !strings.Contains(string(out), "being deleted for less than 60s") {
		t.Errorf("diagnose -n %s (--older-than 1m): exit %d, want %d and the pod left out as too young:\n%s", ns, code, diagnose.ExitClear, out)
	}

	// The advice does what it says: each "remove finalizer X" command, run
	// as printed by the real kubectl, removes X and nothing else; the last
	// one lets the deleted pod go.
	left := []string{finalizer, second}
	for _, line := range s.Advice {
		fz, cmdline, ok := removalIn(line)
		if !ok {
			continue
		}
		sh := exec.CommandContext(ctx, "sh", "-c", cmdline)
		sh.Env = []string{"PATH=" + filepath.Dir(kubectl) + string(os.PathListSeparator) + "/usr/bin:/bin", "HOME=" + home, "KUBECONFIG=" + env.KubeconfigPath}
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("the advice's command %s: %v\n%s", cmdline, err, out)
		}
		left = slices.DeleteFunc(left, func(f string) bool { return f == fz })
		p, err := core.Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case len(left) == 0 && apierrors.IsNotFound(err):
		case err != nil:
			t.Fatalf("after %s: %v", cmdline, err)
		case !slices.Equal(p.Finalizers, left):
			t.Errorf("after the advice to remove %s, the pod has finalizers %v, want %v", fz, p.Finalizers, left)
		}
	}
	if len(left) != 0 {
		t.Errorf("the advice printed no removal for %v: %q", left, s.Advice)
	}

	// krew takes it away again: no link in $KREW_ROOT/bin, and kubectl no
	// longer finds the plugin.
	if out, err := user.Uninstall(ctx, release.Name); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("kubectl krew uninstall %s:\n%s", release.Name, out)
	}
	if bin, ok := user.Linked(release.Name); ok {
		t.Errorf("uninstalled, but %s is still there", bin)
	}
	plugins, err := user.Plugins(ctx)
	if err != nil || slices.Contains(plugins, release.Binary) {
		t.Errorf("after kubectl krew uninstall, kubectl plugin list finds %q (%v)", plugins, err)
	}
	if code, _, stderr := plugin("version"); code == 0 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("kubectl termlab after uninstall: exit %d, want kubectl's unknown command:\n%s", code, stderr)
	}
}

// removalIn is the finalizer an advice line says to remove by hand and the
// command it prints for that, in backquotes.
func removalIn(line string) (finalizer, command string, ok bool) {
	rest, ok := strings.CutPrefix(line, "Risky: remove finalizer ")
	if !ok {
		return "", "", false
	}
	finalizer, _, _ = strings.Cut(rest, " ")
	_, quoted, ok := strings.Cut(rest, "`")
	command, _, ok2 := strings.Cut(quoted, "`")
	return finalizer, command, ok && ok2
}

// strictJSON decodes exactly one JSON value with only known fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// evidenceLine is the report folder the binary names on stderr.
func evidenceLine(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if dir, ok := strings.CutPrefix(l, "evidence: "); ok {
			return dir
		}
	}
	t.Fatalf("stderr names no report folder (evidence: …):\n%s", stderr)
	return ""
}
