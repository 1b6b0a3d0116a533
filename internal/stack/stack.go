// Package stack is the one path from a bare host to a ready termlab cluster:
// Docker engine → images → kind cluster → workload/kwok images on the nodes →
// kwok and its fake nodes. Mage targets call it; labs receive its Env.
package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/dockerhost"
	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodeimage"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Options for Up; zero values mean the defaults.
type Options struct {
	// Root is the termlab repository (or unpacked workshop bundle).
	Root      string
	Images    images.Source // TERMLAB_IMAGES: auto (default), official, build
	FakeNodes int           // TERMLAB_FAKE_NODES: default 2
	Recreate  bool
	// NoWait refuses at once, instead of waiting, while another termlab
	// holds the cluster's run lock.
	NoWait bool
	// Limits: the control plane's request limits (lab:scale -limits); raised
	// ones are another cluster (cluster.Limits.ClusterName).
	Limits cluster.Limits
}

// OptionsFromEnv reads the TERMLAB_* settings.
func OptionsFromEnv() (Options, error) {
	src, err := images.ParseSource(os.Getenv("TERMLAB_IMAGES"))
	if err != nil {
		return Options{}, err
	}
	root, err := project.Root()
	if err != nil {
		return Options{}, err
	}
	o := Options{Root: root, Images: src, FakeNodes: 2}
	if v := os.Getenv("TERMLAB_FAKE_NODES"); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &o.FakeNodes); err != nil || o.FakeNodes < 0 {
			return o, fmt.Errorf("TERMLAB_FAKE_NODES=%q: want a whole number >= 0", v)
		}
	}
	o.Recreate = os.Getenv("TERMLAB_RECREATE") != ""
	return o, nil
}

// ClusterOptions are the cluster settings of the repository at root.
func ClusterOptions(root string) cluster.Options {
	return ClusterOptionsFor(root, cluster.LimitsDefault)
}

// ClusterOptionsFor are the settings of the cluster with those limits: for
// raised ones, another cluster with a kubeconfig of its own beside termlab's.
func ClusterOptionsFor(root string, limits cluster.Limits) cluster.Options {
	o := cluster.Options{
		Name:           cluster.DefaultName,
		ConfigPath:     filepath.Join(project.ManifestsDir(root), "kind", "cluster.yaml"),
		KubeconfigPath: project.KubeconfigPath(root),
		Limits:         cluster.LimitsDefault,
	}
	if limits == cluster.LimitsRaised {
		o.Name, o.Limits = limits.ClusterName(), limits
		o.KubeconfigPath += "-" + string(limits)
	}
	return o
}

// Images prepares the Docker engine and every image, building what is missing.
func Images(ctx context.Context, log *progress.Logger, root string, src images.Source) (images.Set, string, error) {
	dockerVersion, err := dockerhost.Ensure(ctx, log, root)
	if err != nil {
		return images.Set{}, "", err
	}
	set, err := images.Ensure(ctx, log, root, src)
	return set, dockerVersion, err
}

// BuildNodeImage prepares the engine and builds the node image locally.
func BuildNodeImage(ctx context.Context, log *progress.Logger, root string) (string, error) {
	if _, err := dockerhost.Ensure(ctx, log, root); err != nil {
		return "", err
	}
	return images.BuildNode(ctx, log, root)
}

// Up brings the whole stack up (or reuses it) and returns the labs' Env.
func Up(ctx context.Context, log *progress.Logger, o Options) (*cluster.Env, error) {
	begin := time.Now()
	dockerVersion, err := dockerhost.Ensure(ctx, log, o.Root)
	if err != nil {
		return nil, err
	}
	// The images are resolved while the run lock is taken and the nodes are
	// looked at for leftovers: neither needs them, and on a reuse each is
	// about a second and a half of waiting on docker.
	resolving, stopResolving := context.WithCancel(ctx)
	resolved := make(chan imagesResult, 1)
	go func() {
		set, err := images.Ensure(resolving, log, o.Root, o.Images)
		resolved <- imagesResult{set, err}
	}()
	// UpCluster returns before taking the images when the lock is not
	// had: the resolution is stopped and waited for, never left running.
	taken := false
	defer func() {
		stopResolving()
		if !taken {
			<-resolved
		}
	}()
	co := ClusterOptionsFor(o.Root, o.Limits)
	co.Recreate = o.Recreate
	env, err := UpCluster(ctx, log, ClusterSpec{Options: co, Resolve: func() (images.Set, error) {
		taken = true
		r := <-resolved
		return r.set, r.err
	}, DockerVersion: dockerVersion, FakeNodes: o.FakeNodes, NoWait: o.NoWait})
	if err != nil {
		return nil, err
	}
	log.Infof("cluster %q ready in %s: kubeconfig %s", env.Name, time.Since(begin).Round(100*time.Millisecond), env.KubeconfigPath)
	return env, nil
}

// imagesResult is one resolution of the images: the set or why not.
type imagesResult struct {
	set images.Set
	err error
}

// ClusterSpec says which kind cluster UpCluster brings up and what goes on it.
type ClusterSpec struct {
	// Options name the cluster, its kind config and kubeconfig; UpCluster
	// sets NodeImage and ImageRepository from Images.
	Options cluster.Options
	Images  images.Set
	// Resolve, when set, gives Images once the run lock is taken and the
	// nodes' leftovers are repaired (it may still be resolving them then).
	Resolve       func() (images.Set, error)
	DockerVersion string
	FakeNodes     int
	// NoKwok leaves kwok and its fake nodes out: labs without fake nodes
	// need neither (the version matrix skips them where it can).
	NoKwok bool
	// NoWait: see Options.NoWait.
	NoWait bool
}

// UpCluster brings one kind cluster up (or reuses it) from resolved images:
// under its run lock, leftovers repaired, then the workload (and kwok) images
// loaded and kwok installed. Up does this for termlab's own cluster; the
// version matrix for one cluster per Kubernetes release.
func UpCluster(ctx context.Context, log *progress.Logger, spec ClusterSpec) (*cluster.Env, error) {
	co := spec.Options
	// Lock, repair, then judge: under the run lock no lab is mid-experiment,
	// so a stopped kubelet is a leftover; a node that is NotReady only because
	// of it must not get the whole cluster recreated.
	locks, err := Lock(ctx, log, co, "cluster:up of "+co.Name, spec.NoWait)
	if err != nil {
		return nil, err
	}
	defer locks.Release()
	restoreKubelets(ctx, log, co.Name)
	set := spec.Images
	if spec.Resolve != nil {
		if set, err = spec.Resolve(); err != nil {
			return nil, err
		}
	}
	co.NodeImage, co.ImageRepository = set.Node, set.ImageRepository
	// A new cluster is made from the node image with the workload (and kwok)
	// images preloaded, so nothing is loaded onto its nodes; it gets kwok
	// while kind joins its workers (kwok needs only the control plane), and
	// that way kwok costs cluster:up nothing.
	preload := []string{set.Workload}
	if !spec.NoKwok {
		preload = append(preload, set.Kwok)
	}
	preloaded := false
	co.CreateImage = func(ctx context.Context) (string, error) {
		ref, err := nodeimage.Preload(ctx, log, project.CacheDir(), set.Node, preload)
		if err != nil {
			log.Warnf("creating from %s and loading the images afterwards: %v", set.Node, err)
			return set.Node, nil
		}
		preloaded = true
		return ref, nil
	}
	kwokDone := false
	co.WhileCreating = func(ctx context.Context, early *cluster.Env) error {
		var loadErr, kwokErr error
		var wg sync.WaitGroup
		if !preloaded {
			wg.Go(func() { loadErr = cluster.LoadImage(ctx, early, set.Workload) })
		}
		if !spec.NoKwok {
			kwokErr = installKwokEarly(ctx, log, early, set, kwokOptions(spec), preloaded)
			kwokDone = kwokErr == nil
		}
		wg.Wait()
		return errors.Join(loadErr, kwokErr)
	}
	env, err := cluster.Up(ctx, log, co)
	if err != nil {
		return nil, err
	}
	// A reused cluster may lack the current workload (or kwok) image: it goes
	// on every node (labs run it on the workers, a node pod on any node),
	// beside kwok's install, which does not need it; kwok's controller runs
	// on the control plane only (manifests/kwok/controller).
	var workloadErr error
	var loading sync.WaitGroup
	if !preloaded {
		loading.Go(func() {
			done := log.Step("loading the workload image onto the nodes")
			workloadErr = cluster.LoadImage(ctx, env, set.Workload)
			done(workloadErr)
		})
		if !spec.NoKwok && !kwokDone {
			done := log.Step("loading the kwok image onto the control plane")
			err = cluster.LoadImageOn(ctx, set.Kwok, env.ControlPlane.(nodes.Node))
			done(err)
			if err != nil {
				loading.Wait()
				return nil, err
			}
		}
	}
	env.WorkloadImage = set.Workload
	env.Versions.Docker = spec.DockerVersion
	env.Versions.NodeImageFrom = set.NodeFrom
	env.Versions.NodeImageDigest = set.NodeDigest // of set.Node, the base of a preloaded image
	if !spec.NoKwok {
		env.Versions.KwokImageDigest = set.KwokDigest
	}
	switch {
	case spec.NoKwok:
	case kwokDone:
		err = describeKwok(ctx, env)
	default:
		err = installKwok(ctx, log, env, set, kwokOptions(spec))
	}
	loading.Wait()
	if err = errors.Join(err, workloadErr); err != nil {
		return nil, err
	}
	// Under the cluster's run lock (taken now if the cluster did not answer
	// before), what runs that no longer hold it left in the API goes now,
	// not at the next lab's start; an expired Lease goes with the lock.
	if err := locks.InCluster(ctx, log, env.RESTConfig); err != nil {
		log.Warnf("not removing what earlier runs left: %v (the next lab run does)", err)
	} else if _, err := lab.RemoveLeftovers(ctx, env, log, ""); err != nil {
		log.Warnf("removing what earlier runs left: %v (the next lab run tries again)", err)
	}
	return env, nil
}

// installKwokEarly installs kwok on a cluster kind is still creating: its
// image onto the control plane unless the node image has it, and once
// kubeadm made kube-proxy (whose DaemonSet installKwok keeps off the fake
// nodes), the rest.
func installKwokEarly(ctx context.Context, log *progress.Logger, early *cluster.Env, set images.Set, opts kwok.Options, preloaded bool) error {
	if !preloaded {
		if err := cluster.LoadImageOn(ctx, set.Kwok, early.ControlPlane.(nodes.Node)); err != nil {
			return err
		}
	}
	if err := waitKubeProxy(ctx, early); err != nil {
		return err
	}
	return installKwok(ctx, log, early, set, opts)
}

// kwokOptions: the spec's fake nodes; on a cluster with raised limits kwok
// plays more pod stages at once, since with the API server's limits raised
// kwok (the fake nodes' kubelet) is what sets the deletion's pace.
func kwokOptions(spec ClusterSpec) kwok.Options {
	o := kwok.Options{FakeNodes: spec.FakeNodes}
	if spec.Options.Limits == cluster.LimitsRaised {
		o.PodPlayParallelism = kwok.RaisedPodPlayParallelism
	}
	return o
}

// Connect attaches to the running stack without changing it (for tests and labs that must not create).
func Connect(ctx context.Context, log *progress.Logger) (*cluster.Env, error) {
	root, err := project.Root()
	if err != nil {
		return nil, err
	}
	env, err := cluster.Connect(ctx, log, ClusterOptions(root))
	if err != nil {
		return nil, err
	}
	env.WorkloadImage = images.WorkloadRef
	if v, err := dockerhost.ServerVersion(ctx); err == nil {
		env.Versions.Docker = v
	}
	labels, ok := dockerimage.Labels(ctx, env.Versions.NodeImage)
	if base := labels[dockerimage.BaseLabel]; base != "" { // preloaded: where its base came from
		labels, ok = dockerimage.Labels(ctx, base)
	}
	if ok && labels[dockerimage.InputsLabel] != "" {
		env.Versions.NodeImageFrom = images.FromBuilt
	} else {
		env.Versions.NodeImageFrom = images.FromOfficial
	}
	return env, describeKwok(ctx, env)
}

// restoreKubelets starts kubelets that an earlier run left stopped on the
// existing cluster's nodes and disarms its leftover switches
// (internal/kubelet.Restore), and ends a process a killed lab:mount left
// holding a volume (internal/mounthold.Restore). What it cannot reach (node
// containers a dockerd restart or a reboot stopped) is left to cluster.Up,
// which starts them again: a fresh boot has none of a run's leftovers.
func restoreKubelets(ctx context.Context, log *progress.Logger, name string) {
	ns, err := cluster.ExistingNodes(log, name)
	if err != nil || len(ns) == 0 {
		return
	}
	var kn []kubelet.Node
	for _, n := range ns {
		kn = append(kn, n)
	}
	done := log.Step(fmt.Sprintf("looking on %d nodes for what a killed run left (a stopped kubelet, a restore timer, a held mount)", len(kn)))
	repairs, released, kerr, merr := lab.RestoreNodes(ctx, kn)
	done(nil)
	for _, r := range repairs {
		log.Warnf("repairing a leftover: %s", r.Text)
	}
	if kerr != nil {
		log.Infof("could not check every kubelet before the health check (%v); the health check decides", kerr)
	}
	for _, r := range released {
		log.Warnf("repairing a leftover: %s", r)
	}
	if err := merr; err != nil {
		log.Infof("could not check every node for a held mount (%v)", err)
	}
}
