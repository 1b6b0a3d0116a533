package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
)

// Remote says which existing cluster a lab runs on, reached through a
// kubeconfig alone: termlab builds and starts nothing there and has no
// docker access to its nodes.
type Remote struct {
	Kubeconfig string
	Context    string // "" for the kubeconfig's current context
	// NodeAccess lets termlab start a short-lived privileged pod on a node to
	// ask its container runtime (internal/nodepod); without it the claims
	// resting on the node are not checked.
	NodeAccess bool
	// WorkloadImage is the labs' image as the cluster's nodes can pull it
	// (default: termlab's own, which only termlab's kind nodes have).
	WorkloadImage string
	// FaultNode is the one worker on which a lab may stop the kubelet
	// (-allownodefaults=<node>). It implies node access, through node pods
	// whose agent answers over pods/proxy while the kubelet is down.
	FaultNode string
}

// RemoteFromEnv reads TERMLAB_KUBECONFIG, TERMLAB_CONTEXT,
// TERMLAB_NODE_ACCESS and TERMLAB_WORKLOAD_IMAGE; flags, where given, win.
func RemoteFromEnv(kubeconfig, kubeContext *string, nodeAccess *bool, faultNode *string) Remote {
	r := Remote{
		Kubeconfig:    os.Getenv("TERMLAB_KUBECONFIG"),
		Context:       os.Getenv("TERMLAB_CONTEXT"),
		NodeAccess:    os.Getenv("TERMLAB_NODE_ACCESS") != "" && os.Getenv("TERMLAB_NODE_ACCESS") != "0",
		WorkloadImage: os.Getenv("TERMLAB_WORKLOAD_IMAGE"),
	}
	if kubeconfig != nil && *kubeconfig != "" {
		r.Kubeconfig = *kubeconfig
	}
	if kubeContext != nil && *kubeContext != "" {
		r.Context = *kubeContext
	}
	if nodeAccess != nil {
		r.NodeAccess = *nodeAccess
	}
	if v := os.Getenv("TERMLAB_ALLOW_NODE_FAULTS"); v != "" {
		r.FaultNode = v
	}
	if faultNode != nil && *faultNode != "" {
		r.FaultNode = *faultNode
	}
	if r.FaultNode != "" {
		r.NodeAccess = true
	}
	return r
}

// RemoteEnv is the lab environment of the cluster the kubeconfig names: its
// real nodes by name (workers: schedulable, Ready, without the
// control-plane role), kwok's fake nodes if kwok runs there, and each node's
// exec seam: a node pod started on first use with NodeAccess, else
// cluster.NoAccess. The cleanup removes the node pods; call it always.
func RemoteEnv(ctx context.Context, log *progress.Logger, r Remote) (*cluster.Env, func(context.Context) error, error) {
	noCleanup := func(context.Context) error { return nil }
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: r.Kubeconfig}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: r.Context})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, noCleanup, fmt.Errorf("loading kubeconfig %s: %w", r.Kubeconfig, err)
	}
	contextName := r.Context
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, noCleanup, fmt.Errorf("loading context %q of kubeconfig %s: %w", contextName, r.Kubeconfig, err)
	}
	cfg.UserAgent = cluster.UserAgent
	// No overall request timeout: the recorder's watches are long requests
	// (every wait has its own context). The rate is a well-behaved client's
	// on a shared cluster.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, noCleanup, fmt.Errorf("building a client for context %q: %w", contextName, err)
	}
	done := log.Step(fmt.Sprintf("reading the nodes of %s (context %q of %s)", cfg.Host, contextName, r.Kubeconfig))
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		done(err)
		return nil, noCleanup, fmt.Errorf("asking %s for its version (is the cluster reachable with this kubeconfig?): %w", cfg.Host, err)
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	done(err)
	if err != nil {
		return nil, noCleanup, fmt.Errorf("listing the nodes of %s: %w", cfg.Host, err)
	}
	env := &cluster.Env{
		// The run lock is per API server: two runs through two kubeconfigs
		// of one cluster still exclude each other.
		Name:           lockName(cfg.Host),
		KubeconfigPath: r.Kubeconfig,
		RESTConfig:     cfg,
		Client:         client,
		WorkloadImage:  r.WorkloadImage,
		NodeAccess:     evidence.NodeAccessNone,
	}
	env.Versions.Kubernetes = version.GitVersion
	env.Versions.NodeImage = "n/a (a cluster reached through " + r.Kubeconfig + ")"
	if env.WorkloadImage == "" {
		env.WorkloadImage = images.WorkloadRef
	}
	cp, workers := remoteNodes(list.Items)
	var access *nodepod.Access
	node := func(name string) cluster.Node { return cluster.NoAccess(name) }
	cleanup := noCleanup
	if r.NodeAccess {
		access = nodepod.New(client, cfg, nodepod.Options{
			RunID: lab.NewRunID(time.Now()),
			Log:   func(format string, args ...any) { log.Infof(format, args...) },
			Agent: r.FaultNode != "",
		})
		node = func(name string) cluster.Node { return access.Lazy(name) }
		cleanup = access.Close
		env.NodeAccess = evidence.NodeAccessPod
		env.InUse = []string{access.Namespace()}
	}
	if cp != "" {
		env.ControlPlane = node(cp)
	}
	for _, w := range workers {
		env.Workers = append(env.Workers, node(w))
	}
	if r.FaultNode != "" {
		if err := checkFaultNode(ctx, log, env, r.FaultNode); err != nil {
			return env, cleanup, err
		}
	}
	if err := describeKwok(ctx, env); err != nil {
		log.Infof("no kwok on this cluster (%v): labs with fake nodes cannot run here", err)
	}
	if missing := withoutImage(list.Items, workers, env.WorkloadImage); len(missing) > 0 && r.WorkloadImage == "" {
		log.Warnf("nodes %s do not have the workload image %s (termlab loads it only onto its own kind cluster): a lab pod there will not start; push the image (built by `go tool mage images`) to a registry the cluster pulls from and set TERMLAB_WORKLOAD_IMAGE", strings.Join(missing, ", "), env.WorkloadImage)
	}
	how := "no node access: claims resting on a node's container runtime are not checked (-nodeaccess starts a node pod)"
	if r.NodeAccess {
		how = "node access through short-lived privileged pods in namespace " + access.Namespace()
	}
	if r.FaultNode != "" {
		how += "; node faults allowed on " + r.FaultNode + " only (kubelet control through the pod's agent over pods/proxy, with a dead-man's switch)"
	}
	log.Infof("cluster %s (Kubernetes %s): control plane %q, workers %v, %d kwok fake nodes; %s", cfg.Host, version.GitVersion, cp, workers, len(env.FakeNodes), how)
	return env, cleanup, nil
}

// checkFaultNode makes sure a lab can stop and restore the kubelet on the
// named node: a Ready worker, whose kubelet is the systemd unit "kubelet"
// answering through the node pod's agent. A managed cluster's nodes fail
// here (no privileged pods, or no such unit), before anything is stopped.
func checkFaultNode(ctx context.Context, log *progress.Logger, env *cluster.Env, name string) error {
	var node cluster.Node
	for _, w := range env.Workers {
		if w.String() == name {
			node = w
		}
	}
	if node == nil {
		return fmt.Errorf("-allownodefaults=%s: not one of the cluster's Ready, schedulable workers %v", name, workerNames(env.Workers))
	}
	done := log.Step("checking that termlab can stop and restore the kubelet on " + name)
	state, err := kubelet.State(ctx, node)
	if err == nil && state != "active" {
		err = fmt.Errorf("systemd says the kubelet unit is %q, not active", state)
	}
	done(err)
	if err != nil {
		return fmt.Errorf("-allownodefaults=%s: termlab cannot control this node's kubelet, so it will not stop it (a managed node, or a kubelet that is not the systemd unit \"kubelet\"?): %w", name, err)
	}
	env.FaultNode = name
	return nil
}

func workerNames(ws []cluster.Node) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

// remoteNodes picks the control-plane node (the first by name with the
// role label, "" if the cluster shows none, as managed ones do) and the
// workers: real nodes that are Ready, schedulable and not control plane,
// by name.
func remoteNodes(nodes []corev1.Node) (controlPlane string, workers []string) {
	for i := range nodes {
		n := &nodes[i]
		if kwok.IsFake(n) {
			continue
		}
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			if controlPlane == "" || n.Name < controlPlane {
				controlPlane = n.Name
			}
			continue
		}
		if n.Spec.Unschedulable || !cluster.NodeReady(n) {
			continue
		}
		workers = append(workers, n.Name)
	}
	sort.Strings(workers)
	return controlPlane, workers
}

// withoutImage lists the named nodes whose status does not list ref.
func withoutImage(nodes []corev1.Node, names []string, ref string) []string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for i := range nodes {
		n := &nodes[i]
		if !want[n.Name] {
			continue
		}
		has := false
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				has = has || name == ref || strings.HasSuffix(name, "/"+ref)
			}
		}
		if !has {
			out = append(out, n.Name)
		}
	}
	return out
}

// lockName is the run lock's name for the cluster at host: termlab's own
// cluster's when the kubeconfig points there (a run through it and one the
// usual way must exclude each other), else one of the host's own.
func lockName(host string) string {
	if root, err := project.Root(); err == nil {
		if own, err := clientcmd.BuildConfigFromFlags("", project.KubeconfigPath(root)); err == nil && own.Host == host {
			return cluster.DefaultName
		}
	}
	return "kubeconfig-" + shortHash(host)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}
