// Package images decides where every image termlab needs comes from: the
// official image when it is present or can be pulled, otherwise one built here
// from the Go module proxy and Debian packages. The labs' workload image is
// always built from cmd/heartbeat.
package images

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/gobuild"
	"github.com/termlab/termlab/internal/nodeimage"
	"github.com/termlab/termlab/internal/ownbuild"
	"github.com/termlab/termlab/internal/progress"
)

// Source selects official images, local builds, or official-else-build.
type Source string

const (
	Auto     Source = "auto"
	Official Source = "official"
	Build    Source = "build"
)

// ParseSource reads TERMLAB_IMAGES-style values.
func ParseSource(s string) (Source, error) {
	switch Source(s) {
	case "", Auto:
		return Auto, nil
	case Official, Build, Bundle:
		return Source(s), nil
	}
	return "", fmt.Errorf("unknown image source %q: use auto, official, build or bundle", s)
}

// Official references.
const (
	OfficialKwok = "registry.k8s.io/kwok/kwok:" + gobuild.KwokVersion
)

// OfficialNode is kind v0.33.0's pinned default node image.
var OfficialNode = defaults.Image

// Where an image came from, as recorded in runs.
const (
	FromOfficial = "official"
	FromBuilt    = "built"
)

// Set is the resolved images for a cluster.
type Set struct {
	Node            string `json:"node"`
	NodeFrom        string `json:"node_from"`
	ImageRepository string `json:"image_repository,omitempty"` // kubeadm's, when the node image was built
	Kwok            string `json:"kwok"`
	KwokFrom        string `json:"kwok_from"`
	Workload        string `json:"workload"`
	// NodeDigest and KwokDigest are the registry digests of official images
	// (checked against their pins: pin.go); none for an image built here or
	// loaded with docker load.
	NodeDigest string `json:"node_digest,omitempty"`
	KwokDigest string `json:"kwok_digest,omitempty"`
}

// WorkloadRef is the labs' heartbeat image.
var WorkloadRef = nodeimage.Ref("heartbeat", "v1")

// BuiltKwokRef is the locally built kwok controller image.
var BuiltKwokRef = nodeimage.Ref("kwok", gobuild.KwokVersion)

// pullTimeout: offline, a pull fails in about 30 ms; online a node image takes a while.
const pullTimeout = 10 * time.Minute

// Ensure resolves (and if needed builds) every image. root is the repository root.
func Ensure(ctx context.Context, log *progress.Logger, root string, src Source) (Set, error) {
	if set, ok, err := fromBundle(ctx, log, root, src); ok { // a loaded workshop bundle: bundle.go
		return set, err
	}
	return ensure(ctx, log, root, src, OfficialNode, func() (string, error) {
		return buildNode(ctx, log, root)
	})
}

// EnsureVersion is Ensure for a node image of another Kubernetes release
// (v1.<minor>.<patch>): kindest/node:<release> when present or pullable, else
// one built here (BuildNodeAt). kwok and the workload image are the same for
// every release. The default release (gobuild.KubernetesVersion) is Ensure
// itself, workshop bundle included.
func EnsureVersion(ctx context.Context, log *progress.Logger, root string, src Source, kube string) (Set, error) {
	if kube == gobuild.KubernetesVersion {
		return Ensure(ctx, log, root, src)
	}
	if src == Bundle {
		return Set{}, fmt.Errorf("a workshop bundle holds the node image of %s only, not %s", gobuild.KubernetesVersion, kube)
	}
	return ensure(ctx, log, root, src, OfficialNodeFor(kube), func() (string, error) {
		return BuildNodeAt(ctx, log, root, kube)
	})
}

// OfficialNodeFor is kind's published node image of a Kubernetes release.
func OfficialNodeFor(kube string) string { return "kindest/node:" + kube }

func ensure(ctx context.Context, log *progress.Logger, root string, src Source, officialNode string, buildNode func() (string, error)) (Set, error) {
	// The three at once: each is mostly waiting on docker or go (a pull
	// attempt, a build cache check), 2.6 s in a row on every reuse here.
	var set Set
	var nodeErr, kwokErr, workloadErr error
	var wg sync.WaitGroup
	pins := defaultPins()
	wg.Go(func() {
		var node resolved
		node, nodeErr = resolve(ctx, log, pins, src, officialNode, buildNode)
		set.Node, set.NodeFrom, set.NodeDigest = node.ref, node.from, node.digest
		if nodeErr == nil && set.NodeFrom == FromBuilt {
			set.ImageRepository = nodeimage.Registry
		}
	})
	wg.Go(func() {
		var kwok resolved
		kwok, kwokErr = resolve(ctx, log, pins, src, OfficialKwok, func() (string, error) {
			return BuiltKwokRef, buildKwok(ctx, log)
		})
		set.Kwok, set.KwokFrom, set.KwokDigest = kwok.ref, kwok.from, kwok.digest
	})
	wg.Go(func() {
		done := log.Step("building workload image " + WorkloadRef + " from cmd/heartbeat")
		workloadErr = buildOwnImage(ctx, root, "heartbeat", WorkloadRef, "/heartbeat")
		done(workloadErr)
		set.Workload = WorkloadRef
	})
	wg.Wait()
	return set, errors.Join(nodeErr, kwokErr, workloadErr)
}

// resolved is one image of a Set: its reference, where it came from and,
// for an official one, its registry digest.
type resolved struct{ ref, from, digest string }

// resolve picks the official image when present or pullable, else builds.
// An official image is checked against its pin (pin.go) at every use: one
// whose tag now names another image is refused, never built around.
func resolve(ctx context.Context, log *progress.Logger, pins pinFile, src Source, official string, build func() (string, error)) (resolved, error) {
	buildHere := func() (resolved, error) {
		ref, err := build()
		if err != nil {
			return resolved{}, err
		}
		return resolved{ref: ref, from: FromBuilt}, nil
	}
	if src == Build {
		return buildHere()
	}
	repoDigests, present := dockerimage.RepoDigests(ctx, official)
	if !present {
		if err := dockerimage.Pull(ctx, official, pullTimeout); err != nil {
			if src == Official {
				return resolved{}, fmt.Errorf("official image requested but not available: %w", err)
			}
			log.Infof("%s is not available (%s): building locally", official, firstLine(err.Error()))
			return buildHere()
		}
		log.Infof("pulled %s", official)
		if repoDigests, present = dockerimage.RepoDigests(ctx, official); !present {
			return resolved{}, fmt.Errorf("pulled %s, but `docker image inspect %s` does not find it: is another program removing images? Run the command again", official, official)
		}
	}
	digest, err := checkPin(ctx, log, pins, official, repoDigests)
	if err != nil {
		return resolved{}, err
	}
	return resolved{official, FromOfficial, digest}, nil
}

// BuildNode builds the node image locally whatever is pullable (images:node).
func BuildNode(ctx context.Context, log *progress.Logger, root string) (string, error) {
	return buildNode(ctx, log, root)
}

// buildNode builds every component from source and assembles the node image.
func buildNode(ctx context.Context, log *progress.Logger, root string) (string, error) {
	cache, err := gobuild.DefaultCacheRoot()
	if err != nil {
		return "", err
	}
	// debootstrap waits on the Debian mirror, the builds below on the CPU:
	// on a fresh machine they overlap (nodeInputs then finds the root
	// filesystem cached).
	rootfsCtx, cancelRootfs := context.WithCancel(ctx)
	var rootfsErr error
	var rootfs sync.WaitGroup
	rootfs.Go(func() { _, rootfsErr = nodeimage.BuildRootfs(rootfsCtx, log, cache) })
	defer func() { cancelRootfs(); rootfs.Wait() }()
	kube, err := gobuild.Kubernetes(ctx)
	if err != nil {
		return "", err
	}
	bins := map[string]gobuild.Result{}
	for _, r := range []gobuild.Recipe{kube, gobuild.Etcd(), gobuild.CoreDNS(), gobuild.Crictl()} {
		dir, err := gobuild.BinDir(r)
		if err != nil {
			return "", err
		}
		res, err := gobuild.Build(ctx, r, dir, log)
		if err != nil {
			return "", err
		}
		bins[r.Name] = res
	}
	rootfs.Wait()
	if rootfsErr != nil {
		return "", rootfsErr
	}
	in, err := nodeInputs(ctx, log, root, bins)
	if err != nil {
		return "", err
	}
	if _, err := nodeimage.Build(ctx, log, cache, in); err != nil {
		return "", err
	}
	return nodeimage.NodeRef, nil
}

// nodeInputs prepares what a node image is built from besides the binaries
// of bins (kubernetes, etcd, coredns, crictl): the root filesystem, pause,
// podnet and kind's base files.
func nodeInputs(ctx context.Context, log *progress.Logger, root string, bins map[string]gobuild.Result) (nodeimage.Inputs, error) {
	cache, err := gobuild.DefaultCacheRoot()
	if err != nil {
		return nodeimage.Inputs{}, err
	}
	rootfs, err := nodeimage.BuildRootfs(ctx, log, cache)
	if err != nil {
		return nodeimage.Inputs{}, err
	}
	own := filepath.Join(cache, "bin", "termlab")
	for _, name := range []string{"pause", "podnet"} {
		if err := goBuildOwn(ctx, root, name, filepath.Join(own, name)); err != nil {
			return nodeimage.Inputs{}, err
		}
	}
	kindDir, err := moduleDir(ctx, root, "sigs.k8s.io/kind")
	if err != nil {
		return nodeimage.Inputs{}, err
	}
	return nodeimage.Inputs{
		RootfsTar:     rootfs,
		KindModuleDir: kindDir,
		KubeBinDir:    filepath.Dir(bins["kubernetes"].Path("kubelet")),
		Etcd:          bins["etcd"].Path("etcd"),
		CoreDNS:       bins["coredns"].Path("coredns"),
		Crictl:        bins["crictl"].Path("crictl"),
		Pause:         filepath.Join(own, "pause"),
		Podnet:        filepath.Join(own, "podnet"),
		CNIManifest:   filepath.Join(root, "manifests", "cni", "podnet.yaml"),
	}, nil
}

// BuildNodeAt builds the node image of another Kubernetes release from
// source: its binaries, then the etcd and CoreDNS versions its own kubeadm
// asks for (`kubeadm config images list`), each cached by its inputs like the
// default's; crictl, the root filesystem, pause and podnet are shared with it.
// The image preloads exactly the images that kubeadm names.
func BuildNodeAt(ctx context.Context, log *progress.Logger, root, kube string) (string, error) {
	if kube == gobuild.KubernetesVersion {
		return buildNode(ctx, log, root)
	}
	build := func(r gobuild.Recipe) (gobuild.Result, error) {
		dir, err := gobuild.BinDir(r)
		if err != nil {
			return gobuild.Result{}, err
		}
		return gobuild.Build(ctx, r, dir, log)
	}
	kr, err := gobuild.KubernetesAt(ctx, kube)
	if err != nil {
		return "", err
	}
	kb, err := build(kr)
	if err != nil {
		return "", err
	}
	refs, err := nodeimage.KubeadmImages(ctx, kb.Path("kubeadm"), kube, nodeimage.Registry)
	if err != nil {
		return "", err
	}
	v, err := nodeimage.VersionsFromKubeadm(kube, refs)
	if err != nil {
		return "", err
	}
	etcdVersion, err := nodeimage.EtcdModuleVersion(v.EtcdTag)
	if err != nil {
		return "", err
	}
	log.Infof("kubeadm %s asks for etcd %s, CoreDNS %s, pause %s: building those", kube, v.EtcdTag, v.CoreDNSTag, v.PauseTag)
	bins := map[string]gobuild.Result{"kubernetes": kb}
	for _, r := range []gobuild.Recipe{gobuild.EtcdAt(etcdVersion), gobuild.CoreDNSAt(v.CoreDNSTag), gobuild.Crictl()} {
		res, err := build(r)
		if err != nil {
			return "", err
		}
		bins[r.Name] = res
	}
	in, err := nodeInputs(ctx, log, root, bins)
	if err != nil {
		return "", err
	}
	in.Versions = v
	cache, err := gobuild.DefaultCacheRoot()
	if err != nil {
		return "", err
	}
	if _, err := nodeimage.Build(ctx, log, cache, in); err != nil {
		return "", err
	}
	return in.NodeRef(), nil
}

func buildKwok(ctx context.Context, log *progress.Logger) error {
	r := gobuild.Kwok()
	dir, err := gobuild.BinDir(r)
	if err != nil {
		return err
	}
	res, err := gobuild.Build(ctx, r, dir, log)
	if err != nil {
		return err
	}
	return nodeimage.ImportStatic(ctx, BuiltKwokRef, res.Path("kwok"), "/usr/local/bin/kwok", []string{"/usr/local/bin/kwok"})
}

// buildOwnImage builds one of our cmd/ programs into a one-binary image.
func buildOwnImage(ctx context.Context, root, name, ref, target string) error {
	cache, err := gobuild.DefaultCacheRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(cache, "bin", "termlab", name)
	if err := goBuildOwn(ctx, root, name, bin); err != nil {
		return err
	}
	return nodeimage.ImportStatic(ctx, ref, bin, target, []string{target})
}

// goBuildOwn builds ./cmd/<name> as a static, reproducible binary.
func goBuildOwn(ctx context.Context, root, name, out string) error {
	return ownbuild.Build(ctx, root, "./cmd/"+name, out, ownbuild.Target{})
}

func moduleDir(ctx context.Context, root, module string) (string, error) {
	// The version this binary was built with is go.mod's: in the module
	// cache, no go command is needed.
	if dir := gobuild.ModuleCacheDir(module, gobuild.BuiltWith(module)); dir != "" {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s (go list -m): %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded: run `go mod download %s`", module, module)
	}
	return dir, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
