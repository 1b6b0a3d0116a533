package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/redact"
)

// Source is where Collect reads from.
type Source struct {
	Client kubernetes.Interface
	// Dynamic reads the APIServices; nil when only pods are diagnosed.
	Dynamic dynamic.Interface
	// Metadata LISTs and dry-run patches a namespace's leftovers of any type,
	// metadata only (never a Secret's data); nil when only pods are diagnosed.
	Metadata metadata.Interface
	// Node gives the exec seam of a node by its Kubernetes name (kind's
	// nodes.Node and nodepod's Node satisfy kubelet.Node), or why none is
	// available: then the node checks say "not checked" with that reason.
	// Nil: no access.
	Node NodeAccess
	// Nodes lists the nodes Node can reach, for a pod that is gone and whose
	// node no event names; nil when unknown.
	Nodes func(ctx context.Context) []string
	// SearchAllNodes lets such a pod be searched for on every one of Nodes;
	// unset, diagnose says how to ask for it instead.
	SearchAllNodes bool
	// Requests counts the API requests Client, Dynamic and Metadata made so
	// far; nil when they are not counted.
	Requests func() int
}

// NodeAccess is the node exec seam by node name, or why there is none.
type NodeAccess func(ctx context.Context, name string) (kubelet.Node, string)

// NoNodeAccess is Source.Node without node access.
func NoNodeAccess(reason string) NodeAccess {
	return func(context.Context, string) (kubelet.Node, string) { return nil, reason }
}

// callTimeout bounds each API call and node command.
const callTimeout = 15 * time.Second

// Collect reads the evidence about pod namespace/name. It changes nothing:
// GETs and LISTs, node commands that only look (systemctl is-active, crictl
// inspect), and the finalizer patch with dryRun=All, which the API server
// runs through admission and never persists. The error is non-nil only when
// the pod itself cannot be read; anything else missing becomes a finding.
func Collect(ctx context.Context, src Source, namespace, name string) (Collected, Raw, error) {
	raw := Raw{}
	c := Collected{Namespace: namespace, Name: name, Controllers: map[string]ControllerCheck{}}
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, callTimeout) }

	cctx, cancel := call()
	pod, err := src.Client.CoreV1().Pods(namespace).Get(cctx, name, metav1.GetOptions{})
	cancel()
	c.At = time.Now().UTC()
	if apierrors.IsNotFound(err) {
		c.Gone = collectGone(ctx, src, namespace, name, raw)
		return c, raw, nil
	}
	if err != nil {
		return c, raw, fmt.Errorf("reading pod %s/%s: %w", namespace, name, err)
	}
	// What is saved (raw/pod.json, collected.json) has no env value and no
	// last-applied configuration; what Collect reads is the pod as it is.
	c.Pod = redact.Object(pod)
	raw.put(PodFile, c.Pod)

	if n := pod.Spec.NodeName; n != "" {
		// Only NotFound says a node or Lease is gone; any other error (these
		// credentials may not read nodes) leaves the fact not checked.
		cctx, cancel = call()
		node, err := src.Client.CoreV1().Nodes().Get(cctx, n, metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			c.Node = redact.Object(node)
			raw.put(NodeFile, c.Node)
		case apierrors.IsNotFound(err):
			c.NodeGone = true
			raw[NodeFile] = errorJSON("reading node "+n, err)
		default:
			c.NodeErr = "reading node " + n + ": " + err.Error()
			raw[NodeFile] = errorJSON("reading node "+n, err)
		}
		cctx, cancel = call()
		lease, err := src.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(cctx, n, metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			c.Lease = lease
			raw.put(LeaseFile, lease)
		case apierrors.IsNotFound(err):
			raw[LeaseFile] = errorJSON("reading lease "+corev1.NamespaceNodeLease+"/"+n, err)
		default:
			c.LeaseErr = "reading lease " + corev1.NamespaceNodeLease + "/" + n + ": " + err.Error()
			raw[LeaseFile] = errorJSON("reading lease "+corev1.NamespaceNodeLease+"/"+n, err)
		}
		if c.NodeGone {
			// The pod garbage collector, in kube-controller-manager, deletes
			// pods bound to a missing node: is it running?
			cctx, cancel = call()
			l, err := src.Client.CoordinationV1().Leases("kube-system").Get(cctx, "kube-controller-manager", metav1.GetOptions{})
			cancel()
			if err == nil {
				c.ControllerManager = leaseCheck(ControllerCheck{Manager: "kube-controller-manager", Present: Unknown}, l, c.At)
				raw.put(ControllerManagerFile, l)
			} else {
				c.ControllerManager = ControllerCheck{Manager: "kube-controller-manager", Present: Unknown, Evidence: "reading Lease kube-system/kube-controller-manager: " + err.Error()}
				raw[ControllerManagerFile] = errorJSON("reading Lease kube-system/kube-controller-manager", err)
			}
		}
	}

	cctx, cancel = call()
	sel := fields.Set{"involvedObject.name": name, "involvedObject.uid": string(pod.UID)}.AsSelector().String()
	if events, err := src.Client.CoreV1().Events(namespace).List(cctx, metav1.ListOptions{FieldSelector: sel}); err == nil {
		c.Events = events.Items
		raw.put(EventsFile, events)
	} else {
		raw[EventsFile] = errorJSON("listing events of the pod", err)
	}
	cancel()

	for _, f := range pod.Finalizers {
		cctx, cancel = call()
		c.Controllers[f] = failingOnObject(findController(cctx, src.Client, pod, f, c.At), c.Events)
		cancel()
	}
	c.DryRun = dryRunRemoveFinalizers(ctx, src.Client, pod)
	c.Volumes = collectVolumes(ctx, src, pod, raw)
	raw.put(DryRunFile, c.DryRun)

	c.Kubelet.NotChecked = "the pod is not scheduled"
	nodeFor := src.Node
	if nodeFor == nil {
		nodeFor = NoNodeAccess("no node access was given")
	}
	if n := pod.Spec.NodeName; n != "" {
		var node kubelet.Node
		why := "node " + n + " does not exist (NotFound): there is no node to ask"
		if !c.NodeGone {
			node, why = nodeFor(ctx, n)
		}
		if node == nil {
			c.Kubelet.NotChecked = why
		} else {
			cctx, cancel = call()
			c.Kubelet = kubeletState(cctx, node)
			cancel()
			raw[KubeletFile] = c.Kubelet.evidence()
		}
		if pod.DeletionTimestamp != nil {
			if node == nil {
				c.Teardown.NotChecked = why
			} else {
				cctx, cancel = call()
				var out []byte
				c.Teardown, out = collectTeardown(cctx, node, pod)
				cancel()
				raw[TeardownFile] = out
			}
		}
		for _, s := range allStatuses(pod) {
			if s.ContainerID == "" {
				continue
			}
			cc := ContainerCheck{Name: s.Name, ID: trimRuntime(s.ContainerID)}
			if node == nil {
				cc.NotChecked = why
			} else {
				cctx, cancel = call()
				var out []byte
				cc, out = inspectContainer(cctx, node, cc)
				cancel()
				raw[ContainerFile(cc.ID)] = out
			}
			c.Containers = append(c.Containers, cc)
		}
	}
	return c, raw, nil
}

func allStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

// put saves v as JSON under name; an object without what may hold a
// secret's value (internal/redact).
func (r Raw) put(name string, v any) {
	if o, ok := v.(runtime.Object); ok {
		v = redact.Object(o)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b = errorJSON("encoding "+name, err)
	}
	r[name] = b
}

func errorJSON(what string, err error) []byte {
	b, _ := json.MarshalIndent(map[string]string{"error": what + ": " + err.Error()}, "", "  ")
	return b
}

// dryRunRemoveFinalizers asks whether the patch that removes the finalizers
// would be accepted: dryRun=All runs validation and admission (webhooks,
// ValidatingAdmissionPolicies) and persists nothing.
func dryRunRemoveFinalizers(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod) DryRun {
	if len(pod.Finalizers) == 0 {
		return DryRun{Skipped: "the pod has no finalizers"}
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(FinalizersPatch),
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	return DryRunResult(FinalizersPatch, err)
}

// Managers that are clients a person or a test runs, never a controller
// that would come back to remove a finalizer.
var clientManagers = []string{"kubectl", "e2e.test", "mage_output_file", "Go-http-client", "helm"}

// builtinFinalizer reports whether kube-controller-manager owns the finalizer.
func builtinFinalizer(f string) bool {
	return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents ||
		strings.HasPrefix(f, "kubernetes.io/") || strings.HasSuffix(strings.SplitN(f, "/", 2)[0], ".kubernetes.io")
}

// findController looks for something that could remove the finalizer: for
// built-in ones kube-controller-manager's leader Lease; otherwise a running
// pod or a leader Lease named after the manager that added it. A heuristic,
// and the finding says what it rests on.
func findController(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, finalizer string, at time.Time) ControllerCheck {
	return controllerFor(ctx, client, FinalizerManager(pod, finalizer), finalizer, at)
}

// controllerFor is findController for any object: manager is the
// managedFields manager that added the finalizer (ManagerOf), "" if none.
func controllerFor(ctx context.Context, client kubernetes.Interface, manager, finalizer string, at time.Time) ControllerCheck {
	cc := ControllerCheck{Manager: manager, Present: Unknown}
	if builtinFinalizer(finalizer) {
		l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{})
		if err != nil {
			cc.Evidence = "reading kube-controller-manager's leader Lease: " + err.Error()
			return cc
		}
		return leaseCheck(cc, l, at)
	}
	m := cc.Manager
	if m == "" {
		cc.Evidence = "no managedFields entry names who added it"
		return cc
	}
	for _, client := range clientManagers {
		if strings.HasPrefix(strings.ToLower(m), strings.ToLower(client)) {
			cc.Present = Absent
			cc.Evidence = m + " is a client tool, not a controller: nothing is known to come back and remove it"
			return cc
		}
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		cc.Evidence = "listing running pods: " + err.Error()
		return cc
	}
	var found []*corev1.Pod
	for i := range pods.Items {
		if ControllerPodMatch(&pods.Items[i], m) != "" {
			found = append(found, &pods.Items[i])
		}
	}
	if len(found) > 0 {
		return podsCheck(ctx, client, cc, found, at)
	}
	leases, err := client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	if err != nil {
		cc.Evidence = fmt.Sprintf("no running pod named or labelled %s; listing leader Leases: %s", m, err)
		return cc
	}
	for i := range leases.Items {
		l := &leases.Items[i]
		if l.Namespace != corev1.NamespaceNodeLease && LeaseMatch(l, m) {
			return leaseCheck(cc, l, at)
		}
	}
	cc.Present = Absent
	cc.Evidence = fmt.Sprintf("no running pod and no leader Lease named after %s", m)
	return cc
}

// ControllerPodMatch says how pod p is the controller whose field manager
// is m, exactly ("" when it is not): its name (or its Deployment's,
// StatefulSet's or DaemonSet's, by the suffixes they add), an
// app.kubernetes.io/name or app label, or a container of that name (the
// kubebuilder default: container and field manager are both "manager").
// Never a substring: manager must not match kube-controller-manager.
func ControllerPodMatch(p *corev1.Pod, m string) string {
	switch {
	case p.Name == m:
		return "pod " + p.Namespace + "/" + p.Name
	case workloadPod(m).MatchString(p.Name):
		return "pod " + p.Namespace + "/" + p.Name + " (of workload " + m + ")"
	case p.Labels["app.kubernetes.io/name"] == m:
		return "pod " + p.Namespace + "/" + p.Name + " (label app.kubernetes.io/name=" + m + ")"
	case p.Labels["app"] == m:
		return "pod " + p.Namespace + "/" + p.Name + " (label app=" + m + ")"
	}
	for _, c := range p.Spec.Containers {
		if c.Name == m {
			return "pod " + p.Namespace + "/" + p.Name + " (container " + m + ")"
		}
	}
	return ""
}

// workloadPod matches the pod names a Deployment (<name>-<hash>-<5>), a
// StatefulSet (<name>-<ordinal>) or a DaemonSet (<name>-<5>) gives name's
// pods. Hashes and random suffixes come from apimachinery's safe alphabet
// (no vowels, no 0, 1, 3: rand.SafeEncodeString), so a word such as
// "control-plane" is never taken for one: manager "termlab" must not match
// kube-controller-manager's Lease holder termlab-control-plane_<uuid>.
func workloadPod(name string) *regexp.Regexp {
	const safe = `[bcdfghjklmnpqrstvwxz2456789]`
	return regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `-(` + safe + `{6,10}-` + safe + `{5}|[0-9]+|` + safe + `{5})$`)
}

// LeaseMatch reports whether leader Lease l is the controller m's, exactly:
// named m, or held by m (holderIdentity m, or m's pod: "<pod>_<uuid>").
func LeaseMatch(l *coordinationv1.Lease, m string) bool {
	if l.Name == m {
		return true
	}
	if l.Spec.HolderIdentity == nil {
		return false
	}
	holder, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return holder == m || workloadPod(m).MatchString(holder)
}

// failingOnObject turns a running controller into a failing one when it
// reported a Warning about the held object: it runs, and its own word says
// it cannot finish (a cleanup that fails, say).
func failingOnObject(cc ControllerCheck, events []corev1.Event) ControllerCheck {
	if cc.Present != Present || cc.Manager == "" {
		return cc
	}
	var last *corev1.Event
	for _, e := range sortedEvents(events) {
		if e.Type == corev1.EventTypeWarning && (e.Source.Component == cc.Manager || e.ReportingController == cc.Manager) {
			last = &e
		}
	}
	if last != nil {
		cc.Present = Failing
		cc.Evidence += fmt.Sprintf("; it reported about this object: %s %s (×%d, at %s)", last.Reason, strings.TrimSpace(last.Message), max(last.Count, 1), eventTime(*last).UTC().Format(time.RFC3339))
	}
	return cc
}

// restartWindow: a controller pod that restarted within it is not counted
// as running well (CrashLoopBackOff's back-off grows to 5 min).
const restartWindow = 10 * time.Minute

// podsCheck judges the controller's pods: present only with a Ready pod
// that has not restarted within restartWindow; found but none such is
// "failing", with the pod's state and its last Warning event.
func podsCheck(ctx context.Context, client kubernetes.Interface, cc ControllerCheck, found []*corev1.Pod, at time.Time) ControllerCheck {
	var sick []string
	for _, p := range found {
		how := ControllerPodMatch(p, cc.Manager)
		trouble := podTrouble(p, at)
		if trouble == "" {
			cc.Present, cc.Evidence = Present, how+" is Ready, with no restart in the last "+restartWindow.String()
			return cc
		}
		w := lastWarning(ctx, client, p)
		if w != "" {
			trouble += "; last Warning: " + w
		}
		sick = append(sick, how+" "+trouble)
	}
	cc.Present, cc.Evidence = Failing, strings.Join(sick, "; ")
	return cc
}

// podTrouble says why a running pod is not a healthy controller ("" when it is).
func podTrouble(p *corev1.Pod, at time.Time) string {
	var out []string
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		out = append(out, "is not Ready")
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Waiting != nil && s.State.Waiting.Reason != "" {
			out = append(out, fmt.Sprintf("container %s is waiting (%s)", s.Name, s.State.Waiting.Reason))
		}
		if t := s.State.Terminated; t != nil {
			// Between two starts of a crash loop the status shows the last exit.
			out = append(out, fmt.Sprintf("container %s exited %s ago (exit %d, %s)", s.Name, round(at.Sub(t.FinishedAt.Time)), t.ExitCode, t.Reason))
		}
		if t := s.LastTerminationState.Terminated; t != nil && s.RestartCount > 0 && at.Sub(t.FinishedAt.Time) < restartWindow {
			out = append(out, fmt.Sprintf("container %s restarted %d times, last %s ago (exit %d, %s)", s.Name, s.RestartCount, round(at.Sub(t.FinishedAt.Time)), t.ExitCode, t.Reason))
		}
	}
	return strings.Join(out, ", ")
}

// lastWarning is the newest Warning event about pod p ("" if none or unreadable).
func lastWarning(ctx context.Context, client kubernetes.Interface, p *corev1.Pod) string {
	sel := fields.Set{"involvedObject.name": p.Name, "involvedObject.uid": string(p.UID), "type": corev1.EventTypeWarning}.AsSelector().String()
	l, err := client.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil || len(l.Items) == 0 {
		return ""
	}
	e := sortedEvents(l.Items)[len(l.Items)-1]
	return fmt.Sprintf("%s %s", e.Reason, strings.TrimSpace(e.Message))
}

func leaseCheck(cc ControllerCheck, l *coordinationv1.Lease, at time.Time) ControllerCheck {
	name := "Lease " + l.Namespace + "/" + l.Name
	if l.Spec.RenewTime == nil {
		cc.Present, cc.Evidence = Absent, name+" was never renewed"
		return cc
	}
	age := at.Sub(l.Spec.RenewTime.Time)
	if age > leaseStale {
		cc.Present, cc.Evidence = Absent, fmt.Sprintf("%s was last renewed %s ago", name, round(age))
		return cc
	}
	cc.Present, cc.Evidence = Present, fmt.Sprintf("%s was renewed %s ago", name, round(age))
	return cc
}

// kubeletState asks systemd on the node about its unit named kubelet. Its
// state says something only where that unit exists: a node whose kubelet
// runs under another name (k3s, RKE2, microk8s) has none, and is "not
// checked", never "not running".
func kubeletState(ctx context.Context, node kubelet.Node) NodeCheck {
	nc := NodeCheck{Command: kubelet.UnitCommand}
	u, out, err := kubelet.UnitOf(ctx, node)
	nc.Raw = out
	switch {
	case err != nil:
		nc.Err = err.Error()
	case !u.Loaded():
		nc.NotChecked = fmt.Sprintf("node %s has no systemd unit named kubelet (LoadState=%s): its kubelet runs under another name (k3s, RKE2, microk8s) or outside systemd, so systemd cannot say whether it runs", node, u.Load)
	default:
		nc.Output = u.Active
	}
	return nc
}

// inspectContainer is `crictl inspect <id>` on the node; it returns the
// output with the fields internal/redact keeps (never the container's
// environment), or the failure, for the evidence folder.
func inspectContainer(ctx context.Context, node kubelet.Node, cc ContainerCheck) (ContainerCheck, []byte) {
	cc.Command = "crictl inspect " + cc.ID
	var stdout, stderr bytes.Buffer
	cmd := node.CommandContext(ctx, "crictl", "inspect", cc.ID)
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	err := cmd.Run()
	switch {
	case err != nil && strings.Contains(stderr.String(), "code = NotFound"):
		// crictl itself answered: the runtime has no such container.
		cc.State = ContainerNotFound
		return cc, stderr.Bytes()
	case err != nil:
		cc.Err = fmt.Sprintf("on node %s: %s: %v: %s", node, exec.PrettyCommand("crictl", "inspect", cc.ID), err, strings.TrimSpace(stderr.String()))
		return cc, []byte(cc.Err + "\n")
	}
	saved := kept(stdout.Bytes(), redact.Inspect)
	in, perr := evidence.ParseInspect(stdout.Bytes())
	if perr != nil {
		cc.Err = perr.Error()
		return cc, saved
	}
	cc.State, cc.ExitCode, cc.PID = in.State, in.ExitCode, in.PID
	cc.Output = in.State
	return cc, saved
}

// kept is crictl's answer as the report folder keeps it (internal/redact),
// or why it was not kept.
func kept(out []byte, keep func([]byte) ([]byte, error)) []byte {
	b, err := keep(out)
	if err != nil {
		return []byte(err.Error() + "\n")
	}
	return b
}

func trimRuntime(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
