package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/invocation"
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
	// ControlPlaneAccess lets node access reach the control-plane nodes too
	// (-controlplaneaccess), whose disks hold the cluster's CA and etcd
	// keys: there termlab reads only the API server's audit log. Without it
	// node pods go on workers only, and the claims that rest on the audit
	// log are not checked. It implies NodeAccess.
	ControlPlaneAccess bool
	// WorkloadImage is the labs' image as the cluster's nodes can pull it
	// (default: termlab's own, which only termlab's kind nodes have).
	WorkloadImage string
	// FaultNode is the one worker on which a lab may stop the kubelet
	// (-allownodefaults=<node>). It implies node access, through node pods
	// whose agent answers over pods/proxy while the kubelet is down.
	FaultNode string
	// ClusterFaults lets a lab make a change every tenant of the cluster
	// feels (-allowclusterfaults): lab:namespace's APIService with no
	// backend fails discovery, and so every namespace deletion, while it exists.
	ClusterFaults bool
}

// RemoteFlags are the flags that name a cluster reached through a
// kubeconfig and what termlab may do there; nil is "not given".
type RemoteFlags struct {
	Kubeconfig, Context *string
	NodeAccess          *bool
	ControlPlaneAccess  *bool
	AllowNodeFaults     *string
	AllowClusterFaults  *bool
}

// The settings that stand for the flags, read where a flag is not given.
const (
	EnvKubeconfig         = "TERMLAB_KUBECONFIG"
	EnvContext            = "TERMLAB_CONTEXT"
	EnvNodeAccess         = "TERMLAB_NODE_ACCESS"
	EnvControlPlaneAccess = "TERMLAB_CONTROL_PLANE_ACCESS"
	EnvAllowNodeFaults    = "TERMLAB_ALLOW_NODE_FAULTS"
	EnvAllowClusterFaults = "TERMLAB_ALLOW_CLUSTER_FAULTS"
	EnvWorkloadImage      = "TERMLAB_WORKLOAD_IMAGE"
)

// RemoteFromEnv reads the TERMLAB_* settings of a remote cluster; flags,
// where given, win. Without a kubeconfig the labs run on termlab's own
// cluster, where -context, -nodeaccess, -allownodefaults and
// -allowclusterfaults mean nothing: given there (or left in the
// environment) they are refused, before anything runs or anything on this
// host changes, instead of being silently ignored.
func RemoteFromEnv(f RemoteFlags) (Remote, error) {
	r := Remote{
		Kubeconfig:         os.Getenv(EnvKubeconfig),
		Context:            os.Getenv(EnvContext),
		NodeAccess:         envTrue(EnvNodeAccess),
		ControlPlaneAccess: envTrue(EnvControlPlaneAccess),
		WorkloadImage:      os.Getenv(EnvWorkloadImage),
		FaultNode:          os.Getenv(EnvAllowNodeFaults),
		ClusterFaults:      envTrue(EnvAllowClusterFaults),
	}
	// What was asked for, flag or setting, to name it in a refusal.
	var given []string
	note := func(set bool, flag, env string) {
		if set {
			given = append(given, flag+" ("+env+")")
		}
	}
	note(r.Context != "", invocation.Flag("-context"), EnvContext)
	note(os.Getenv(EnvNodeAccess) != "", invocation.Flag("-nodeaccess"), EnvNodeAccess)
	note(os.Getenv(EnvControlPlaneAccess) != "", invocation.Flag("-controlplaneaccess"), EnvControlPlaneAccess)
	note(r.FaultNode != "", invocation.Flag("-allownodefaults"), EnvAllowNodeFaults)
	note(os.Getenv(EnvAllowClusterFaults) != "", invocation.Flag("-allowclusterfaults"), EnvAllowClusterFaults)
	if f.Kubeconfig != nil && *f.Kubeconfig != "" {
		r.Kubeconfig = *f.Kubeconfig
	}
	if f.Context != nil {
		given = append(given, invocation.Flag("-context"))
		if *f.Context != "" {
			r.Context = *f.Context
		}
	}
	if f.NodeAccess != nil {
		given = append(given, invocation.Flag("-nodeaccess"))
		r.NodeAccess = *f.NodeAccess
	}
	if f.ControlPlaneAccess != nil {
		given = append(given, invocation.Flag("-controlplaneaccess"))
		r.ControlPlaneAccess = *f.ControlPlaneAccess
	}
	if f.AllowNodeFaults != nil {
		given = append(given, invocation.Flag("-allownodefaults"))
		if *f.AllowNodeFaults != "" {
			r.FaultNode = *f.AllowNodeFaults
		}
	}
	if f.AllowClusterFaults != nil {
		given = append(given, invocation.Flag("-allowclusterfaults"))
		r.ClusterFaults = *f.AllowClusterFaults
	}
	if given = dedupe(given); r.Kubeconfig == "" && len(given) > 0 {
		it, them := "it", "it"
		if len(given) > 1 {
			it, them = "they", "them"
		}
		return Remote{}, fmt.Errorf("%s: only with %s (%s), which runs the lab on that cluster; without it the lab runs on termlab's own cluster, where %s would be ignored. Add %s, or leave %s out (a setting: unset it)",
			strings.Join(given, ", "), invocation.Flag("-kubeconfig=<file>"), EnvKubeconfig, it, invocation.Flag("-kubeconfig"), them)
	}
	if r.FaultNode != "" || r.ControlPlaneAccess {
		r.NodeAccess = true
	}
	return r, nil
}

// envTrue is a boolean setting: set and not "0" or "false".
func envTrue(name string) bool {
	v := os.Getenv(name)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// dedupe keeps the first of each flag named twice (a flag and its setting).
func dedupe(given []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range given {
		name, _, _ := strings.Cut(g, " ")
		if !seen[name] {
			seen[name] = true
			out = append(out, g)
		}
	}
	return out
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
	version, err := serverVersion(ctx, client)
	if err != nil {
		done(err)
		return nil, noCleanup, fmt.Errorf("asking %s for its version (is the cluster reachable with this kubeconfig?): %w", cfg.Host, err)
	}
	lctx, cancel := context.WithTimeout(ctx, startCallTimeout)
	list, err := client.CoreV1().Nodes().List(lctx, metav1.ListOptions{})
	cancel()
	done(err)
	if err != nil {
		return nil, noCleanup, fmt.Errorf("listing the nodes of %s within %s: %w", cfg.Host, startCallTimeout, err)
	}
	env := &cluster.Env{
		// The run lock is per API server: two runs through two kubeconfigs
		// of one cluster still exclude each other.
		Name:               lockName(cfg.Host),
		KubeconfigPath:     r.Kubeconfig,
		RESTConfig:         cfg,
		Client:             client,
		WorkloadImage:      r.WorkloadImage,
		NodeAccess:         evidence.NodeAccessNone,
		AllowClusterFaults: r.ClusterFaults,
	}
	env.Versions.Kubernetes = version.GitVersion
	env.Versions.NodeImage = "n/a (a cluster reached through " + r.Kubeconfig + ")"
	if env.WorkloadImage == "" {
		env.WorkloadImage = images.WorkloadRef
	}
	cp, workers := remoteNodes(list.Items, r.FaultNode)
	var access *nodepod.Access
	node := func(name string) cluster.Node { return cluster.NoAccess(name) }
	cleanup := noCleanup
	if r.NodeAccess {
		access = nodepod.New(client, cfg, nodepod.Options{
			RunID: lab.NewRunID(time.Now()),
			Log:   func(format string, args ...any) { log.Infof(format, args...) },
			Agent: r.FaultNode != "",
			// The switch's pod must not be on the node whose kubelet a lab stops.
			SwitchImage: env.WorkloadImage, SwitchAvoids: r.FaultNode,
		})
		node = func(name string) cluster.Node { return access.Lazy(name) }
		cleanup = access.Close
		env.ShutNodeAccess = access.Shut
		env.NodeAccess = evidence.NodeAccessPod
		env.InUse = []string{access.Namespace()}
	}
	switch {
	case cp != "" && r.ControlPlaneAccess:
		env.ControlPlane = node(cp)
	case cp != "":
		// The control plane's disk holds the CA and etcd's keys: a node pod
		// goes there only when asked for by name.
		env.ControlPlane = cluster.NoAccess(cp)
	}
	for _, w := range workers {
		env.Workers = append(env.Workers, node(w))
	}
	if r.FaultNode != "" {
		if err := checkFaultNode(ctx, log, env, r, list.Items); err != nil {
			return env, cleanup, err
		}
	}
	if err := describeKwok(ctx, env); err != nil {
		log.Infof("no kwok on this cluster (%v): labs with fake nodes cannot run here", err)
	}
	if r.WorkloadImage != "" && !strings.Contains(r.WorkloadImage, "@sha256:") {
		log.Warnf("%s=%s is pulled by its tag: what runs is whatever the tag names at each pull; pin it by digest (<image>@sha256:<digest>) so every run, and every node, runs the same image", EnvWorkloadImage, r.WorkloadImage)
	}
	if missing := withoutImage(list.Items, workers, env.WorkloadImage); len(missing) > 0 && r.WorkloadImage == "" {
		log.Warnf("nodes %s do not have the workload image %s (termlab loads it only onto its own kind cluster): a lab pod there will not start; push the image (built by `%s`) to a registry the cluster pulls from and set TERMLAB_WORKLOAD_IMAGE", strings.Join(missing, ", "), env.WorkloadImage, invocation.Command("images:all"))
	}
	how := "no node access: claims resting on a node's container runtime are not checked (" + invocation.Flag("-nodeaccess") + " starts a node pod)"
	if r.NodeAccess {
		how = "node access through short-lived privileged pods in namespace " + access.Namespace() + ", on workers only (the audit log on the control plane is not read: " + invocation.Flag("-controlplaneaccess") + ")"
		if r.ControlPlaneAccess {
			how = "node access through short-lived privileged pods in namespace " + access.Namespace() + ", the control plane's included (" + invocation.Flag("-controlplaneaccess") + ": its audit log)"
		}
	}
	if r.FaultNode != "" {
		how += "; node faults allowed on " + r.FaultNode + " only (kubelet control through the pod's agent over pods/proxy, with a dead-man's switch)"
	}
	if r.ClusterFaults {
		how += "; cluster-wide faults allowed (" + invocation.Flag("-allowclusterfaults") + ": lab:namespace's APIService fails discovery for every tenant while it exists)"
	}
	log.Infof("cluster %s (Kubernetes %s): control plane %q, workers %v, %d kwok fake nodes; %s", cfg.Host, version.GitVersion, cp, workers, len(env.FakeNodes), how)
	return env, cleanup, nil
}

// startCallTimeout bounds each API call before a run starts: a server that
// accepts the connection and never answers must not hang the run (the
// clients have no overall timeout, for the recorder's long watches).
const startCallTimeout = 30 * time.Second

// serverVersion asks GET /version within startCallTimeout
// (Discovery().ServerVersion takes no context).
func serverVersion(ctx context.Context, client kubernetes.Interface) (*version.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, startCallTimeout)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s: %w", startCallTimeout, err)
		}
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("reading the answer to GET /version: %w", err)
	}
	return &info, nil
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
// by name; and the node named for faults if it is a Ready worker, cordoned
// or not (a node fault runs only on a cordoned one: checkFaultNode).
func remoteNodes(nodes []corev1.Node, faultNode string) (controlPlane string, workers []string) {
	for i := range nodes {
		n := &nodes[i]
		if kwok.IsFake(n) {
			continue
		}
		if hasControlPlaneRole(n) {
			if controlPlane == "" || n.Name < controlPlane {
				controlPlane = n.Name
			}
			continue
		}
		if (n.Spec.Unschedulable && n.Name != faultNode) || !cluster.NodeReady(n) {
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
