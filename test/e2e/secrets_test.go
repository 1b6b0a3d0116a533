//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/redact"
	"github.com/termlab/termlab/internal/runlock"
)

// Bounds of TestPlantedSecretsNeverReachResults, each with its reason.
const (
	// plantedWithin bounds the cluster part: a pod start, its delete, a
	// diagnosis through kind.
	plantedWithin = 3 * time.Minute
	// plantedTermDelay keeps the workload running after SIGTERM, within
	// its grace period: the kubelet removes the container of a deleted
	// pod as soon as it has exited, and the diagnosis must find it there
	// (crictl inspect is where the environment is). The cleanup ends it
	// at once (a delete with grace 0).
	plantedTermDelay = 5 * time.Minute
	// plantedMageWithin bounds `go tool mage diagnose`, which may compile
	// this checkout's targets first.
	plantedMageWithin = 5 * time.Minute
	// plantedCleanupWithin: the finalizer off, the namespace gone.
	plantedCleanupWithin = 2 * time.Minute
)

// TestPlantedSecretsNeverReachResults plants values no file could hold by
// chance in a pod's environment, the three ways a workload gets secrets (a
// Secret's key by secretKeyRef, a whole Secret by envFrom, a literal value),
// and in kubectl's last-applied annotation; crictl on the node holds them
// all. It holds the pod Terminating with a finalizer (its workload going on
// after SIGTERM, so its container is there to inspect), runs `go tool mage
// diagnose -nodeaccess` as a user would, and then reads every file under
// results/ written since the values were made: none holds any of them, none
// was left out for looking like a credential (they were taken out, not
// caught), and the diagnosis still has the container's state from crictl
// and the env's names and references.
func TestPlantedSecretsNeverReachResults(t *testing.T) {
	env := connect(t)
	if len(env.Workers) == 0 {
		t.Fatal("the cluster has no real worker")
	}
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	apiKey, githubToken, dbPassword := plant(t, "ak"), plant(t, "ghp_"), plant(t, "pw")
	planted := []string{apiKey, githubToken, dbPassword}

	ctx, cancel := context.WithTimeout(context.Background(), plantedWithin)
	defer cancel()
	core := env.Client.CoreV1()
	runID := lab.NewRunID(time.Now())
	labels := map[string]string{lab.RunIDLabel: runID}
	ns, name := "termlab-secrets-"+runID, "planted"
	const finalizerName = "e2e.termlab.dev/hold"
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), plantedCleanupWithin)
		defer cancel()
		if _, err := core.Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(diagnose.FinalizersPatch), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer after the test: %v", err)
		}
		now := int64(0)
		if err := core.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the pod after the test: %v", err)
		}
		deleteNamespaceAndWait(ctx, t, core, ns)
	})
	// A lab's repair of earlier runs' leftovers leaves the namespace alone
	// while this test runs, and removes it if the test is killed.
	stopAlive, err := runlock.KeepAlive(ctx, env.RESTConfig, ns, runlock.Identity("e2e TestPlantedSecretsNeverReachResults "+runID))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopAlive)

	for secret, data := range map[string]map[string]string{"planted-ref": {"API_KEY": apiKey}, "planted-from": {"GITHUB_TOKEN": githubToken}} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ns, Labels: labels}, StringData: data}
		if _, err := core.Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grace := int64((plantedTermDelay + time.Minute).Seconds())
	container := corev1.Container{
		Name: "heartbeat", Image: env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Args: []string{"--interval=1s", "--term-delay=" + plantedTermDelay.String()},
		Env: []corev1.EnvVar{
			{Name: "DB_PASSWORD", Value: dbPassword},
			{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "planted-ref"}, Key: "API_KEY"}}},
		},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "planted-from"}}}},
	}
	// What `kubectl apply` keeps: the object as applied, the literal value in it.
	applied, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"containers": []corev1.Container{container}}})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Finalizers: []string{finalizerName},
			Annotations: map[string]string{redact.LastApplied: string(applied)}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: env.Workers[0].String()},
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  new(bool), EnableServiceLinks: new(bool),
			Containers: []corev1.Container{container},
		},
	}
	if _, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := waitRunning(ctx, t, env, ns, name)
	id := strings.TrimPrefix(running.Status.ContainerStatuses[0].ContainerID, "containerd://")
	t.Logf("pod Running %s after the values were made", time.Since(began).Round(100*time.Millisecond))

	// The values are there to leak: crictl on the node has all three.
	var inspect bytes.Buffer
	cmd := env.Workers[0].CommandContext(ctx, "crictl", "inspect", id)
	cmd.SetStdout(&inspect)
	if err := cmd.Run(); err != nil {
		t.Fatalf("crictl inspect %s: %v", id, err)
	}
	for _, v := range planted {
		if !bytes.Contains(inspect.Bytes(), []byte(v)) {
			t.Fatalf("crictl inspect on %s does not hold a planted value: the test plants nothing", env.Workers[0])
		}
	}

	// Deleted, it stays: Terminating, held by the finalizer, its workload
	// going on after SIGTERM.
	if err := core.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err := core.Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("pod %s/%s after its delete: %v (%v)", ns, name, p, err)
	}
	clusterPart := time.Since(began)

	// Held by its finalizer, the cause found: exit 1, as the binary exits.
	out := runMageExiting(t, root, diagnose.ExitHeld, "diagnose", "-pod="+ns+"/"+name, "-nodeaccess")
	for _, v := range planted {
		if strings.Contains(out, v) {
			t.Errorf("go tool mage diagnose printed a planted value")
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(project.ResultsDir(root), "diagnose", "*-"+ns+"-"+name))
	if len(dirs) != 1 {
		t.Fatalf("diagnose folders of %s/%s: %v\n%s", ns, name, dirs, out)
	}
	dir := dirs[0]
	t.Logf("cluster part %s; diagnosis in %s", clusterPart.Round(100*time.Millisecond), dir)

	scanned := 0
	err = filepath.WalkDir(project.ResultsDir(root), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a run of another termlab removed it meanwhile
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		// A file not written since the values were made cannot hold them.
		if info, err := d.Info(); err != nil || info.ModTime().Before(began.Add(-time.Second)) {
			return nil
		}
		scanned++
		for _, v := range holds(t, path, planted) {
			t.Errorf("%s holds the planted value %q", path, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 5 {
		t.Errorf("only %d files under results/ were written since the test began", scanned)
	}

	var summary diagnose.Summary
	if b, err := os.ReadFile(filepath.Join(dir, diagnose.SummaryFile)); err != nil || json.Unmarshal(b, &summary) != nil {
		t.Fatalf("reading %s: %v", diagnose.SummaryFile, err)
	}
	if len(summary.Dropped) > 0 {
		t.Errorf("files left out for looking like credentials: %v (the values must be taken out before the scan, not caught by it)", summary.Dropped)
	}
	b, err := os.ReadFile(filepath.Join(dir, diagnose.ContainerFile(id)))
	if err != nil {
		t.Fatalf("no crictl inspect evidence: %v", err)
	}
	if in, err := evidence.ParseInspect(b); err != nil || in.ID != id || in.State != evidence.ContainerRunning || in.PID == 0 {
		t.Errorf("%s reads %+v, %v; want container %s running, with its pid", diagnose.ContainerFile(id), in, err, id)
	}
	b, err = os.ReadFile(filepath.Join(dir, diagnose.PodFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "DB_PASSWORD"`, `"key": "API_KEY"`, `"name": "planted-from"`, `"` + redact.Marker + `"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %s", diagnose.PodFile, want)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != evidence.PrivateDir {
		t.Errorf("the diagnosis folder is %v (%v), want %v", st.Mode().Perm(), err, evidence.PrivateDir)
	}
}

// plant is a value no file holds by chance.
func plant(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// holds reads the file at path a piece at a time (a run folder's files can
// be gigabytes) and returns which of values it holds.
func holds(t *testing.T, path string, values []string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if !os.IsNotExist(err) {
			t.Errorf("reading %s: %v", path, err)
		}
		return nil
	}
	defer f.Close()
	longest := 0
	for _, v := range values {
		longest = max(longest, len(v))
	}
	found := map[string]bool{}
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 0, 1<<20+longest)
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for _, v := range values {
			found[v] = found[v] || bytes.Contains(buf, []byte(v))
		}
		if err != nil {
			break
		}
		buf = append(buf[:0], buf[len(buf)-longest:]...)
	}
	var out []string
	for _, v := range values {
		if found[v] {
			out = append(out, v)
		}
	}
	return out
}

// runMageInGroup runs `go tool mage <args>` in its own process group, as a
// person at a terminal would, and returns what it printed; a run that
// outlives its bound is killed with its whole group.
func runMageInGroup(t *testing.T, root string, args ...string) string {
	t.Helper()
	return runMageExiting(t, root, 0, args...)
}

// runMageExiting is runMageInGroup for a target that must exit with code
// (diagnose exits 1 for a held pod, as the binary does).
func runMageExiting(t *testing.T, root string, code int, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "mage"}, args...)...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting go tool mage %s: %v", args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if got := cmd.ProcessState.ExitCode(); got != code {
			t.Fatalf("go tool mage %s: exit %d, want %d (%v)\n%s", strings.Join(args, " "), got, code, err, out.String())
		}
	case <-time.After(plantedMageWithin):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("go tool mage %s did not end within %s\n%s", strings.Join(args, " "), plantedMageWithin, out.String())
	}
	return out.String()
}
