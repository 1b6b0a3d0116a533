// Package nodepod reaches a node of any cluster through a short-lived
// privileged pod on it: the node's root filesystem mounted at /host, the
// host's PID and network namespaces, and commands run with `kubectl exec`'s
// API (pods/exec) inside `chroot /host`. It is the node exec seam where
// termlab has no docker access to the node (kind's nodes.Node is the other),
// so a node's crictl and systemctl answer the same way through both.
//
// Everything it creates lives in one namespace of its own, labelled with the
// run id; Close deletes it and waits until it is gone. The pods carry an
// activeDeadlineSeconds, so even a killed termlab leaves no process running
// on a node for long, and the next lab run's repair deletes the namespace.
package nodepod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/clusterswitch"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/switcharm"
)

// Labels and names of what Access creates.
const (
	// RunIDLabel is the lab runner's run id label (internal/lab.RunIDLabel):
	// a namespace left by a killed run is deleted by the next run's repair.
	RunIDLabel = "termlab.dev/run-id"
	// PurposeLabel marks the namespace and pods as node access.
	PurposeLabel = "termlab.dev/purpose"
	purpose      = "node-access"
	// NamespacePrefix begins the namespace's name; the run id ends it.
	NamespacePrefix = "termlab-node-access-"
	container       = "node"
	hostRoot        = "/host"
)

// Image choices. The workload image is on every node of termlab's cluster,
// which has no registry to pull from; busybox is pulled on any other cluster.
const (
	// WorkloadImage is termlab's own image (cmd/heartbeat: idle and chroot).
	WorkloadImage = "termlab.local/heartbeat:v1"
	// PublicImage is used when the node does not have WorkloadImage: pinned
	// by the digest of busybox 1.37's multi-platform index, so a privileged
	// pod with the host's root never runs whatever the tag points at later
	// (the tag stays for the reader; the runtime pulls by the digest).
	PublicImage = "docker.io/library/busybox:1.37@sha256:9db7b59979c38555a39def84a31fb98b5296952f9e3afd4f6f11f05b07adfab0"
)

// Defaults for Options.
const (
	// DefaultStartTimeout bounds the wait for a node pod to run: a pod that
	// has not started in this time on a node whose kubelet works is not going
	// to (a busybox pull takes seconds), and on a node whose kubelet is down
	// it never starts at all.
	DefaultStartTimeout = 60 * time.Second
	// DefaultLifetime is the pods' activeDeadlineSeconds: the kubelet ends a
	// node pod after this even if termlab never comes back to delete it.
	DefaultLifetime = 30 * time.Minute
	// deleteTimeout bounds Close's wait for the namespace to go.
	deleteTimeout = 2 * time.Minute
)

// Options configure an Access.
type Options struct {
	// RunID names the namespace and labels everything created.
	RunID string
	// Image overrides the choice between WorkloadImage and PublicImage.
	Image        string
	StartTimeout time.Duration
	Lifetime     time.Duration
	// Log, when set, is told about each pod started and the cleanup.
	Log func(format string, args ...any)
	// Agent runs `heartbeat agent` in the pods and sends commands through
	// the API server's pods/proxy instead of pods/exec (agent.go): they then
	// work while the node's kubelet is stopped. It needs WorkloadImage.
	Agent bool
	// SwitchImage, when set, runs the node pods' dead-man's switch
	// (switch.go): their namespace is deleted SwitchBound after this
	// process stops renewing its alive Lease. SwitchAvoids names a node it
	// must not run on (the one whose kubelet a lab stops).
	SwitchImage  string
	SwitchAvoids string
}

// Access opens node pods on demand, one per node, and removes them all on Close.
type Access struct {
	client kubernetes.Interface
	config *rest.Config
	opts   Options

	// agent mode: the port the agents listen on (host network) and the
	// token they want, kept only here (the pods get its hash).
	agentPort  int
	agentToken string

	mu        sync.Mutex
	nsCreated bool
	// nsSent: the namespace's create was sent, whatever its answer.
	nsSent bool
	nodes  map[string]*Node
	failed map[string]string
	// stopAlive ends the Lease that keeps the namespace marked in use.
	stopAlive func()
	// switchSelf names the armed switch's objects, removed by Close;
	// switchErr is why it could not be armed: then no node pod starts.
	switchSelf *clusterswitch.Self
	switchErr  error
	// shut: Shut ran; no node pod starts any more.
	shut bool
}

// New returns an Access that creates nothing until a node is asked for.
func New(client kubernetes.Interface, config *rest.Config, opts Options) *Access {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.Lifetime <= 0 {
		opts.Lifetime = DefaultLifetime
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	a := &Access{client: client, config: config, opts: opts, nodes: map[string]*Node{}, failed: map[string]string{}}
	if opts.Agent {
		a.agentPort, a.agentToken = newAgentSecret()
	}
	return a
}

// Namespace is where the node pods live.
func (a *Access) Namespace() string { return NamespacePrefix + a.opts.RunID }

// Node returns the exec seam of the named node, starting its pod the first
// time, or why there is none (the reason is remembered: a node whose pod did
// not start is not tried again). Its shape is the one diagnose and the lab
// runner take for node access.
func (a *Access) Node(ctx context.Context, name string) (*Node, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n, ok := a.nodes[name]; ok {
		return n, ""
	}
	if a.shut {
		return nil, "node access was shut when the run was interrupted: no node pod starts any more"
	}
	if why, ok := a.failed[name]; ok {
		return nil, why
	}
	sctx, stop := startContext(ctx)
	defer stop()
	n, err := a.open(sctx, name)
	if err != nil {
		// A start cut by Ctrl-C says nothing of the node: not remembered.
		if sctx.Err() == nil {
			a.failed[name] = err.Error()
		}
		return nil, err.Error()
	}
	a.nodes[name] = n
	return n, ""
}

// startContext is a node pod's start under the caller's cancellation but not
// its deadline: the first command that needs a node may be a 15 s wait for a
// log line, shorter than a pod's start and its switch's arming (each bounded
// by its own wait: StartTimeout, agentReady, the switch's readiness).
func startContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stopWatching := context.AfterFunc(ctx, func() {
		if ctx.Err() != context.DeadlineExceeded {
			cancel(context.Cause(ctx))
		}
	})
	return sctx, func() { stopWatching(); cancel(nil) }
}

func (a *Access) open(ctx context.Context, nodeName string) (*Node, error) {
	node, err := a.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s before starting a node pod on it: %w", nodeName, err)
	}
	image := a.opts.Image
	if image == "" {
		image = PublicImage
		if hasImage(node, WorkloadImage) {
			image = WorkloadImage
		}
	}
	if a.opts.Agent && image == PublicImage {
		return nil, fmt.Errorf("node %s does not have %s, whose agent a lab that stops the kubelet needs (busybox has none)", nodeName, WorkloadImage)
	}
	if err := a.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	pod := a.podFor(nodeName, image)
	created, err := a.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating node pod %s/%s on %s: %w", pod.Namespace, pod.Name, nodeName, err)
	}
	begin := time.Now()
	if err := a.waitRunning(ctx, created); err != nil {
		return nil, err
	}
	n := &Node{access: a, name: nodeName, pod: created.Name, prefix: chrootPrefix(image)}
	if a.opts.Agent {
		if err := a.waitAgent(ctx, n); err != nil {
			return nil, err
		}
	}
	a.opts.Log("node pod %s/%s runs on %s (image %s%s, started in %s)", created.Namespace, created.Name, nodeName, image, map[bool]string{true: ", agent through pods/proxy"}[a.opts.Agent], time.Since(begin).Round(100*time.Millisecond))
	return n, nil
}

// hasImage reports whether the node's status lists ref among its images.
func hasImage(n *corev1.Node, ref string) bool {
	for _, img := range n.Status.Images {
		if slices.Contains(img.Names, ref) {
			return true
		}
	}
	return false
}

// chrootPrefix is how the image runs a command inside the node's root.
func chrootPrefix(image string) []string {
	if image == WorkloadImage {
		return []string{"/heartbeat", "chroot", hostRoot}
	}
	return []string{"chroot", hostRoot}
}

// idleCommand is the pod's main process: it does nothing until deleted.
func idleCommand(image string) []string {
	if image == WorkloadImage {
		return []string{"/heartbeat", "idle"}
	}
	return []string{"sleep", "2147483647"}
}

func (a *Access) ensureNamespace(ctx context.Context) error {
	if a.nsCreated {
		return nil
	}
	if a.switchErr != nil {
		return a.switchErr
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: a.Namespace(),
		Labels: map[string]string{
			RunIDLabel:   a.opts.RunID,
			PurposeLabel: purpose,
			// The node pods are privileged by design; a cluster that enforces
			// Pod Security on every namespace would otherwise refuse them.
			"pod-security.kubernetes.io/enforce": "privileged",
		},
	}}
	// Sent is enough for Close to delete it: a create cut by Ctrl-C while
	// its answer was read has reached the server all the same.
	a.nsSent = true
	_, err := a.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s for node pods: %w", ns.Name, err)
	}
	// The namespace outlives lab runs (a diagnose's, another termlab's):
	// marked in use, their repair leaves it alone while this process lives.
	if a.stopAlive == nil {
		holder := runlock.Identity("node access " + a.opts.RunID)
		stop, err := runlock.KeepAlive(ctx, a.config, ns.Name, holder)
		if err != nil {
			if a.opts.SwitchImage != "" {
				return fmt.Errorf("marking namespace %s in use, which its dead-man's switch watches: %w", ns.Name, err)
			}
			a.opts.Log("namespace %s is not marked in use (%v): a lab run's repair may delete it while it is used", ns.Name, err)
		} else {
			a.stopAlive = stop
			if err := a.armSwitch(ctx, holder); err != nil {
				a.switchErr = err
				return err
			}
		}
	}
	a.nsCreated = true
	return nil
}

// PodName is the node pod's name on a node (at most 63 characters).
func PodName(nodeName string) string {
	name := "node-" + nodeName
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

func (a *Access) podFor(nodeName, image string) *corev1.Pod {
	labels := map[string]string{RunIDLabel: a.opts.RunID, PurposeLabel: purpose}
	deadline := int64(a.opts.Lifetime / time.Second)
	zero := int64(0)
	no := false
	yes := true
	hostPathDir := corev1.HostPathDirectory
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: PodName(nodeName), Namespace: a.Namespace(), Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:      nodeName,
			HostPID:       true,
			HostNetwork:   true,
			RestartPolicy: corev1.RestartPolicyNever,
			// It must run on a tainted node too: the nodes worth looking at
			// are the unhealthy ones.
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			ActiveDeadlineSeconds:         &deadline,
			TerminationGracePeriodSeconds: &zero,
			// No credentials in the pod: it only runs the node's own tools.
			AutomountServiceAccountToken: &no,
			EnableServiceLinks:           &no,
			Containers: []corev1.Container{{
				Name:            container,
				Image:           image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         a.mainCommand(image),
				Env:             a.agentEnv(),
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
				VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: hostRoot}},
			}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: &hostPathDir},
			}}},
		},
	}
}

// waitRunning watches the pod until its container runs, fails, or the start
// timeout passes; the error then says what the pod last reported.
func (a *Access) waitRunning(ctx context.Context, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancel()
	last := pod
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := a.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		switch p.Status.Phase {
		case corev1.PodRunning:
			// Phase Running also covers a container the runtime failed to
			// start (RunContainerError, the kubelet tries again): only a
			// running container can take an exec.
			if containerRunning(p) {
				return true, nil
			}
		case corev1.PodFailed, corev1.PodSucceeded:
			return false, fmt.Errorf("node pod %s/%s ended (%s): %s", p.Namespace, p.Name, p.Status.Phase, podProblem(p))
		}
		for _, s := range p.Status.ContainerStatuses {
			if w := s.State.Waiting; w != nil && (w.Reason == "ImagePullBackOff" || w.Reason == "ErrImageNeverPull" || w.Reason == "InvalidImageName") {
				return false, fmt.Errorf("node pod %s/%s cannot get its image %s (%s): pass an image the node has or can pull",
					p.Namespace, p.Name, s.Image, podProblem(p))
			}
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		hint := ""
		if len(last.Status.ContainerStatuses) == 0 {
			hint = ": its kubelet never reported it (a node whose kubelet is down cannot start a pod)"
		}
		return fmt.Errorf("node pod %s/%s did not run within %s on %s (%s)%s",
			pod.Namespace, pod.Name, a.opts.StartTimeout, pod.Spec.NodeName, podProblem(last), hint)
	}
	return err
}

// containerRunning reports whether the pod's container has a process now.
func containerRunning(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container && s.State.Running != nil {
			return true
		}
	}
	return false
}

// podProblem says what a pod that is not running reports.
func podProblem(p *corev1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil {
			return "container waiting: " + w.Reason + " " + w.Message
		}
		if t := s.State.Terminated; t != nil {
			return fmt.Sprintf("container terminated: %s, exit %d", t.Reason, t.ExitCode)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return string(c.Type) + ": " + c.Message
		}
	}
	if p.Status.Phase == "" {
		return "no status yet"
	}
	return "phase " + string(p.Status.Phase)
}

// Shut is Close for an interrupted run: the node pods go at once, in the
// interrupt path itself (mage exits five seconds after Ctrl-C, before the
// run's own cleanup is done), and no node pod starts afterwards, so what
// the cleanup still asks of a node fails instead of leaving a new
// privileged pod behind. Restore what needs the node pods (a kubelet
// started through the agent) before.
func (a *Access) Shut(ctx context.Context) error {
	a.mu.Lock()
	a.shut = true
	a.mu.Unlock()
	return a.Close(ctx)
}

// Close deletes the namespace with every node pod in it and waits until it is
// gone, so nothing is left on the cluster. It is safe to call more than once.
func (a *Access) Close(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.nsCreated && !a.nsSent {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	ns := a.Namespace()
	if a.stopAlive != nil {
		a.stopAlive()
		a.stopAlive = nil
	}
	zero := int64(0)
	// Pods first with no grace: the namespace then goes as soon as they do.
	err := a.client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		metav1.ListOptions{LabelSelector: PurposeLabel + "=" + purpose})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting node pods in %s: %w", ns, err)
	}
	if err := a.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := a.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s was deleted but is still terminating (check with: kubectl get namespace %s)", ns, ns)
	}
	// Last, once the pods are gone: the switch has nothing left to undo.
	if a.switchSelf != nil {
		if err := switcharm.Remove(ctx, a.client, *a.switchSelf); err != nil {
			return fmt.Errorf("removing the node pods' dead-man's switch: %w", err)
		}
		a.switchSelf = nil
	}
	a.nsCreated, a.nsSent = false, false
	a.nodes = map[string]*Node{}
	a.opts.Log("node pods removed (namespace %s deleted)", ns)
	return nil
}

// Node is one node reached through its node pod. It satisfies the node exec
// seam (CommandContext and String), like kind's nodes.Node.
type Node struct {
	access *Access
	name   string
	pod    string
	prefix []string
}

// String is the node's Kubernetes name.
func (n *Node) String() string { return n.name }

// Command runs name with args on the node.
func (n *Node) Command(name string, args ...string) exec.Cmd {
	return n.CommandContext(context.Background(), name, args...)
}

// CommandContext runs name with args on the node, inside the node's root.
func (n *Node) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &cmd{node: n, ctx: ctx, argv: append([]string{name}, args...)}
}

// cmd is one command on a node: through pods/exec, or through the agent
// (agent.go) in agent mode. A lazy node's (lazy.go) has no node until Run.
type cmd struct {
	node   *Node
	lazy   *LazyNode
	ctx    context.Context
	argv   []string
	env    []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (c *cmd) SetEnv(env ...string) exec.Cmd { c.env = env; return c }
func (c *cmd) SetStdin(r io.Reader) exec.Cmd { c.stdin = r; return c }
func (c *cmd) SetStdout(w io.Writer) exec.Cmd {
	c.stdout = w
	return c
}
func (c *cmd) SetStderr(w io.Writer) exec.Cmd {
	c.stderr = w
	return c
}

// Run runs the command on the node and returns a *exec.RunError when it
// fails, with the captured stderr as its output, like kind's.
func (c *cmd) Run() error {
	if c.node == nil {
		n, why := c.lazy.access.Node(c.ctx, c.lazy.name)
		if n == nil {
			return fmt.Errorf("running %s on %s: no node pod there: %s", exec.PrettyCommand(c.argv[0], c.argv[1:]...), c.lazy.name, why)
		}
		c.node = n
	}
	if c.node.access.opts.Agent {
		return c.runAgent()
	}
	return c.runExec()
}

// runExec streams the command through pods/exec.
func (c *cmd) runExec() error {
	argv := append([]string(nil), c.node.prefix...)
	if len(c.env) > 0 {
		argv = append(append(append(argv, "env"), c.env...), c.argv...)
	} else {
		argv = append(argv, c.argv...)
	}
	a := c.node.access
	req := a.client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(a.Namespace()).Name(c.node.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container,
			Command:   argv,
			Stdin:     c.stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	exe, err := executor(a.config, req.URL())
	if err != nil {
		return &exec.RunError{Command: c.argv, Inner: fmt.Errorf("on node %s through pod %s: %w", c.node.name, c.node.pod, err)}
	}
	var stderr bytes.Buffer
	stdout := c.stdout
	if stdout == nil {
		stdout = io.Discard
	}
	errw := io.Writer(&stderr)
	if c.stderr != nil {
		errw = io.MultiWriter(&stderr, c.stderr)
	}
	// A stream ended by its context (a log follower when the run stops) makes
	// client-go log "Copying stdout failed" and "Websocket Ping failed" to
	// stderr; the command's own error below is what counts.
	quiet := klog.NewContext(c.ctx, logr.Discard())
	err = exe.StreamWithContext(quiet, remotecommand.StreamOptions{Stdin: c.stdin, Stdout: stdout, Stderr: errw})
	if err == nil {
		return nil
	}
	var exit utilexec.CodeExitError
	if errors.As(err, &exit) {
		err = fmt.Errorf("exit status %d", exit.Code)
	} else {
		err = fmt.Errorf("on node %s through pod %s/%s: %w", c.node.name, a.Namespace(), c.node.pod, err)
	}
	return &exec.RunError{Command: c.argv, Output: stderr.Bytes(), Inner: err}
}

// executor speaks WebSocket to the API server, falling back to SPDY where
// the server does not upgrade (kubectl exec does the same).
func executor(config *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(config, http.MethodGet, u.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(config, http.MethodPost, u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}
