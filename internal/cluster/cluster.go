// Package cluster creates, reuses, inspects and deletes the termlab kind
// cluster through kind's Go API, and hands the labs an Env.
package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindversion "sigs.k8s.io/kind/pkg/cmd/kind/version"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/progress"
)

// UserAgent is the user agent of termlab's API requests.
const UserAgent = "termlab"

// DefaultName is the kind cluster name.
const DefaultName = "termlab"

// Options say which cluster to bring up and how.
type Options struct {
	Name           string
	ConfigPath     string // manifests/kind/cluster.yaml
	KubeconfigPath string // project-local kubeconfig
	NodeImage      string
	// ImageRepository is set when control-plane images are local (see HostFacts).
	ImageRepository string
	// Limits are the control plane's request limits: the config file's
	// (Kubernetes' defaults) unless raised.
	Limits Limits
	// Recreate deletes an existing cluster first.
	Recreate bool
	// ReadyTimeout bounds the wait for every node to be Ready.
	ReadyTimeout time.Duration
	// ReuseTimeout bounds how long an existing cluster may take to answer
	// with every node Ready before it is declared broken and recreated.
	ReuseTimeout time.Duration
	// WhileCreating, if set, runs as soon as a new cluster's API server
	// answers, while kind goes on creating it (joining the workers, ~12 s):
	// what needs only the control plane (kwok) or the node containers
	// (image loads) is done by the time create returns. Its Env's workers are
	// containers that have not joined yet. Up returns its error; it is not
	// run when an existing cluster is reused.
	WhileCreating func(ctx context.Context, early *Env) error
	// CreateImage, if set, is called only when a cluster is to be created and
	// returns the image to create it from: NodeImage with more images
	// preloaded (nodeimage.Preload), which reuse accepts in NodeImage's place.
	CreateImage func(ctx context.Context) (string, error)
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	if o.ReuseTimeout == 0 {
		o.ReuseTimeout = 60 * time.Second
	}
}

func provider(log *progress.Logger) *kindcluster.Provider {
	return kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(kindLogger{log}))
}

// Health describes an existing cluster.
type Health struct {
	Exists  bool
	Healthy bool
	Problem string // why it is not healthy
	Image   string // node image the control plane runs
	// Stopped are node containers that exited (a dockerd restart, a
	// reboot) in a cluster otherwise as wanted: Up starts them again.
	Stopped []nodes.Node
	// Local is a problem on this machine, not in the cluster (its
	// kubeconfig cannot be written): Up refuses, it does not recreate.
	Local string
}

// errKubeconfigFile marks a kubeconfig that could not be written here.
var errKubeconfigFile = errors.New("cannot write the kubeconfig")

// Check inspects an existing cluster: all node containers running, the API
// answering, and the node image the one wanted.
func Check(ctx context.Context, log *progress.Logger, o Options) Health {
	o.defaults()
	p := provider(log)
	names, err := p.List()
	if err != nil {
		return Health{Problem: "listing kind clusters: " + err.Error()}
	}
	if !contains(names, o.Name) {
		return Health{}
	}
	h := Health{Exists: true}
	ns, err := p.ListNodes(o.Name)
	if err != nil || len(ns) == 0 {
		h.Problem = fmt.Sprintf("cluster %q has no node containers (half-created?)", o.Name)
		return h
	}
	cfgData, err := os.ReadFile(o.ConfigPath)
	if err == nil {
		if cfg, err := RenderConfig(cfgData, o.Name, HostFacts{}); err == nil {
			if cp, w := CountRoles(cfg); cp+w != len(ns) {
				h.Problem = fmt.Sprintf("cluster %q has %d node containers, config asks for %d", o.Name, len(ns), cp+w)
				return h
			}
		}
	}
	cs, err := inspectNodes(ctx, ns)
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	for _, c := range cs {
		switch c.state {
		case "running":
		case "exited", "created":
			h.Stopped = append(h.Stopped, c.node)
		default:
			h.Problem = fmt.Sprintf("node container %s is %s", c.node, c.state)
			return h
		}
		h.Image = c.image
	}
	if o.NodeImage != "" && h.Image != o.NodeImage && !madeFrom(ctx, h.Image, o.NodeImage) {
		h.Problem = fmt.Sprintf("cluster runs node image %s, wanted %s", h.Image, o.NodeImage)
		return h
	}
	if n, gone, why := goneBind(cs, sourceGone); n != nil {
		h.Problem = fmt.Sprintf("node %s mounts %s from this machine, %s: the cluster was made from a checkout since removed, and its API server cannot start again", n, gone, why)
		return h
	}
	if why := configChanged(ctx, cs, o.ConfigPath, o.Limits); why != "" {
		h.Problem = why
		return h
	}
	if len(h.Stopped) > 0 {
		h.Problem = fmt.Sprintf("node containers %s stopped (after a dockerd restart or a reboot?)", nodeNames(h.Stopped))
		return h
	}
	// The project's kubeconfig when this cluster answers it (its CA is this
	// cluster's: one left from an earlier cluster of the same name fails the
	// TLS check), else kind's anew: reading kind's costs about ten docker
	// calls, a second of every reuse.
	if !answers(ctx, o.KubeconfigPath) {
		if err := writeKubeconfig(p, o); err != nil {
			h.Problem = err.Error()
			if errors.Is(err, errKubeconfigFile) {
				h.Local = h.Problem
			}
			return h
		}
	}
	client, err := clientFor(o.KubeconfigPath)
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	if err := waitRestarted(ctx, log, client, o, cs); err != nil {
		h.Problem = "running, but not every node is Ready: " + err.Error()
		return h
	}
	h.Healthy = true // and the project's kubeconfig is this cluster's
	return h
}

// waitRestarted waits until every node is Ready: at once on a healthy
// cluster; node containers docker itself started again (a dockerd restart
// or a reboot starts kind's nodes on its own) get the time a new cluster's
// nodes have, counted from their start, and the wait says so.
func waitRestarted(ctx context.Context, log *progress.Logger, client kubernetes.Interface, o Options, cs []nodeContainer) error {
	if WaitNodesReady(ctx, client, time.Second, nil) == nil {
		return nil
	}
	var started time.Time
	for _, c := range cs {
		if c.started.After(started) {
			started = c.started
		}
	}
	timeout := o.ReuseTimeout
	since := time.Since(started).Round(time.Second)
	if since < o.ReadyTimeout {
		timeout = max(timeout, o.ReadyTimeout-since)
	}
	done := log.Step(fmt.Sprintf("waiting up to %s for the API server and every node to be Ready (node containers started %s ago)", timeout.Round(time.Second), since))
	stop := log.Ticker("waiting for the nodes", 15*time.Second)
	err := WaitNodesReady(ctx, client, timeout, nil)
	stop()
	done(err)
	return err
}

// startStopped starts the cluster's stopped node containers again (kind's
// entrypoint takes care of a changed IP address), waits until systemd in
// each has the kubelet running (until then a node's Ready condition is the
// one it had when it stopped), and checks the cluster anew, allowing the
// nodes the time a cluster's creation has to be Ready.
func startStopped(ctx context.Context, log *progress.Logger, o Options, stopped []nodes.Node) Health {
	names := nodeNames(stopped)
	done := log.Step(fmt.Sprintf("starting the stopped node containers %s (a dockerd restart or a reboot stopped them); the cluster is kept", names))
	args := []string{"start"}
	for _, n := range stopped {
		args = append(args, n.String())
	}
	err := kindexec.CommandContext(ctx, "docker", args...).Run()
	if err == nil {
		err = wait.PollUntilContextTimeout(ctx, time.Second, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
			for _, n := range stopped {
				if s, err := kubelet.State(ctx, n); err != nil || s != "active" {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			err = fmt.Errorf("the kubelet on %s was not active within %s of the start: %w", names, o.ReadyTimeout, err)
		}
	}
	done(err)
	if err != nil {
		return Health{Exists: true, Problem: fmt.Sprintf("starting the stopped node containers: %v", err)}
	}
	o.ReuseTimeout = o.ReadyTimeout
	done = log.Step("waiting for the API server and every node to be Ready again")
	h := Check(ctx, log, o)
	if !h.Healthy {
		done(errors.New(h.Problem))
	} else {
		done(nil)
	}
	return h
}

func nodeNames(ns []nodes.Node) string {
	var names []string
	for _, n := range ns {
		names = append(names, n.String())
	}
	return strings.Join(names, ", ")
}

// madeFrom reports whether image is base with images preloaded.
func madeFrom(ctx context.Context, image, base string) bool {
	labels, ok := dockerimage.Labels(ctx, image)
	return ok && labels[dockerimage.BaseLabel] == base
}

// Up creates the cluster, or reuses a healthy one, and waits until every real node is Ready.
func Up(ctx context.Context, log *progress.Logger, o Options) (*Env, error) {
	o.defaults()
	p := provider(log)
	h := Check(ctx, log, o)
	if h.Local != "" && !o.Recreate {
		// A file here that cannot be written is no reason to delete a cluster.
		return nil, fmt.Errorf("%s: fix that file or its folder and run again (the cluster %q is left as it is)", h.Local, o.Name)
	}
	if h.Exists && len(h.Stopped) > 0 && !o.Recreate {
		h = startStopped(ctx, log, o, h.Stopped)
	}
	// An interrupted check says nothing of the cluster: a Ctrl-C during the
	// wait for its nodes must not delete it.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("checking cluster %q: %w (the cluster is left as it is)", o.Name, err)
	}
	// A new cluster's last steps (the WhileCreating hook, its config hash)
	// run while the nodes' readiness is waited for below.
	finishCreate := func() error { return nil }
	created := false
	switch {
	case h.Exists && h.Healthy && !o.Recreate:
		log.Infof("reusing healthy cluster %q (node image %s)", o.Name, h.Image)
	default:
		if h.Exists {
			why := h.Problem
			if o.Recreate {
				why = "recreate requested"
			}
			done := log.Step(fmt.Sprintf("deleting cluster %q (%s)", o.Name, why))
			err := Delete(ctx, log, p, o.Name, o.KubeconfigPath)
			done(err)
			if err != nil {
				return nil, fmt.Errorf("deleting broken cluster %q: %w", o.Name, err)
			}
		}
		var err error
		if finishCreate, err = create(ctx, log, p, o); err != nil {
			return nil, err
		}
		created = true
	}
	var finishErr error
	var finishing sync.WaitGroup
	finishing.Go(func() { finishErr = finishCreate() })
	env, err := connectReady(ctx, log, p, o, created || h.Healthy)
	finishing.Wait()
	if err = errors.Join(err, finishErr); err != nil {
		return nil, err
	}
	return env, nil
}

// connectReady writes the kubeconfig unless it is fresh (kind's create just
// wrote it, owner-only, for a new cluster; Check for a healthy one), connects
// and waits until every node is Ready and the controllers work.
func connectReady(ctx context.Context, log *progress.Logger, p *kindcluster.Provider, o Options, fresh bool) (*Env, error) {
	if !fresh {
		if err := writeKubeconfig(p, o); err != nil {
			return nil, err
		}
	}
	env, err := connect(ctx, p, o)
	if err != nil {
		return nil, err
	}
	done := log.Step("waiting for every node to be Ready")
	err = WaitNodesReady(ctx, env.Client, o.ReadyTimeout, nil)
	done(err)
	if err != nil {
		return env, err
	}
	done = log.Step("checking that the controllers work (a probe namespace gets its ServiceAccount)")
	err = WaitControllersWorking(ctx, env.Client, 2*time.Minute)
	done(err)
	return env, err
}

// create makes the cluster with kind and returns what is left to finish it:
// waiting for the WhileCreating hook, and recording the config's hash.
func create(ctx context.Context, log *progress.Logger, p *kindcluster.Provider, o Options) (finish func() error, err error) {
	base, err := os.ReadFile(o.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("reading kind config: %w", err)
	}
	cfg, err := o.render(base, HostFacts{CgroupV1: DetectCgroupV1(), ImageRepository: o.ImageRepository})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.KubeconfigPath), 0o700); err != nil {
		return nil, err
	}
	if o.CreateImage != nil {
		if o.NodeImage, err = o.CreateImage(ctx); err != nil {
			return nil, err
		}
	}
	done := log.Step(fmt.Sprintf("creating kind cluster %q from %s with %s", o.Name, o.ConfigPath, o.NodeImage))
	stop := log.Ticker("creating the cluster", 20*time.Second)
	early := make(chan error, 1)
	earlyCtx, cancelEarly := context.WithCancel(ctx)
	if o.WhileCreating != nil {
		go func() { early <- whenAPIAnswers(earlyCtx, p, o) }()
	} else {
		early <- nil
	}
	err = p.Create(o.Name,
		kindcluster.CreateWithV1Alpha4Config(cfg),
		kindcluster.CreateWithNodeImage(o.NodeImage),
		kindcluster.CreateWithKubeconfigPath(o.KubeconfigPath),
		// No kind wait: it polls the control plane alone through docker exec
		// and kubectl; Up waits for every node, the control plane included.
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false),
	)
	stop()
	done(err)
	if err != nil {
		cancelEarly()
		<-early
		return nil, fmt.Errorf("creating kind cluster %q (kind deletes a half-created cluster itself; run with TERMLAB_VERBOSE=1 for kind's log): %w", o.Name, err)
	}
	return func() error {
		defer cancelEarly()
		hashErr := recordConfigHash(ctx, p, o)
		return errors.Join(<-early, hashErr)
	}, nil
}

// ConfigHashFile is where the control-plane node keeps the ConfigHash of the
// config it was created from: the cluster stores its own state.
const ConfigHashFile = "/kind/termlab-config.sha256"

// recordConfigHash writes the config's hash into the new cluster's control plane.
func recordConfigHash(ctx context.Context, p *kindcluster.Provider, o Options) error {
	sum, err := configHash(o.ConfigPath, o.Limits)
	if err != nil {
		return err
	}
	cp, _, err := listNodes(ctx, p, o.Name)
	if err != nil {
		return fmt.Errorf("cluster %q: no control-plane node to record its config hash on: %w", o.Name, err)
	}
	cmd := cp.CommandContext(ctx, "tee", ConfigHashFile)
	cmd.SetStdin(strings.NewReader(sum + "\n"))
	cmd.SetStdout(io.Discard)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("recording the config hash on %s: %w", cp, err)
	}
	return nil
}

// configChanged says why the cluster does not match the config at path ("" when it does):
// reuse must not keep a cluster made from an earlier config (say, without the audit log).
func configChanged(ctx context.Context, cs []nodeContainer, path string, limits Limits) string {
	if path == "" {
		return ""
	}
	want, err := configHash(path, limits)
	if err != nil {
		return err.Error()
	}
	cp, _, err := splitRoles(cs)
	if err != nil {
		return fmt.Sprintf("no control-plane node to read its config hash from: %v", err)
	}
	out, err := kindexec.Output(cp.CommandContext(ctx, "cat", ConfigHashFile))
	have := strings.TrimSpace(string(out))
	switch {
	case err != nil || have == "":
		return fmt.Sprintf("no %s on %s: its creation was interrupted, or it was made from an earlier kind config (%s or a file it mounts changed since)", ConfigHashFile, cp, path)
	case have != want:
		return fmt.Sprintf("created from another kind config (hash %.12s, %s now hashes to %.12s): it or a file it mounts changed since", have, path, want)
	}
	return ""
}

// writeKubeconfig writes the cluster's kubeconfig to the project-local file
// only, with owner-only permissions.
func writeKubeconfig(p *kindcluster.Provider, o Options) error {
	cfg, err := p.KubeConfig(o.Name, false)
	if err != nil {
		return fmt.Errorf("reading kubeconfig of cluster %q: %w", o.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(o.KubeconfigPath), 0o700); err != nil {
		return fmt.Errorf("%w %s: %w", errKubeconfigFile, o.KubeconfigPath, err)
	}
	if err := os.WriteFile(o.KubeconfigPath, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("%w %s: %w", errKubeconfigFile, o.KubeconfigPath, err)
	}
	return nil
}

// ExistingNodes are the node containers of the named cluster (none when it
// does not exist), for repairs that must happen before its health is judged.
func ExistingNodes(log *progress.Logger, name string) ([]nodes.Node, error) {
	p := provider(log)
	names, err := p.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if !contains(names, name) {
		return nil, nil
	}
	ns, err := p.ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing nodes of cluster %q: %w", name, err)
	}
	return ns, nil
}

// Connect attaches to the running cluster without creating anything.
func Connect(ctx context.Context, log *progress.Logger, o Options) (*Env, error) {
	o.defaults()
	p := provider(log)
	h := Check(ctx, log, o)
	if !h.Exists {
		return nil, fmt.Errorf("no kind cluster %q: run `%s`", o.Name, invocation.Command("cluster:up"))
	}
	if !h.Healthy {
		return nil, fmt.Errorf("cluster %q is not healthy (%s): run `%s` to repair it", o.Name, h.Problem, invocation.Command("cluster:up"))
	}
	return connect(ctx, p, o)
}

func connect(ctx context.Context, p *kindcluster.Provider, o Options) (*Env, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", o.KubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", o.KubeconfigPath, err)
	}
	// client-go's default 5 QPS makes applying kwok's CRDs and stages take
	// seconds on a cluster that is ours alone.
	restCfg.QPS, restCfg.Burst = 50, 100
	// The API server's audit log names the sender by its user agent: termlab's
	// requests say "termlab", a person's or a script's "kubectl/…".
	restCfg.UserAgent = UserAgent
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	ns, err := p.ListNodes(o.Name)
	if err != nil {
		return nil, fmt.Errorf("listing nodes of cluster %q: %w", o.Name, err)
	}
	cs, err := inspectNodes(ctx, ns)
	if err != nil {
		return nil, err
	}
	cp, workers, err := splitRoles(cs)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", o.Name, err)
	}
	env := &Env{Name: o.Name, KubeconfigPath: o.KubeconfigPath, RESTConfig: restCfg, Client: client, ControlPlane: cp, Workers: asNodes(workers)}
	for _, c := range cs {
		if c.node == cp {
			env.Versions.NodeImage = c.image
		}
	}
	env.Versions.Kind = kindversion.Version()
	if v, err := client.Discovery().ServerVersion(); err == nil {
		env.Versions.Kubernetes = v.GitVersion
	}
	return env, nil
}

// Down deletes the cluster and the project-local kubeconfig.
func Down(ctx context.Context, log *progress.Logger, o Options) error {
	o.defaults()
	p := provider(log)
	names, err := p.List()
	if err != nil {
		return err
	}
	if !contains(names, o.Name) {
		log.Infof("no cluster %q to delete", o.Name)
		_ = os.Remove(o.KubeconfigPath)
		return nil
	}
	done := log.Step(fmt.Sprintf("deleting cluster %q", o.Name))
	err = Delete(ctx, log, p, o.Name, o.KubeconfigPath)
	done(err)
	_ = os.Remove(o.KubeconfigPath)
	return err
}

// WaitNodesReady waits until every node matching keep (all when nil) is Ready.
// It polls to reach a state (recording history is the evidence recorder's job).
func WaitNodesReady(ctx context.Context, client kubernetes.Interface, timeout time.Duration, keep func(*corev1.Node) bool) error {
	var last string
	// A quarter second: a new cluster's workers turn Ready just after kind
	// returns, and every poll interval of waiting shows in cluster:up.
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		var notReady []string
		count := 0
		for i := range list.Items {
			n := &list.Items[i]
			if keep != nil && !keep(n) {
				continue
			}
			count++
			if !NodeReady(n) {
				notReady = append(notReady, n.Name)
			}
		}
		last = fmt.Sprintf("not Ready: %v", notReady)
		return count > 0 && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting %s for nodes to be Ready (%s): %w", timeout, last, err)
	}
	return nil
}

// NodeReady reports the node's Ready condition.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// LoadImage makes a local docker image available to every real node's
// containerd, skipping nodes that already have the same image ID.
func LoadImage(ctx context.Context, env *Env, ref string) error {
	var kn []nodes.Node
	for _, n := range append([]Node{env.ControlPlane}, env.Workers...) {
		k, ok := n.(nodes.Node)
		if !ok {
			return fmt.Errorf("loading %s onto %s: images are loaded only onto termlab's own kind cluster (docker access to its nodes)", ref, n)
		}
		kn = append(kn, k)
	}
	return LoadImageOn(ctx, ref, kn...)
}

// LoadImagesOn loads images from the local Docker engine onto nodes, each
// node the refs want names for it where it lacks them (by image ID): one
// look at each node's images (not one per image), all nodes at once.
func LoadImagesOn(ctx context.Context, want map[nodes.Node][]string) error {
	ids := map[string]string{}
	for _, refs := range want {
		for _, ref := range refs {
			if _, ok := ids[ref]; !ok {
				id, err := dockerimage.ID(ctx, ref)
				if err != nil {
					return fmt.Errorf("image %s is not in the local Docker engine: %w", ref, err)
				}
				ids[ref] = id
			}
		}
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for n, refs := range want {
		wg.Go(func() {
			have, _ := nodeImageIDs(ctx, n) // none known: each is looked at alone
			for _, ref := range refs {
				id, ok := have[ref]
				if !ok {
					id, _ = nodeutils.ImageID(n, ref) // a ref the node names otherwise
				}
				if id == ids[ref] {
					continue
				}
				if err := loadInto(ctx, n, ref); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nodeImageIDs is every image the node's containerd has, by tag.
func nodeImageIDs(ctx context.Context, n nodes.Node) (map[string]string, error) {
	var out bytes.Buffer
	cmd := n.CommandContext(ctx, "crictl", "images", "-o", "json")
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing the images on %s: %w", n, err)
	}
	return parseCrictlImages(out.Bytes())
}

// parseCrictlImages reads `crictl images -o json` into image IDs by tag.
func parseCrictlImages(b []byte) (map[string]string, error) {
	var list struct {
		Images []struct {
			ID       string   `json:"id"`
			RepoTags []string `json:"repoTags"`
		} `json:"images"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("reading crictl's image list: %w", err)
	}
	byTag := map[string]string{}
	for _, im := range list.Images {
		for _, t := range im.RepoTags {
			byTag[t] = im.ID
		}
	}
	return byTag, nil
}

// LoadImageOn loads the image from the local Docker engine into each node
// that does not have it (by image ID) yet, all nodes at once.
func LoadImageOn(ctx context.Context, ref string, ns ...nodes.Node) error {
	want := map[nodes.Node][]string{}
	for _, n := range ns {
		want[n] = []string{ref}
	}
	return LoadImagesOn(ctx, want)
}

func loadInto(ctx context.Context, n nodes.Node, ref string) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := dockerimage.Save(ctx, pw, ref)
		pw.CloseWithError(err)
		errc <- err
	}()
	loadErr := nodeutils.LoadImageArchive(n, pr)
	pr.Close()
	if saveErr := <-errc; saveErr != nil {
		return saveErr
	}
	if loadErr != nil {
		return fmt.Errorf("loading %s into node %s: %w", ref, n, loadErr)
	}
	return nil
}

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.Timeout = 20 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Exists reports whether kind lists a cluster of that name (false when it
// cannot list them: then there is nothing Down could do either).
func Exists(log *progress.Logger, name string) bool {
	names, err := provider(log).List()
	return err == nil && contains(names, name)
}
