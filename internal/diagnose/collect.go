package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
)

// Source is where Collect reads from.
type Source struct {
	Client kubernetes.Interface
	// Dynamic reads resources of any type (a namespace's leftovers); nil
	// when only pods are diagnosed.
	Dynamic dynamic.Interface
	// Node gives the exec seam of a node by its Kubernetes name (kind's
	// nodes.Node and nodepod's Node satisfy kubelet.Node), or why none is
	// available: then the node checks say "not checked" with that reason.
	// Nil: no access.
	Node NodeAccess
	// Nodes lists the nodes Node can reach, for a pod that is gone and whose
	// node no event names; nil when unknown.
	Nodes func(ctx context.Context) []string
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
	c.Pod = pod
	raw.put(PodFile, pod)

	if n := pod.Spec.NodeName; n != "" {
		cctx, cancel = call()
		if node, err := src.Client.CoreV1().Nodes().Get(cctx, n, metav1.GetOptions{}); err == nil {
			c.Node = node
			raw.put(NodeFile, node)
		} else if !apierrors.IsNotFound(err) {
			raw[NodeFile] = errorJSON("reading node "+n, err)
		}
		cancel()
		cctx, cancel = call()
		if lease, err := src.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(cctx, n, metav1.GetOptions{}); err == nil {
			c.Lease = lease
			raw.put(LeaseFile, lease)
		} else {
			raw[LeaseFile] = errorJSON("reading lease "+corev1.NamespaceNodeLease+"/"+n, err)
		}
		cancel()
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
		c.Controllers[f] = findController(cctx, src.Client, pod, f, c.At)
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
		node, why := nodeFor(ctx, n)
		if node == nil {
			c.Kubelet.NotChecked = why
		} else {
			cctx, cancel = call()
			c.Kubelet = kubeletState(cctx, node)
			cancel()
			raw[KubeletFile] = []byte(c.Kubelet.Command + "\n" + c.Kubelet.Output + c.Kubelet.Err + "\n")
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

func (r Raw) put(name string, v any) {
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
	want := strings.ToLower(m)
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, want) || p.Labels["app.kubernetes.io/name"] == want || p.Labels["app"] == want {
			cc.Present = Present
			cc.Evidence = "pod " + p.Namespace + "/" + p.Name + " runs"
			return cc
		}
	}
	leases, err := client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	if err == nil {
		for i := range leases.Items {
			l := &leases.Items[i]
			if l.Namespace != corev1.NamespaceNodeLease && strings.Contains(strings.ToLower(l.Name), want) {
				return leaseCheck(cc, l, at)
			}
		}
	}
	cc.Present = Absent
	cc.Evidence = fmt.Sprintf("no running pod and no leader Lease named after %s", m)
	return cc
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

// kubeletState is `systemctl is-active kubelet` on the node.
func kubeletState(ctx context.Context, node kubelet.Node) NodeCheck {
	nc := NodeCheck{Command: "systemctl is-active kubelet"}
	state, err := kubelet.State(ctx, node)
	if err != nil {
		nc.Err = err.Error()
		return nc
	}
	nc.Output = state
	return nc
}

// inspectContainer is `crictl inspect <id>` on the node; it returns the raw
// output (or the failure) for the evidence folder.
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
	in, perr := evidence.ParseInspect(stdout.Bytes())
	if perr != nil {
		cc.Err = perr.Error()
		return cc, stdout.Bytes()
	}
	cc.State, cc.ExitCode, cc.PID = in.State, in.ExitCode, in.PID
	cc.Output = in.State
	return cc, stdout.Bytes()
}

func trimRuntime(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
