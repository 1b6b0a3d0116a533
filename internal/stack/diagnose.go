package stack

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
)

// NeedsNodeAccess is why node checks are skipped on a cluster that is not termlab's.
const NeedsNodeAccess = "needs -nodeaccess"

// DiagnoseSource is where `diagnose` reads from, and the cleanup to run when
// it is done (always: it removes the node pods). Termlab's own cluster when
// kubeconfig is "": node checks through kind's docker exec unless nodeAccess
// is false. Any cluster otherwise, reached through the kubeconfig alone
// (DiagnoseSourceFromConfig): node checks only with nodeAccess. It never
// checks the cluster's health: a diagnosis is wanted most when a node is
// NotReady.
func DiagnoseSource(ctx context.Context, log *progress.Logger, kubeconfig string, nodeAccess *bool) (diagnose.Source, func(context.Context) error, error) {
	own := kubeconfig == ""
	if own {
		root, err := project.Root()
		if err != nil {
			return diagnose.Source{}, noCleanup, err
		}
		kubeconfig = project.KubeconfigPath(root)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return diagnose.Source{}, noCleanup, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	if !own {
		return DiagnoseSourceFromConfig(ctx, log, ConfigSource{Config: cfg, Desc: kubeconfig, NodeAccess: nodeAccess != nil && *nodeAccess})
	}
	src, _, _, err := diagnoseClients(cfg, kubeconfig)
	if err != nil {
		return diagnose.Source{}, noCleanup, err
	}
	if nodeAccess != nil && !*nodeAccess {
		src.Node = diagnose.NoNodeAccess("node access was turned off (-nodeaccess=false)")
		return src, noCleanup, nil
	}
	ns, err := cluster.ExistingNodes(log, cluster.DefaultName)
	if err != nil {
		return diagnose.Source{}, noCleanup, err
	}
	byName := map[string]nodes.Node{}
	var names []string
	for _, n := range ns {
		byName[n.String()] = n
		names = append(names, n.String())
	}
	src.Node = KindNodeAccess(byName)
	src.Nodes = func(context.Context) []string { return names }
	return src, noCleanup, nil
}

// ConfigSource is a cluster that diagnose reaches through a *rest.Config
// (what `kubectl termlab` gets from kubectl's flags).
type ConfigSource struct {
	Config *rest.Config
	// Desc names the kubeconfig and context in messages.
	Desc string
	// NodeAccess starts node pods. NodeAccessFlag is the flag that turns it
	// on, named when node checks are skipped ("" for mage's -nodeaccess).
	NodeAccess     bool
	NodeAccessFlag string
}

// DiagnoseSourceFromConfig is where `diagnose` reads from on any cluster
// reached through c.Config, and the cleanup to run when it is done (always).
// Node checks say "not checked" unless c.NodeAccess, which starts a
// short-lived privileged pod on each node asked about (internal/nodepod);
// the cleanup removes them. c.Config is not changed.
func DiagnoseSourceFromConfig(ctx context.Context, log *progress.Logger, c ConfigSource) (diagnose.Source, func(context.Context) error, error) {
	src, cfg, client, err := diagnoseClients(c.Config, c.Desc)
	if err != nil {
		return src, noCleanup, err
	}
	if !c.NodeAccess {
		if c.NodeAccessFlag != "" {
			src.Node = diagnose.NoNodeAccess("needs " + c.NodeAccessFlag)
		}
		return src, noCleanup, nil
	}
	pods := nodepod.New(client, cfg, nodepod.Options{
		RunID:       "diagnose-" + lab.NewRunID(time.Now()),
		Log:         func(format string, args ...any) { log.Infof(format, args...) },
		SwitchImage: images.WorkloadRef,
	})
	controlPlane := envTrue(EnvControlPlaneAccess)
	src.Node = func(ctx context.Context, name string) (kubelet.Node, string) {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && !controlPlane && hasControlPlaneRole(node) {
			return nil, fmt.Sprintf("node %s is a control-plane node, whose disk holds the cluster's CA and etcd keys: termlab starts a privileged pod there only with %s=1", name, EnvControlPlaneAccess)
		}
		// A pod there needs its kubelet: one that stopped reporting would
		// leave the node pod Pending for the whole start timeout.
		if err == nil && !nodeReady(node) {
			return nil, fmt.Sprintf("node %s is not Ready (its kubelet is not reporting), so no node pod can start there: look on the machine itself (systemctl status kubelet, crictl ps)", name)
		}
		done := log.Step("starting a node pod on " + name)
		n, why := pods.Node(ctx, name)
		if n == nil {
			done(fmt.Errorf("%s", why))
			return nil, why
		}
		done(nil)
		return n, ""
	}
	src.Nodes = func(ctx context.Context) []string { return realNodes(ctx, client) }
	return src, pods.Close, nil
}

func noCleanup(context.Context) error { return nil }

// DefaultRequestTimeout bounds each of diagnose's requests when the user
// gave no --request-timeout (or 0): a diagnosis of a cluster in trouble
// should say which request hung, not hang with it.
const DefaultRequestTimeout = 20 * time.Second

// diagnoseClients builds diagnose's clients from a copy of cfg, tuned for a
// diagnosis, with node checks "not checked" (NeedsNodeAccess) until the
// caller gives node access.
func diagnoseClients(cfg *rest.Config, desc string) (diagnose.Source, *rest.Config, kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 { // kubectl's --request-timeout, when given, stands
		cfg.Timeout = DefaultRequestTimeout
	}
	cfg.UserAgent = "termlab-diagnose"
	// A namespace diagnosis lists every resource type (about 50 LISTs):
	// client-go's default 5 requests/s would add seconds of throttling.
	cfg.QPS, cfg.Burst = 50, 100
	// Deprecation warnings (v1 Endpoints …) are about the LISTs, not the answer.
	cfg.WarningHandler = rest.NoWarnings{}
	// Every request counted, for the requests per object a whole
	// diagnosis states.
	var requests atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: &requests} })
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return diagnose.Source{}, cfg, nil, fmt.Errorf("building a client from %s: %w", desc, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return diagnose.Source{}, cfg, nil, fmt.Errorf("building a dynamic client from %s: %w", desc, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return diagnose.Source{}, cfg, nil, fmt.Errorf("building a metadata client from %s: %w", desc, err)
	}
	count := func() int { return int(requests.Load()) }
	return diagnose.Source{Client: client, Dynamic: dyn, Metadata: meta, Node: diagnose.NoNodeAccess(NeedsNodeAccess), Requests: count}, cfg, client, nil
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the transport beneath.
func (t countingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// realNodes are the cluster's nodes that run a kubelet (not kwok's fake ones).
func realNodes(ctx context.Context, client kubernetes.Interface) []string {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for i := range list.Items {
		if n := &list.Items[i]; !kwok.IsFake(n) {
			out = append(out, n.Name)
		}
	}
	return out
}

// nodeReady: the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hasControlPlaneRole reports the role kubeadm (and so kind) gives the
// nodes that run the control plane.
func hasControlPlaneRole(n *corev1.Node) bool {
	_, ok := n.Labels["node-role.kubernetes.io/control-plane"]
	return ok
}

// KindNodeAccess gives diagnose the kind node containers by node name; any
// other node (a kwok fake node, a machine) is "not checked".
func KindNodeAccess(byName map[string]nodes.Node) diagnose.NodeAccess {
	return func(_ context.Context, name string) (kubelet.Node, string) {
		if n, ok := byName[name]; ok {
			return n, ""
		}
		return nil, fmt.Sprintf("node %s is not a kind node container on this Docker engine (a kwok fake node has no kubelet or runtime to ask)", name)
	}
}
