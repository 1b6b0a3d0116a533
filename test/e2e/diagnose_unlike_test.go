//go:build e2e

package e2e

// Diagnose on clusters and users unlike termlab's own (issue #21 item 6):
// a user limited to one namespace, a kubelet under another unit name, a
// controller that runs but crashes, a pod whose node object is gone, a
// namespace held by a claim in use, and --watch seeing the release. Each case
// builds its situation on the real cluster, diagnoses it as a user would, and
// asserts levels and verdicts first, text second; each assertion is one that
// the diagnose before issue #21 failed. Every object a case creates carries
// its run id (lab.RunIDLabel) and is removed in t.Cleanup on every path.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/stack"
)

// Bounds of the unlike cases, each with its reason.
const (
	// unlikeCase bounds one case's steps (cleanup has its own bound): a pod
	// start, a deletion, a diagnosis, each a few seconds on a quiet cluster.
	unlikeCase = 6 * time.Minute
	// unlikeCleanup bounds a case's cleanup: finalizers off, namespaces gone
	// (the namespace controller's retries back off to tens of seconds).
	unlikeCleanup = 4 * time.Minute
	// crashLoopWithin: a container that exits at start has restarted twice
	// within about 40 s (the kubelet's back-off: 10 s, then 20 s).
	crashLoopWithin = 90 * time.Second
	// nodeRestoreWithin: a kubelet started again renews its Lease within
	// seconds; two minutes is a node that will not come back by itself.
	nodeRestoreWithin = 2 * time.Minute
	// switchAfter arms the dead-man's switch of the kubelet case: the whole
	// case takes about a minute; a killed test leaves the node restored this
	// long after the move at the latest.
	switchAfter = 4 * time.Minute
	// watchEvery and watchWithin: diagnose.Watch's period and bound in the
	// watch case (the release comes a few seconds after its first look).
	watchEvery  = 2 * time.Second
	watchWithin = 2 * time.Minute
)

// unlikeRun is one case's run: its id, labels, finalizer group and what its
// cleanup must delete beyond the run-labelled namespaces and pods.
type unlikeRun struct {
	env    *cluster.Env
	dyn    dynamic.Interface
	root   string
	id     string
	labels map[string]string
	// group is a per-run API group: finalizers are <group>/…, an APIService
	// serves it, and nothing of a failed earlier run collides with it.
	group string
	// forceDelete: pods are deleted with grace 0 in cleanup (a pod in a long
	// grace period would hold its namespace that long).
	forceDelete bool
}

// startUnlike connects, takes the run lock (labs repair other runs'
// leftovers: none may run beside a case) and registers the cleanup of
// everything labelled with the run id, before anything is created.
func startUnlike(t *testing.T) *unlikeRun {
	t.Helper()
	env := connect(t)
	if len(env.Workers) < 2 {
		t.Fatalf("the cluster has %d real workers, want 2", len(env.Workers))
	}
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	release, err := runlock.Acquire(context.Background(), progress.Default(), env.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release) // runs last: cleanups run in reverse order
	id := lab.NewRunID(time.Now())
	r := &unlikeRun{env: env, dyn: dyn, root: root, id: id, labels: map[string]string{lab.RunIDLabel: id},
		group: "r" + strings.ReplaceAll(id, "-", "") + ".diagnose.termlab.dev"}
	t.Cleanup(func() { r.cleanup(t) })
	return r
}

func (r *unlikeRun) selector() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: lab.RunIDLabel + "=" + r.id}
}

var (
	apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	// unlikeClusterScoped are the cluster-scoped kinds a case may create:
	// cleanup deletes those labelled with the run id and checks none is left.
	unlikeClusterScoped = []schema.GroupVersionResource{
		apiServiceGVR,
		{Version: "v1", Resource: "persistentvolumes"},
		{Version: "v1", Resource: "nodes"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		crdGVR,
	}
)

// cleanup removes the finalizers of the run's pods (and force-deletes them
// when asked), deletes the run's APIServices first (an unavailable one holds
// every namespace deletion), then its namespaces and waits for them, then
// its cluster-scoped objects, and fails the test if anything is left.
func (r *unlikeRun) cleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCleanup)
	defer cancel()
	core := r.env.Client.CoreV1()
	if err := r.dyn.Resource(apiServiceGVR).DeleteCollection(ctx, metav1.DeleteOptions{}, r.selector()); err != nil {
		t.Errorf("cleanup: deleting the run's APIServices: %v", err)
	}
	if pods, err := core.Pods(metav1.NamespaceAll).List(ctx, r.selector()); err != nil {
		t.Errorf("cleanup: listing the run's pods: %v", err)
	} else {
		for _, p := range pods.Items {
			if err := lab.ReleaseFinalizers(ctx, r.env.Client, p.Namespace, p.Name); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			if r.forceDelete {
				zero := int64(0)
				if err := core.Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("cleanup: force-deleting pod %s/%s: %v", p.Namespace, p.Name, err)
				}
			}
		}
	}
	if nss, err := core.Namespaces().List(ctx, r.selector()); err != nil {
		t.Errorf("cleanup: listing the run's namespaces: %v", err)
	} else {
		for _, ns := range nss.Items {
			if err := core.Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: deleting namespace %s: %v", ns.Name, err)
			}
		}
	}
	var left string
	nudged := time.Now()
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		nss, err := core.Namespaces().List(ctx, r.selector())
		if err != nil {
			return false, nil
		}
		// The namespace controller requeues a namespace after half its pods'
		// grace period (150 s for a 300 s one) or a back-off of up to a
		// minute; a metadata change requeues it within seconds.
		nudge := time.Since(nudged) > 10*time.Second
		if nudge {
			nudged = time.Now()
		}
		left = ""
		for _, ns := range nss.Items {
			left += fmt.Sprintf(" %s (%s %v)", ns.Name, ns.Status.Phase, ns.Status.Conditions)
			if nudge {
				p := fmt.Sprintf(`{"metadata":{"annotations":{"termlab.dev/requeue":"%d"}}}`, nudged.Unix())
				_, _ = core.Namespaces().Patch(ctx, ns.Name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
			}
		}
		return len(nss.Items) == 0, nil
	}); err != nil {
		t.Errorf("cleanup: namespaces of run %s still there:%s", r.id, left)
	}
	for _, gvr := range unlikeClusterScoped {
		res := r.dyn.Resource(gvr)
		if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, r.selector()); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: deleting the run's %s: %v", gvr.Resource, err)
		}
		if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			l, err := res.List(ctx, r.selector())
			return err == nil && len(l.Items) == 0, nil
		}); err != nil {
			t.Errorf("cleanup: %s of run %s still there", gvr.Resource, r.id)
		}
	}
}

// namespace creates a namespace of the run and waits until it can hold pods.
func (r *unlikeRun) namespace(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	name := prefix + "-" + r.id
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: r.labels}}
	if _, err := r.env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	if err := cluster.WaitNamespaceReady(ctx, r.env.Client, name, time.Minute); err != nil {
		t.Fatal(err)
	}
	return name
}

// heldPod is a heartbeat pod on node with finalizer f, added by manager
// (the field manager of the create; "" for the client's default).
type heldPod struct {
	name, node, finalizer, manager string
	grace                          int64
	// args are heartbeat's (default: a beat a second, exit at once on SIGTERM).
	args []string
	// volumes are mounted at /data<i>.
	claims []string
}

func (r *unlikeRun) pod(ns string, h heldPod) *corev1.Pod {
	if h.grace == 0 {
		h.grace = 2
	}
	if h.args == nil {
		h.args = []string{"--interval=1s", "--term-delay=0s"}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: h.name, Namespace: ns, Labels: r.labels},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: h.node},
			TerminationGracePeriodSeconds: &h.grace,
			AutomountServiceAccountToken:  new(bool), EnableServiceLinks: new(bool),
			Containers: []corev1.Container{{Name: "heartbeat", Image: r.env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent, Args: h.args}},
		},
	}
	if h.finalizer != "" {
		p.Finalizers = []string{h.finalizer}
	}
	for i, c := range h.claims {
		v := fmt.Sprintf("data%d", i)
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: v, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v, MountPath: "/" + v})
	}
	return p
}

// runPod creates the pod and waits until it is Running.
func (r *unlikeRun) runPod(ctx context.Context, t *testing.T, p *corev1.Pod, manager string) {
	t.Helper()
	if _, err := r.env.Client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{FieldManager: manager}); err != nil {
		t.Fatalf("creating pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	waitRunning(ctx, t, r.env, p.Namespace, p.Name)
}

// deleteAndWaitStopped deletes the pod and waits until its kubelet (or
// kwok) has stopped it: its finalizer keeps the object, Terminating.
func (r *unlikeRun) deleteAndWaitStopped(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	if err := r.env.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting pod %s/%s: %v", ns, name, err)
	}
	var last *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := r.env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	}); err != nil {
		t.Fatalf("pod %s/%s was not stopped within a minute of its deletion (%v); last phase %v", ns, name, err, phaseOf(last))
	}
	return last
}

func phaseOf(p *corev1.Pod) string {
	if p == nil {
		return "unknown"
	}
	return string(p.Status.Phase)
}

// diagnosePod runs diagnose on the pod and logs what it printed and how long it took.
func (r *unlikeRun) diagnosePod(ctx context.Context, t *testing.T, src diagnose.Source, ns, name string) diagnose.Report {
	t.Helper()
	res, err := diagnose.Run(ctx, src, ns, name, project.ResultsDir(r.root))
	if err != nil {
		t.Fatalf("diagnose %s/%s: %v", ns, name, err)
	}
	logDiagnosis(t, ns+"/"+name, res)
	return res.Summary.Report
}

func logDiagnosis(t *testing.T, what string, res diagnose.Result) {
	t.Helper()
	checkReplay(t, res.Dir)
	var b strings.Builder
	for _, f := range res.Summary.Report.Findings {
		fmt.Fprintf(&b, "\n  %s %s/%s: %s", f.ID, f.Level, f.Verdict, f.Text)
	}
	t.Logf("diagnose %s took %s (%s)\nanswer: %s\nfindings:%s\nadvice:\n  %s", what, res.Took.Round(time.Millisecond), res.Dir,
		res.Summary.Report.Answer, b.String(), strings.Join(res.Summary.Report.Advice, "\n  "))
}

// ownSource is diagnose's source on termlab's own cluster (kind node access).
func ownSource(ctx context.Context, t *testing.T) diagnose.Source {
	t.Helper()
	src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cleanup(context.Background()); err != nil {
			t.Errorf("diagnose's cleanup: %v", err)
		}
	})
	return src
}

// mustFinding is the finding id with the level and verdict wanted.
func mustFinding(t *testing.T, r diagnose.Report, id string, level diagnose.Level, verdict string) diagnose.Finding {
	t.Helper()
	f, ok := r.Finding(id)
	switch {
	case !ok:
		t.Errorf("no finding %s among %v", id, findingIDs(r))
	case f.Level != level || (verdict != "" && f.Verdict != verdict):
		t.Errorf("%s is %s/%s, want %s/%s: %s", id, f.Level, f.Verdict, level, verdict, f.Text)
	}
	return f
}

func findingIDs(r diagnose.Report) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

func wantIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func wantNotIn(t *testing.T, what, text string, never ...string) {
	t.Helper()
	for _, n := range never {
		if strings.Contains(text, n) {
			t.Errorf("%s says %q:\n%s", what, n, text)
		}
	}
}

// TestDiagnoseAsNamespaceLimitedUser diagnoses a pod held by a finalizer as
// a ServiceAccount that may read pods and events in its namespace only, the
// way a developer on a shared cluster would. It may not read the node or its
// Lease, nor list pods cluster-wide: those are "not checked", never "the node
// does not exist" (what diagnose said before issue #21) or "no controller runs".
func TestDiagnoseAsNamespaceLimitedUser(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-limited")
	worker := r.env.Workers[0].String()
	finalizer := r.group + "/cleanup"

	const sa = "limited-diagnose"
	rbac := r.env.Client.RbacV1()
	if _, err := r.env.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: r.labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: r.labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: r.labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(600)
	tok, err := r.env.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s: %v", sa, err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "limited.kubeconfig")
	writeTokenKubeconfig(t, r.env, kubeconfig, tok.Status.Token)

	// The finalizer is added by a controller-like field manager: the
	// controller check must then look for it, cluster-wide.
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: worker, finalizer: finalizer}), widgetOperator)
	r.deleteAndWaitStopped(ctx, t, ns, "held")

	no := false
	src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), kubeconfig, &no)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup(context.Background())
	// The premise: these credentials really may not read the node.
	if _, err := src.Client.CoreV1().Nodes().Get(ctx, worker, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the limited user reading node %s: %v, want Forbidden", worker, err)
	}
	rep := r.diagnosePod(ctx, t, src, ns, "held")

	n := mustFinding(t, rep, diagnose.FindNodeReady, diagnose.NotChecked, "not checked")
	wantIn(t, "node.ready", n.Text, "forbidden")
	l := mustFinding(t, rep, diagnose.FindNodeLease, diagnose.NotChecked, "not checked")
	wantIn(t, "node.lease", l.Text, "forbidden")
	f := mustFinding(t, rep, diagnose.FindFinalizer(finalizer), diagnose.Blocking, "holds the object")
	wantIn(t, "the finalizer finding", f.Text, "added by "+widgetOperator, "Whether a controller that could remove it runs was not checked", "forbidden")
	wantNotIn(t, "the finalizer finding", f.Text, "A controller that could remove it runs", "No controller that could remove it runs")
	mustFinding(t, rep, diagnose.FindDryRun, diagnose.Info, "accepted")
	for _, f := range rep.Findings {
		if f.Verdict == "missing" {
			t.Errorf("%s has verdict missing: %s", f.ID, f.Text)
		}
		wantNotIn(t, f.ID, f.Text, "does not exist", "no longer exists")
	}
	wantNotIn(t, "the answer", rep.Answer, "does not exist", "missing", "no longer exists", "NotReady", "whose controller is not running", "whose controller runs")
	wantIn(t, "the answer", rep.Answer, "held by finalizer "+finalizer, "whether a controller that removes it runs was not checked")
}

// writeTokenKubeconfig writes a kubeconfig (0600) for the API server of
// env with only a bearer token: no client certificate of the admin.
func writeTokenKubeconfig(t *testing.T, env *cluster.Env, path, token string) {
	t.Helper()
	ca := env.RESTConfig.TLSClientConfig.CAData
	if len(ca) == 0 && env.RESTConfig.TLSClientConfig.CAFile != "" {
		b, err := os.ReadFile(env.RESTConfig.TLSClientConfig.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		ca = b
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["termlab"] = &clientcmdapi.Cluster{Server: env.RESTConfig.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos["limited"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["limited"] = &clientcmdapi.Context{Cluster: "termlab", AuthInfo: "limited"}
	cfg.CurrentContext = "limited"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// nodeRun runs argv on a node through the exec seam and returns its output;
// the error names the command, the node and what it printed.
func nodeRun(ctx context.Context, node cluster.Node, argv ...string) (string, error) {
	var out bytes.Buffer
	cmd := node.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SetStdout(&out)
	cmd.SetStderr(&out)
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s on %s: %w: %s", strings.Join(argv, " "), node, err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// altUnit moves a kind node's kubelet under another systemd unit name: the
// kubelet runs on, but `systemctl show kubelet` says LoadState=not-found, as
// on k3s, RKE2 or microk8s.
type altUnit struct {
	node cluster.Node
	// unit, dropIns: kind's kubelet unit and its drop-in folder; alt and
	// altDropIns their copies; backup holds the originals while moved.
	unit, dropIns, alt, altDropIns, backup string
	// switchUnit is the dead-man's switch's transient unit.
	switchUnit string
}

const systemdDir = "/etc/systemd/system"

func newAltUnit(node cluster.Node, runID string) altUnit {
	return altUnit{node: node,
		unit: systemdDir + "/kubelet.service", dropIns: systemdDir + "/kubelet.service.d",
		alt: systemdDir + "/kubelet-alt.service", altDropIns: systemdDir + "/kubelet-alt.service.d",
		backup: "/var/lib/termlab-kubelet-unit-" + runID, switchUnit: kubelet.Unit(runID)}
}

// restoreSteps put the kubelet back under its own name; each is harmless
// when there is nothing to undo. A step's failure does not stop the next
// (the last ones are what matter). The backup is removed only once copied back.
func (a altUnit) restoreSteps() [][]string {
	return [][]string{
		{"systemctl", "stop", "kubelet-alt.service"},
		{"rm", "-rf", a.alt, a.altDropIns},
		{"cp", "-a", a.backup + "/.", systemdDir + "/"},
		{"systemctl", "daemon-reload"},
		{"systemctl", "start", "kubelet.service"},
	}
}

// switchCommand arms the dead-man's switch: a transient timer inside the
// node that runs the restore steps after `after` unless disarmed, so a
// killed test leaves a working kubelet behind (internal/kubelet does the
// same around its stops). One /bin/sh script, since the steps must run
// together after this process is gone; no $ or % in it (systemd would expand them).
func (a altUnit) switchCommand(after time.Duration) []string {
	var parts []string
	for i, s := range a.restoreSteps() {
		line := strings.Join(s, " ")
		if i == 2 {
			line += " && rm -rf " + a.backup
		}
		parts = append(parts, line)
	}
	return []string{"systemd-run", "--unit=" + a.switchUnit, "--description=termlab e2e: put the kubelet back under its own unit",
		fmt.Sprintf("--on-active=%ds", int(after/time.Second)), "--timer-property=AccuracySec=1s",
		"/bin/sh", "-c", strings.Join(parts, "; ")}
}

// move copies the unit and its drop-ins under the other name, stops the
// kubelet, moves the originals to the backup, reloads systemd and starts the
// copy. It returns when the copy has been started.
func (a altUnit) move(ctx context.Context) error {
	for _, argv := range [][]string{
		{"cp", "-a", a.unit, a.alt},
		{"cp", "-a", a.dropIns, a.altDropIns},
		{"systemctl", "stop", "kubelet.service"},
		{"mkdir", "-p", a.backup},
		{"mv", a.unit, a.dropIns, a.backup + "/"},
		{"systemctl", "daemon-reload"},
		{"systemctl", "start", "kubelet-alt.service"},
	} {
		if _, err := nodeRun(ctx, a.node, argv...); err != nil {
			return err
		}
	}
	return nil
}

// restore runs the restore steps, then the checks that they worked: the
// unit named kubelet loaded and active, the backup gone. Then it disarms the switch.
func (a altUnit) restore(ctx context.Context) error {
	var notes []string
	for i, argv := range a.restoreSteps() {
		if _, err := nodeRun(ctx, a.node, argv...); err != nil {
			notes = append(notes, err.Error())
			continue
		}
		if i == 2 {
			if _, err := nodeRun(ctx, a.node, "rm", "-rf", a.backup); err != nil {
				notes = append(notes, err.Error())
			}
		}
	}
	u, out, err := kubelet.UnitOf(ctx, a.node)
	if err != nil || !u.Loaded() || u.Active != "active" {
		return fmt.Errorf("the kubelet unit on %s after the restore: %+v %v (%s); the steps said: %s", a.node, u, err, strings.TrimSpace(out), strings.Join(notes, "; "))
	}
	if _, err := nodeRun(ctx, a.node, "test", "-e", a.backup); err == nil {
		return fmt.Errorf("the backup %s is still on %s: the originals were not copied back (%s)", a.backup, a.node, strings.Join(notes, "; "))
	}
	return a.disarm(ctx)
}

// disarm stops the switch's timer; one that already fired is gone (not loaded).
func (a altUnit) disarm(ctx context.Context) error {
	_, err := nodeRun(ctx, a.node, "systemctl", "stop", a.switchUnit+".timer")
	if err != nil && !strings.Contains(err.Error(), "not loaded") {
		return err
	}
	_, _ = nodeRun(ctx, a.node, "systemctl", "reset-failed", a.switchUnit+".service")
	return nil
}

// waitHeartbeat waits until the node's Lease was renewed after since and
// the node is Ready: a kubelet that runs and talks to the API server.
func waitHeartbeat(ctx context.Context, env *cluster.Env, node string, since time.Time, within time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, within, true, func(ctx context.Context) (bool, error) {
		l, err := env.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			last = fmt.Sprintf("lease: %v", err)
			return false, nil
		}
		n, err := env.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			last = fmt.Sprintf("node: %v", err)
			return false, nil
		}
		last = fmt.Sprintf("lease renewed %s, Ready %v", l.Spec.RenewTime.UTC().Format(time.RFC3339Nano), cluster.NodeReady(n))
		return l.Spec.RenewTime.After(since) && cluster.NodeReady(n), nil
	})
	if err != nil {
		return fmt.Errorf("node %s: no Lease renewal after %s with the node Ready within %s (%v); last: %s", node, since.UTC().Format(time.RFC3339), within, err, last)
	}
	return nil
}

// TestDiagnoseKubeletUnderAnotherUnitName runs the kubelet of the second
// worker from a copy of its unit under another name, as on nodes where the
// kubelet is not systemd's "kubelet" (k3s, RKE2, microk8s). The node stays
// Ready with a fresh Lease; diagnose must say the kubelet was not checked
// (no systemd unit named kubelet), never that it is not running, and never
// advise starting it (what it said before issue #21). The node is restored
// in t.Cleanup, and by a dead-man's switch inside the node if the test dies.
func TestDiagnoseKubeletUnderAnotherUnitName(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	node := r.env.Workers[1]
	name := node.String()
	a := newAltUnit(node, r.id)

	// Look before touching: kind's unit and drop-ins where this test moves them.
	cat, err := nodeRun(ctx, node, "systemctl", "cat", "kubelet.service")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("systemctl cat kubelet on %s:\n%s", name, cat)
	if !strings.Contains(cat, "# "+a.unit+"\n") || !strings.Contains(cat, "# "+a.dropIns+"/") {
		t.Fatalf("the kubelet unit on %s is not %s with drop-ins in %s/: adapt the test", name, a.unit, a.dropIns)
	}
	if u, out, err := kubelet.UnitOf(ctx, node); err != nil || !u.Loaded() || u.Active != "active" {
		t.Fatalf("the kubelet on %s is not loaded and active before the test (%+v, %v: %s): not touching it", name, u, err, out)
	}

	// Restore on every path, registered before anything moves; it runs
	// before the namespace cleanup (reverse order), so the node is back first.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), nodeRestoreWithin+time.Minute)
		defer cancel()
		began := time.Now()
		if err := a.restore(ctx); err != nil {
			t.Errorf("NODE %s NOT RESTORED: %v. By hand: docker exec %s sh -c 'systemctl stop kubelet-alt; rm -rf %s %s; cp -a %s/. %s/ && rm -rf %s; systemctl daemon-reload; systemctl start kubelet'",
				name, err, name, a.alt, a.altDropIns, a.backup, systemdDir, a.backup)
			return
		}
		if err := waitHeartbeat(ctx, r.env, name, began, nodeRestoreWithin); err != nil {
			t.Errorf("NODE %s NOT BACK after the restore: %v", name, err)
			return
		}
		t.Logf("node %s restored: the kubelet runs under its own unit again, Lease renewed, Ready (%s)", name, time.Since(began).Round(time.Millisecond))
	})
	if _, err := nodeRun(ctx, node, a.switchCommand(switchAfter)...); err != nil {
		t.Fatalf("arming the dead-man's switch: %v", err)
	}
	moved := time.Now()
	if err := a.move(ctx); err != nil {
		t.Fatalf("moving the kubelet to kubelet-alt.service: %v", err)
	}
	if err := waitHeartbeat(ctx, r.env, name, moved, nodeRestoreWithin); err != nil {
		t.Fatalf("the kubelet under kubelet-alt.service: %v", err)
	}
	u, out, err := kubelet.UnitOf(ctx, node)
	if err != nil || u.Load != "not-found" {
		t.Fatalf("after the move %s says %q (%v), want LoadState=not-found", kubelet.UnitCommand, out, err)
	}
	t.Logf("the kubelet of %s runs as kubelet-alt.service; %s says: %s", name, kubelet.UnitCommand, strings.Join(strings.Fields(out), " "))

	ns := r.namespace(ctx, t, "diag-altunit")
	finalizer := r.group + "/cleanup"
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: name, finalizer: finalizer}), "")
	r.deleteAndWaitStopped(ctx, t, ns, "held")
	rep := r.diagnosePod(ctx, t, ownSource(ctx, t), ns, "held")

	k := mustFinding(t, rep, diagnose.FindKubelet, diagnose.NotChecked, "not checked")
	wantIn(t, "node.kubelet", k.Text, "no systemd unit named kubelet")
	mustFinding(t, rep, diagnose.FindNodeReady, diagnose.Info, "Ready")
	mustFinding(t, rep, diagnose.FindNodeLease, diagnose.Info, "fresh")
	mustFinding(t, rep, diagnose.FindFinalizer(finalizer), diagnose.Blocking, "holds the object")
	// The kubelet is never called stopped (the finalizer's controller may
	// well be "not running": nothing runs for a test's finalizer).
	wantNotIn(t, "the answer", rep.Answer, "kubelet on "+node.String()+" is not running", "The kubelet on")
	wantIn(t, "the answer", rep.Answer, "held by finalizer "+finalizer)
	for _, adv := range rep.Advice {
		wantNotIn(t, "advice", adv, "start the kubelet", "systemctl start kubelet")
	}
}

// TestDiagnoseCrashingOperator holds a pod with a finalizer added by field
// manager "manager" (kubebuilder's default) while the operator whose
// container is named manager crashes at start. Its pod is in phase Running
// (CrashLoopBackOff is a waiting container of a running pod), which diagnose
// before issue #21 took for "a controller that could remove it runs".
func TestDiagnoseCrashingOperator(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-crash")
	worker := r.env.Workers[0].String()
	const manager = "manager"
	finalizer := r.group + "/cleanup"

	// The operator: heartbeat with an interval it refuses, so it exits 2 at start.
	one := int32(1)
	opLabels := map[string]string{lab.RunIDLabel: r.id, "app": "widget-operator"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-operator", Labels: r.labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: opLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: opLabels},
				Spec: corev1.PodSpec{
					NodeSelector:                 map[string]string{corev1.LabelHostname: worker},
					AutomountServiceAccountToken: new(bool), EnableServiceLinks: new(bool),
					Containers: []corev1.Container{{Name: manager, Image: r.env.WorkloadImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{"--interval=0s"}}},
				},
			},
		},
	}
	if _, err := r.env.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The operator's container state as the kubelet reports it. Kubelet
	// v1.37 requeues a pod in back-off only when the back-off ends
	// (pod_workers.go completeWork: MinBackoffExpiration), and writes
	// "waiting: CrashLoopBackOff" only on a sync in between: without another
	// event the status shows the last exit (terminated, Error) all through
	// the back-off. Both are a crash loop; restarts ≥ 2 make sure the last
	// exit is in lastState too, whatever the current state shows.
	type opState struct {
		summary string
		loop    bool // waiting CrashLoopBackOff
		crashes int32
	}
	operator := func(ctx context.Context) (opState, bool) {
		l, err := r.env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=widget-operator"})
		if err != nil || len(l.Items) != 1 || len(l.Items[0].Status.ContainerStatuses) != 1 {
			return opState{summary: fmt.Sprintf("%v", err)}, false
		}
		p := l.Items[0]
		cs := p.Status.ContainerStatuses[0]
		st := opState{crashes: cs.RestartCount, summary: fmt.Sprintf("%s phase %s, restarts %d, state %+v, lastState %+v", p.Name, p.Status.Phase, cs.RestartCount, cs.State, cs.LastTerminationState)}
		st.loop = cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
		crashed := st.loop || (cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0)
		return st, p.Status.Phase == corev1.PodRunning && cs.RestartCount >= 2 && crashed && !cs.Ready
	}
	crashing := func() opState {
		var last opState
		if err := wait.PollUntilContextTimeout(ctx, time.Second, crashLoopWithin, true, func(ctx context.Context) (bool, error) {
			st, ok := operator(ctx)
			last = st
			return ok, nil
		}); err != nil {
			t.Fatalf("the operator's pod was not crash-looping (2 restarts, waiting in CrashLoopBackOff or exited non-zero) within %s (%v): %s", crashLoopWithin, err, last.summary)
		}
		return last
	}
	t.Logf("operator: %s", crashing().summary)

	// The held pod: created without the finalizer, then "manager" adds it,
	// so managedFields name manager as the one who added it.
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: worker}), "")
	patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, finalizer)
	held, err := r.env.Client.CoreV1().Pods(ns).Patch(ctx, "held", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager})
	if err != nil {
		t.Fatal(err)
	}
	if m := diagnose.FinalizerManager(held, finalizer); m != manager {
		t.Fatalf("managedFields name %q as who added %s, want %s", m, finalizer, manager)
	}
	// The premise: no other running pod in the cluster looks like controller "manager".
	all, err := r.env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range all.Items {
		if p := &all.Items[i]; p.Namespace != ns && diagnose.ControllerPodMatch(p, manager) != "" {
			t.Fatalf("%s also matches controller %q: this case needs the crashing operator to be the only one", diagnose.ControllerPodMatch(p, manager), manager)
		}
	}
	r.deleteAndWaitStopped(ctx, t, ns, "held")
	src := ownSource(ctx, t)
	// Diagnose at a moment the operator is in its back-off (10 s and more),
	// not the instant of a restart; its state read just before and after
	// says what the diagnosis saw.
	before := crashing()
	rep := r.diagnosePod(ctx, t, src, ns, "held")
	after, _ := operator(ctx)
	t.Logf("operator before the diagnosis: %s\noperator after: %s", before.summary, after.summary)

	f := mustFinding(t, rep, diagnose.FindFinalizer(finalizer), diagnose.Blocking, "holds the object")
	wantIn(t, "the finalizer finding", f.Text, "added by "+manager, "running, but failing", "widget-operator", "is not Ready",
		fmt.Sprintf("container %s restarted", manager), "exit 2, Error")
	if before.loop && after.loop && before.crashes == after.crashes {
		wantIn(t, "the finalizer finding", f.Text, "CrashLoopBackOff")
	} else {
		t.Logf("the kubelet did not report waiting: CrashLoopBackOff around the diagnosis: the finding rests on the restarts and the exit")
	}
	wantNotIn(t, "the finalizer finding", f.Text, "A controller that could remove it runs")
	wantIn(t, "the answer", rep.Answer, "whose controller is running, but failing")
	wantNotIn(t, "the answer", rep.Answer, "whose controller runs (")
	advice := strings.Join(rep.Advice, "\n")
	wantIn(t, "the advice", advice, "Safe: fix the controller that owns "+finalizer)
}

// TestDiagnosePodOnDeletedNode deletes the Node object under a pod held by a
// finalizer (a kwok fake node the test made, so nothing real goes). Only
// then may diagnose say the node is missing; its answer names the pod
// garbage collector and why it cannot finish (the finalizer), and its advice
// does not send the user to -nodeaccess for a node that is not there.
func TestDiagnosePodOnDeletedNode(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-gone-node")
	finalizer := r.group + "/cleanup"

	// Like labs/scale's fake nodes: kwok plays it; only this run's pods select it.
	nodeName := "diag-gone-" + r.id
	n := kwok.FakeNode(nodeName)
	delete(n.Labels, kwok.FakeNodeTypeLabel)
	delete(n.Labels, "app.kubernetes.io/managed-by")
	n.Labels[lab.RunIDLabel] = r.id
	if _, err := r.env.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{FieldManager: kwok.FieldManager}); err != nil {
		t.Fatal(err)
	}
	if err := lab.WaitNodeReady(ctx, r.env, nodeName, time.Minute); err != nil {
		t.Fatalf("kwok did not make fake node %s Ready (is kwok running? go tool mage cluster:status): %v", nodeName, err)
	}
	p := r.pod(ns, heldPod{name: "held", node: nodeName, finalizer: finalizer})
	p.Spec.Tolerations = []corev1.Toleration{{Key: kwok.FakeNodeAnnotation, Operator: corev1.TolerationOpEqual, Value: kwok.FakeNodeAnnotationValue, Effect: corev1.TaintEffectNoSchedule}}
	r.runPod(ctx, t, p, "")
	r.deleteAndWaitStopped(ctx, t, ns, "held")
	if err := r.env.Client.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := r.env.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("node %s still there after its delete: %v", nodeName, err)
	}
	rep := r.diagnosePod(ctx, t, ownSource(ctx, t), ns, "held")

	nr := mustFinding(t, rep, diagnose.FindNodeReady, diagnose.Blocking, "missing")
	wantIn(t, "node.ready", nr.Text, "does not exist", "pod garbage collector")
	mustFinding(t, rep, diagnose.FindFinalizer(finalizer), diagnose.Blocking, "holds the object")
	wantIn(t, "the answer", rep.Answer, "node "+nodeName+" no longer exists", "pod garbage collector", finalizer)
	for _, adv := range rep.Advice {
		wantNotIn(t, "advice", adv, "-nodeaccess", "start the kubelet")
	}
}

// claimOnWorker makes a hostPath PersistentVolume on worker (a folder under
// /tmp of the node, removed in cleanup) and a claim in ns bound to it by
// name, and waits until it is Bound. It returns the claim's name.
func (r *unlikeRun) claimOnWorker(ctx context.Context, t *testing.T, ns string, worker cluster.Node) string {
	t.Helper()
	dir := "/tmp/termlab-" + r.id
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := nodeRun(ctx, worker, "rm", "-rf", dir); err != nil {
			t.Errorf("cleanup: removing the hostPath folder: %v", err)
		}
	})
	pvName := "diag-pvc-" + r.id
	hostPathType := corev1.HostPathDirectoryOrCreate
	size := resource.MustParse("1Mi")
	empty := ""
	if _, err := r.env.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Labels: r.labels},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPathType}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{worker.String()}}},
			}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const claim = "data"
	if _, err := r.env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Labels: r.labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &empty, VolumeName: pvName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := r.env.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound, nil
	}); err != nil {
		t.Fatalf("claim %s never Bound to %s: %v", claim, pvName, err)
	}
	return claim
}

// deleteNamespaceUntil deletes the namespace and waits until the namespace
// controller has acted on it (its deletion conditions written) and pod
// satisfies done. With pods left the controller reports no
// ContentRemaining (ordered deletion returns before counting anything but
// pods: pkg/controller/namespace/deletion deleteAllContent), so that is not
// what is waited for.
func (r *unlikeRun) deleteNamespaceUntil(ctx context.Context, t *testing.T, ns, pod string, done func(*corev1.Pod) bool) {
	t.Helper()
	if err := r.env.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := r.env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		p, err := r.env.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = fmt.Sprintf("namespace %s, conditions:", n.Status.Phase)
		for _, c := range n.Status.Conditions {
			last += fmt.Sprintf(" %s=%s (%s)", c.Type, c.Status, c.Message)
		}
		last += fmt.Sprintf("; pod %s, deletionTimestamp %v", p.Status.Phase, p.DeletionTimestamp)
		return len(n.Status.Conditions) > 0 && p.DeletionTimestamp != nil && done(p), nil
	}); err != nil {
		t.Fatalf("namespace %s never reached the state to diagnose: %v; last: %s", ns, err, last)
	}
	t.Logf("%s after the namespace delete: %s", time.Since(deleted).Round(time.Millisecond), last)
}

// TestDiagnosePVCInUse deletes a namespace whose pod uses a claim. The
// namespace controller deletes pods first; the pod is in its grace period,
// still Running, and carries a finalizer. Diagnose of the namespace must
// name the pod as what keeps the claim (the PVC protection controller's
// finalizer), and advise letting it go, not stripping kubernetes.io/pvc-protection.
func TestDiagnosePVCInUse(t *testing.T) {
	r := startUnlike(t)
	// The pod's grace period is long: cleanup force-deletes it.
	r.forceDelete = true
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-pvc")
	worker := r.env.Workers[0]
	claim := r.claimOnWorker(ctx, t, ns, worker)
	// Heartbeat beats on for 4 minutes after SIGTERM, within a 5-minute
	// grace period: the pod stays Running while the namespace is deleted.
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: worker.String(), finalizer: r.group + "/cleanup", grace: 300,
		args: []string{"--interval=1s", "--term-delay=240s"}, claims: []string{claim}}), "")
	r.deleteNamespaceUntil(ctx, t, ns, "held", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	res, err := diagnose.RunNamespace(ctx, ownSource(ctx, t), ns, project.ResultsDir(r.root))
	if err != nil {
		t.Fatal(err)
	}
	logDiagnosis(t, "namespace "+ns, res)
	rep := res.Summary.Report
	f := mustFinding(t, rep, diagnose.FindFinalizer(diagnose.PVCProtection), diagnose.Blocking, "holds the namespace")
	wantIn(t, "the pvc-protection finding", f.Text, "persistentvolumeclaims/"+claim+" is in use by held (Running)")
	mustFinding(t, rep, diagnose.FindNSOrdered, diagnose.Blocking, "waiting on pods")
	wantIn(t, "the answer", rep.Answer, "persistentvolumeclaims/"+claim+" is in use by held (Running)")
	wantNotIn(t, "the answer", rep.Answer, "No pod uses")
	advice := strings.Join(rep.Advice, "\n")
	wantIn(t, "the advice", advice, "pods that still use the claims: held (Running)")
	wantNotIn(t, "the advice", advice, "kubectl patch persistentvolumeclaims "+claim)
}

// TestDiagnosePVCOfAStoppedPod is TestDiagnosePVCInUse after the kubelet
// has stopped the pod: its finalizer keeps it, in phase Succeeded. The PVC
// protection controller (k8s v1.37.2 pkg/controller/volume/pvcprotection
// podUsesPVCForDeletion) counts every scheduled pod that still exists and
// names the claim in a persistentVolumeClaim volume, whatever its phase:
// the claim stays while this pod does. The test shows it on the cluster
// itself (the claim, deleted, keeps its finalizer while the pod is there)
// and wants diagnose to say the same, never "no pod uses it".
func TestDiagnosePVCOfAStoppedPod(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-pvc-stopped")
	worker := r.env.Workers[0]
	claim := r.claimOnWorker(ctx, t, ns, worker)
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: worker.String(), finalizer: r.group + "/cleanup", claims: []string{claim}}), "")
	r.deleteNamespaceUntil(ctx, t, ns, "held", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})

	res, err := diagnose.RunNamespace(ctx, ownSource(ctx, t), ns, project.ResultsDir(r.root))
	if err != nil {
		t.Fatal(err)
	}
	logDiagnosis(t, "namespace "+ns, res)
	rep := res.Summary.Report

	// What the controller does: the claim, deleted now, keeps its
	// finalizer while the stopped pod exists. The controller acts on a
	// claim's update within a second; a claim it found unused would be
	// gone long before kept ends.
	const kept = 20 * time.Second
	if err := r.env.Client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var still *corev1.PersistentVolumeClaim
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, kept, true, func(ctx context.Context) (bool, error) {
		c, err := r.env.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		still = c
		return false, nil
	})
	if err == nil {
		t.Fatalf("the PVC protection controller let claim %s go while the stopped pod held exists: this test's premise is wrong", claim)
	}
	t.Logf("claim %s deleted %s ago still has finalizers %v: the PVC protection controller counts the stopped pod as its user", claim, kept, still.Finalizers)

	f := mustFinding(t, rep, diagnose.FindFinalizer(diagnose.PVCProtection), diagnose.Blocking, "holds the namespace")
	wantIn(t, "the pvc-protection finding", f.Text, "persistentvolumeclaims/"+claim+" is in use by held (")
	wantNotIn(t, "the pvc-protection finding", f.Text, "No pod uses", "should remove it at its next look")
	wantNotIn(t, "the answer", rep.Answer, "No pod uses", "should remove it at its next look")
}

// TestDiagnoseWatchSeesTheRelease watches a pod held by a finalizer with
// diagnose.Watch, removes the finalizer by hand once Watch has looked, and
// checks that Watch ends by itself with the pod gone and says when. The pod
// takes 10 s to stop after SIGTERM, so the finalizer goes while the pod is
// still there: Watch must then say both, the removal and later the pod gone.
func TestDiagnoseWatchSeesTheRelease(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-watch")
	finalizer := r.group + "/cleanup"
	r.runPod(ctx, t, r.pod(ns, heldPod{name: "held", node: r.env.Workers[0].String(), finalizer: finalizer, grace: 30,
		args: []string{"--interval=1s", "--term-delay=10s"}}), "")
	if err := r.env.Client.CoreV1().Pods(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	src := ownSource(ctx, t)

	var looks atomic.Int32
	var mu sync.Mutex
	var lines []string
	type watched struct {
		last diagnose.Look
		err  error
		took time.Duration
	}
	done := make(chan watched, 1)
	wctx, wcancel := context.WithTimeout(ctx, watchWithin)
	defer wcancel()
	began := time.Now()
	go func() {
		last, err := diagnose.Watch(wctx, watchEvery, func(ctx context.Context) (diagnose.Look, error) {
			defer looks.Add(1)
			return diagnose.PodLook(ctx, src, ns, "held")
		}, func(s string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, s)
		})
		done <- watched{last, err, time.Since(began)}
	}()
	// Reaching a state: Watch has looked twice (its first look and one compared with it).
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return looks.Load() >= 2, nil
	}); err != nil {
		t.Fatalf("Watch did not look twice within a minute: %v", err)
	}
	released := time.Now()
	p, err := r.env.Client.CoreV1().Pods(ns).Patch(ctx, "held", types.MergePatchType, []byte(diagnose.FinalizersPatch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	// Still stopping (heartbeat beats 10 s after SIGTERM): the pod outlives
	// its finalizer by seconds, at least one look.
	stopping := p.Status.Phase == corev1.PodRunning
	t.Logf("finalizer removed %s after Watch began; the pod is %s", time.Since(began).Round(time.Millisecond), p.Status.Phase)
	w := <-done
	mu.Lock()
	said := strings.Join(lines, "\n")
	mu.Unlock()
	t.Logf("Watch returned %s after it began (%s after the release), %d looks, err %v; it said:\n%s",
		w.took.Round(time.Millisecond), time.Since(released).Round(time.Millisecond), looks.Load(), w.err, said)
	if w.err != nil || w.last.Exists {
		t.Fatalf("Watch ended with %v, last look exists=%v; want the pod gone", w.err, w.last.Exists)
	}
	if !strings.Contains(said, "gone between ") {
		t.Errorf("Watch never said the pod was gone between two looks:\n%s", said)
	}
	removed := strings.Index(said, "finalizer "+finalizer+" removed between ")
	switch {
	case removed < 0 && stopping:
		t.Errorf("the pod was still stopping when its finalizer went, yet Watch never said the finalizer was removed:\n%s", said)
	case removed < 0:
		t.Logf("the finalizer's removal and the deletion landed between the same two looks: only \"gone between\" was said")
	case removed > strings.Index(said, "gone between "):
		t.Errorf("Watch said gone before the finalizer's removal:\n%s", said)
	}
	if strings.Contains(said, "looking again failed") {
		t.Errorf("a look failed during the watch:\n%s", said)
	}
}

// TestDiagnoseNamespaceHeldByUnavailableAPIService registers an APIService
// for the run's own group whose Service has no endpoints, deletes a
// namespace while it is unavailable, and diagnoses that namespace: discovery
// of the group fails, so the namespace controller keeps it, and the answer
// must name the APIService. Cleanup deletes the APIService first.
func TestDiagnoseNamespaceHeldByUnavailableAPIService(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	backend := r.namespace(ctx, t, "diag-apisvc")
	held := r.namespace(ctx, t, "diag-apisvc-held")
	if _, err := r.env.Client.CoreV1().Services(backend).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nobody", Labels: r.labels},
		// A selector no pod matches: the Service exists, its endpoints are empty.
		Spec: corev1.ServiceSpec{Selector: map[string]string{lab.RunIDLabel: r.id, "termlab.dev/no-such-pod": "true"},
			Ports: []corev1.ServicePort{{Port: 443}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := "v1alpha1." + r.group
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name, "labels": map[string]any{lab.RunIDLabel: r.id}},
		"spec": map[string]any{
			"group": r.group, "version": "v1alpha1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": backend, "name": "nobody", "port": int64(443)},
		},
	}}
	if _, err := r.dyn.Resource(apiServiceGVR).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Reaching a state: the aggregator has found the Service without endpoints.
	var available string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := r.dyn.Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Available" {
				available = fmt.Sprintf("%v (%v: %v)", m["status"], m["reason"], m["message"])
				return m["status"] == "False", nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("APIService %s never became unavailable (%v); last: %s", name, err, available)
	}
	t.Logf("APIService %s: Available=%s", name, available)
	if err := r.env.Client.CoreV1().Namespaces().Delete(ctx, held, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := r.env.Client.CoreV1().Namespaces().Get(ctx, held, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = "conditions:"
		for _, c := range n.Status.Conditions {
			last += fmt.Sprintf(" %s=%s (%s)", c.Type, c.Status, c.Message)
			if c.Type == corev1.NamespaceDeletionDiscoveryFailure && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("namespace %s never reported NamespaceDeletionDiscoveryFailure (%v); last: %s", held, err, last)
	}
	t.Logf("%s after the namespace delete: %s", time.Since(deleted).Round(time.Millisecond), last)

	res, err := diagnose.RunNamespace(ctx, ownSource(ctx, t), held, project.ResultsDir(r.root))
	if err != nil {
		t.Fatal(err)
	}
	logDiagnosis(t, "namespace "+held, res)
	rep := res.Summary.Report
	f := mustFinding(t, rep, diagnose.FindAPIService(name), diagnose.Blocking, "unavailable")
	wantIn(t, "the APIService finding", f.Text, "service "+backend+"/nobody")
	mustFinding(t, rep, diagnose.FindNSCondition(corev1.NamespaceDeletionDiscoveryFailure), diagnose.Blocking, "True")
	wantIn(t, "the answer", rep.Answer, "APIService "+name+" is unavailable")
	advice := strings.Join(rep.Advice, "\n")
	wantIn(t, "the advice", advice, "Safe: fix APIService "+name, "kubectl delete apiservice "+name)
}

// TestDiagnoseFinalizerOfAClientIsNotTheControlPlanes holds a pod by a
// finalizer that termlab's own client added: field manager "termlab"
// (cluster.UserAgent), which is also the kind cluster's name, so the
// control-plane node is termlab-control-plane and holds the leader Leases of
// kube-controller-manager and kube-scheduler (holderIdentity
// termlab-control-plane_<uuid>). Nothing will come back to remove this
// finalizer: diagnose must not take a Lease held by the control-plane node
// for its controller ("termlab-control-plane" is not a pod of a workload
// named termlab: "control" and "plane" are no pod-template hash or pod
// suffix, whose letters have no vowels).
func TestDiagnoseFinalizerOfAClientIsNotTheControlPlanes(t *testing.T) {
	r := startUnlike(t)
	ctx, cancel := context.WithTimeout(context.Background(), unlikeCase)
	defer cancel()
	ns := r.namespace(ctx, t, "diag-client")
	finalizer := r.group + "/cleanup"
	manager := cluster.UserAgent
	if cp := r.env.ControlPlane.String(); cp != manager+"-control-plane" {
		t.Fatalf("the control plane is %s, not %s-control-plane: this case needs a cluster named %s", cp, manager, manager)
	}
	// Never scheduled: no node is involved, only the controller check.
	p := r.pod(ns, heldPod{name: "held", node: "termlab-no-such-node", finalizer: finalizer})
	if _, err := r.env.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
	if err := r.env.Client.CoreV1().Pods(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := r.diagnosePod(ctx, t, ownSource(ctx, t), ns, "held")

	f := mustFinding(t, rep, diagnose.FindFinalizer(finalizer), diagnose.Blocking, "holds the object")
	wantIn(t, "the finalizer finding", f.Text, "added by "+manager)
	wantNotIn(t, "the finalizer finding", f.Text, "A controller that could remove it runs", "kube-controller-manager", "kube-scheduler", r.env.ControlPlane.String())
	wantNotIn(t, "the answer", rep.Answer, "whose controller runs")
	for _, adv := range rep.Advice {
		wantNotIn(t, "advice", adv, "kube-controller-manager")
	}
}
