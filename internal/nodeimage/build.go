package nodeimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/cachekey"
	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/progress"
)

// Registry is the repository prefix of every image termlab builds itself.
// kubeadm is pointed at it (imageRepository), containerd's sandbox_image too.
const Registry = "termlab.local"

// Versions of the control-plane images kubeadm v1.37 asks for: the default
// node image's (DefaultVersions).
const (
	KubeVersion    = "v1.37.2"
	EtcdTag        = "3.7.0-0"
	CoreDNSTag     = "v1.14.6"
	PauseTag       = "3.10.2"
	recipeRevision = "node-v1"
)

// Versions are the Kubernetes release a node image carries and the tags of the
// images its kubeadm asks for (`kubeadm config images list`, see
// VersionsFromKubeadm): the node image preloads exactly those.
type Versions struct {
	Kube       string `json:"kubernetes"`
	EtcdTag    string `json:"etcd_tag"`
	CoreDNSTag string `json:"coredns_tag"`
	PauseTag   string `json:"pause_tag"`
}

// DefaultVersions are termlab's own cluster's: the constants above.
var DefaultVersions = Versions{Kube: KubeVersion, EtcdTag: EtcdTag, CoreDNSTag: CoreDNSTag, PauseTag: PauseTag}

// NodeRefFor is the tag of the locally built node image of a Kubernetes release.
func NodeRefFor(kube string) string { return Ref("node", kube) }

// Ref returns the reference of a locally built image.
func Ref(name, tag string) string { return Registry + "/" + name + ":" + tag }

// Inputs are the files a node image is built from.
type Inputs struct {
	RootfsTar     string // from BuildRootfs
	KindModuleDir string // sigs.k8s.io/kind module dir: images/base/files
	KubeBinDir    string // kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy
	Etcd          string
	CoreDNS       string
	Crictl        string
	Pause         string
	Podnet        string
	CNIManifest   string // manifests/cni/podnet.yaml (image placeholder PODNET_IMAGE)
	// Versions of what the binaries are; the zero value means DefaultVersions.
	Versions Versions
}

// versions are the inputs' Versions, DefaultVersions when unset.
func (in Inputs) versions() Versions {
	if in.Versions == (Versions{}) {
		return DefaultVersions
	}
	return in.Versions
}

// NodeRef is the tag of the node image these inputs make.
func (in Inputs) NodeRef() string { return NodeRefFor(in.versions().Kube) }

var kubeBinaries = []string{"kubelet", "kubeadm", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

func (in Inputs) key() *cachekey.Key {
	v := in.versions()
	k := cachekey.New().Add("recipe", recipeRevision).Add("kube", v.Kube).
		AddFile("rootfs", in.RootfsTar).
		AddTree("kind-base-files", filepath.Join(in.KindModuleDir, "images", "base", "files")).
		AddFile("etcd", in.Etcd).AddFile("coredns", in.CoreDNS).AddFile("crictl", in.Crictl).
		AddFile("pause", in.Pause).AddFile("podnet", in.Podnet).AddFile("cni-manifest", in.CNIManifest)
	for _, b := range kubeBinaries {
		k.AddFile(b, filepath.Join(in.KubeBinDir, b))
	}
	// The default image's key predates Versions and must not change (or every
	// machine rebuilds it); another release's image keys its tags as well.
	if v != DefaultVersions {
		k.Add("etcd-tag", v.EtcdTag).Add("coredns-tag", v.CoreDNSTag).Add("pause-tag", v.PauseTag)
	}
	return k
}

// NodeRef is the tag of the locally built node image of DefaultVersions.
var NodeRef = NodeRefFor(KubeVersion)

// Build makes in.NodeRef() from inputs unless an image with the same inputs exists.
// It returns the cache key it was built (or found) with.
func Build(ctx context.Context, log *progress.Logger, cacheDir string, in Inputs) (string, error) {
	k := in.key()
	if err := k.Err(); err != nil {
		return "", err
	}
	key := k.String()
	nodeRef := in.NodeRef()
	if dockerimage.HasInputs(ctx, nodeRef, key) {
		log.Infof("node image %s: up to date (inputs %s)", nodeRef, key)
		AppendRecord(cacheDir, BuildRecord{Name: "node-image", Key: key, Cached: true, FinishedAt: time.Now()})
		return key, nil
	}
	begin := time.Now()
	done := log.Step("assembling node image " + nodeRef)
	err := build(ctx, log, in, key)
	done(err)
	if err != nil {
		return "", err
	}
	AppendRecord(cacheDir, BuildRecord{Name: "node-image", Key: key, DurationSeconds: time.Since(begin).Seconds(), FinishedAt: time.Now()})
	return key, nil
}

func build(ctx context.Context, log *progress.Logger, in Inputs, key string) error {
	rootfsRef := Ref("node-rootfs", strings.TrimSuffix(strings.TrimPrefix(filepath.Base(in.RootfsTar), "debian-"), ".tar"))
	if !dockerimage.Exists(ctx, rootfsRef) {
		f, err := os.Open(in.RootfsTar)
		if err != nil {
			return err
		}
		done := log.Step("importing root filesystem as " + rootfsRef)
		err = dockerimage.Import(ctx, f, rootfsRef, dockerimage.ImportOptions{})
		f.Close()
		done(err)
		if err != nil {
			return err
		}
	}
	componentRefs, err := buildComponentImages(ctx, log, in)
	if err != nil {
		return err
	}
	c, err := startBuildContainer(ctx, rootfsRef)
	if err != nil {
		return err
	}
	defer c.remove()

	steps := []struct {
		name string
		run  func() error
	}{
		{"laying out kind's base image files", func() error { return layoutKindBase(ctx, c, in.KindModuleDir, in.versions().PauseTag) }},
		{"adding Kubernetes binaries", func() error { return addBinaries(ctx, c, in) }},
		{"building kube-proxy image", func() error {
			ref, err := buildKubeProxyImage(ctx, c, filepath.Join(in.KubeBinDir, "kube-proxy"), in.versions().Kube)
			componentRefs = append(componentRefs, ref)
			return err
		}},
		{"preloading images into the node's containerd", func() error { return preload(ctx, c, componentRefs) }},
	}
	for _, s := range steps {
		done := log.Step(s.name)
		err := s.run()
		done(err)
		if err != nil {
			return err
		}
	}
	return commit(ctx, c, key, in.NodeRef())
}

// staticImage describes a component image that is one static binary.
type staticImage struct {
	name, tag, binary, target string
	entrypoint                []string
}

func buildComponentImages(ctx context.Context, log *progress.Logger, in Inputs) ([]string, error) {
	bin := func(n string) string { return filepath.Join(in.KubeBinDir, n) }
	v := in.versions()
	images := []staticImage{
		{"kube-apiserver", v.Kube, bin("kube-apiserver"), "/usr/local/bin/kube-apiserver", nil},
		{"kube-controller-manager", v.Kube, bin("kube-controller-manager"), "/usr/local/bin/kube-controller-manager", nil},
		{"kube-scheduler", v.Kube, bin("kube-scheduler"), "/usr/local/bin/kube-scheduler", nil},
		{"etcd", v.EtcdTag, in.Etcd, "/usr/local/bin/etcd", nil},
		{"coredns", v.CoreDNSTag, in.CoreDNS, "/coredns", []string{"/coredns"}},
		{"pause", v.PauseTag, in.Pause, "/pause", []string{"/pause"}},
		{"podnet", "v1", in.Podnet, "/podnet", []string{"/podnet"}},
	}
	done := log.Step(fmt.Sprintf("making %d component images", len(images)))
	var refs []string
	for _, im := range images {
		ref := Ref(im.name, im.tag)
		if err := ImportStatic(ctx, ref, im.binary, im.target, im.entrypoint); err != nil {
			done(err)
			return nil, err
		}
		refs = append(refs, ref)
	}
	done(nil)
	return refs, nil
}

// ImportStatic makes image ref holding one static binary at target, unless
// an image with the same binary already exists.
func ImportStatic(ctx context.Context, ref, binary, target string, entrypoint []string) error {
	key := cachekey.New().Add("recipe", "static-v1").AddFile("binary", binary).Add("target", target).
		Add("entrypoint", strings.Join(entrypoint, " "))
	if err := key.Err(); err != nil {
		return err
	}
	if dockerimage.HasInputs(ctx, ref, key.String()) {
		return nil
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(WriteTar(pw, []Entry{
			{Path: target, Mode: 0o755, Source: binary},
			// Some components write to /tmp; CA certs are not needed offline.
			{Path: "/tmp/.keep", Mode: 0o644},
		}))
	}()
	return dockerimage.Import(ctx, pr, ref, dockerimage.ImportOptions{
		Entrypoint: entrypoint,
		Env:        []string{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels:     map[string]string{dockerimage.InputsLabel: key.String()},
	})
}

// layoutKindBase does what kind's images/base Dockerfile does on top of Debian.
func layoutKindBase(ctx context.Context, c buildContainer, kindDir, pauseTag string) error {
	files := filepath.Join(kindDir, "images", "base", "files")
	entries, err := kindBaseEntries(files, pauseTag)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteTar(pw, entries)) }()
	if err := c.copyTar(ctx, pr); err != nil {
		return err
	}
	// The same unit pruning as kind's base image: a node container boots only
	// what Kubernetes needs. kind's `rm -f` globs tolerate missing folders; so do we.
	prune := []struct {
		dir   string
		match []string
	}{
		{"/lib/systemd/system/sysinit.target.wants", []string{"-name", "systemd-tmpfiles-setup.service"}},
		{"/lib/systemd/system/multi-user.target.wants", nil},
		{"/lib/systemd/system/local-fs.target.wants", nil},
		{"/lib/systemd/system/basic.target.wants", nil},
		{"/etc/systemd/system", []string{"-mindepth", "2", "-maxdepth", "2", "-path", "/etc/systemd/system/*.wants/*"}},
		{"/lib/systemd/system/sockets.target.wants", []string{"(", "-name", "*udev*", "-o", "-name", "*initctl*", ")"}},
	}
	for _, p := range prune {
		if c.Command("test", "-d", p.dir).Run() != nil {
			continue
		}
		args := append([]string{p.dir, "-mindepth", "1"}, p.match...)
		if err := c.run(ctx, "find", append(args, "-delete")...); err != nil {
			return err
		}
	}
	cmds := [][]string{
		{"ln", "-sf", "/usr/lib/systemd/systemd", "/sbin/init"},
		{"mkdir", "-p", "/etc/kubernetes/manifests", "/opt/cni/bin", "/kind/manifests"},
		// kind builds containerd, runc and the CNI plugins itself; ours come from Debian.
		{"ln", "-sf", "/usr/bin/containerd", "/usr/local/bin/containerd"},
		{"ln", "-sf", "/usr/bin/ctr", "/usr/local/bin/ctr"},
		{"ln", "-sf", "/usr/bin/containerd-shim-runc-v2", "/usr/local/bin/containerd-shim-runc-v2"},
		{"cp", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback", "/usr/lib/cni/ptp", "/usr/lib/cni/portmap", "/opt/cni/bin/"},
		{"systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"},
		{"systemctl", "mask", "systemd-binfmt.service"},
	}
	for _, cmd := range cmds {
		if err := c.run(ctx, cmd[0], cmd[1:]...); err != nil {
			return err
		}
	}
	journald, err := c.output(ctx, "cat", "/etc/systemd/journald.conf")
	if err != nil {
		return err
	}
	if err := c.writeFile(ctx, "/etc/systemd/journald.conf", append(journald, []byte("ReadKMsg=no\n")...)); err != nil {
		return err
	}
	if err := c.writeFile(ctx, "/etc/machine-id", nil); err != nil {
		return err
	}
	spec, err := c.output(ctx, "ctr", "oci", "spec")
	if err != nil {
		return err
	}
	base, err := CRIBaseSpec(spec)
	if err != nil {
		return err
	}
	return c.writeFile(ctx, "/etc/containerd/cri-base.json", base)
}

// kindBaseEntries maps kind's images/base/files onto image paths with the
// Dockerfile's modes, adjusting containerd's config for a registry-less node.
func kindBaseEntries(files, pauseTag string) ([]Entry, error) {
	var entries []Entry
	err := filepath.WalkDir(files, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		relPath, err := filepath.Rel(files, p)
		if err != nil {
			return err
		}
		rel := "/" + filepath.ToSlash(relPath)
		if strings.HasPrefix(rel, "/LICENSES/") {
			return nil
		}
		mode := int64(0o644)
		if strings.HasPrefix(rel, "/usr/local/bin/") || strings.HasPrefix(rel, "/kind/bin/") {
			mode = 0o755
		}
		e := Entry{Path: rel, Mode: mode, Source: p}
		if rel == "/etc/containerd/config.toml" {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Source, e.Content = "", ContainerdConfigFor(data, pauseTag)
		}
		entries = append(entries, e)
		return nil
	})
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, err
}

// ContainerdConfig points the sandbox image at our pause image and restricts
// oom_score_adj: hosts without CAP_SYS_RESOURCE cannot lower it, and every pod
// sandbox fails ("can't get final child's PID from pipe: EOF") otherwise.
func ContainerdConfig(kindConfig []byte) []byte { return ContainerdConfigFor(kindConfig, PauseTag) }

// ContainerdConfigFor is ContainerdConfig with the pause image of another release.
func ContainerdConfigFor(kindConfig []byte, pauseTag string) []byte {
	s := string(kindConfig)
	s = replaceLineValue(s, "sandbox_image", fmt.Sprintf("%q", Ref("pause", pauseTag)))
	s = replaceLineValue(s, "restrict_oom_score_adj", "true")
	return []byte(s)
}

func replaceLineValue(s, key, value string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, key+" ") || strings.HasPrefix(trimmed, key+"=") {
			indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			lines[i] = indent + key + " = " + value
		}
	}
	return strings.Join(lines, "\n")
}

// CRIBaseSpec is kind's cri-base.json: containerd's default OCI spec with the
// product-files mount hook added and rlimits removed.
func CRIBaseSpec(ctrSpec []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(ctrSpec))
	dec.UseNumber()
	var spec map[string]any
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("parsing `ctr oci spec` output: %w", err)
	}
	if p, ok := spec["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	create, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(create, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	spec["hooks"] = hooks
	return json.MarshalIndent(spec, "", "  ")
}

func addBinaries(ctx context.Context, c buildContainer, in Inputs) error {
	var entries []Entry
	for _, b := range []string{"kubelet", "kubeadm", "kubectl"} {
		entries = append(entries, Entry{Path: "/usr/bin/" + b, Mode: 0o755, Source: filepath.Join(in.KubeBinDir, b)})
	}
	entries = append(entries, Entry{Path: "/usr/local/bin/crictl", Mode: 0o755, Source: in.Crictl})
	cni, err := os.ReadFile(in.CNIManifest)
	if err != nil {
		return fmt.Errorf("reading CNI manifest: %w", err)
	}
	entries = append(entries,
		Entry{Path: "/kind/version", Mode: 0o644, Content: []byte(in.versions().Kube)},
		Entry{Path: "/kind/manifests/default-cni.yaml", Mode: 0o644, Content: CNIManifest(cni)},
		Entry{Path: "/kind/manifests/default-storage.yaml", Mode: 0o644, Content: []byte(defaultStorage)},
	)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteTar(pw, entries)) }()
	return c.copyTar(ctx, pr)
}

// CNIManifest substitutes the locally built podnet image into the manifest.
func CNIManifest(manifest []byte) []byte {
	return bytes.ReplaceAll(manifest, []byte("PODNET_IMAGE"), []byte(Ref("podnet", "v1")))
}

// defaultStorage keeps kind's default StorageClass but no provisioner: its
// image is not buildable offline and no lab uses volumes.
const defaultStorage = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  namespace: kube-system
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
`

// buildKubeProxyImage packs kube-proxy with iptables (nft and legacy),
// conntrack and the shared libraries they load, taken from the node rootfs.
func buildKubeProxyImage(ctx context.Context, c buildContainer, kubeProxy, kube string) (string, error) {
	ref := Ref("kube-proxy", kube)
	bins := []string{"/usr/sbin/xtables-nft-multi", "/usr/sbin/xtables-legacy-multi", "/usr/sbin/conntrack"}
	exts, err := exec.OutputLines(c.Command("find", "/usr/lib/x86_64-linux-gnu/xtables", "-name", "*.so"))
	if err != nil {
		return "", fmt.Errorf("listing xtables extensions: %w", err)
	}
	libs := map[string]bool{}
	for _, f := range append(append([]string{}, bins...), exts...) {
		out, err := exec.OutputLines(c.Command("ldd", f))
		if err != nil {
			return "", fmt.Errorf("ldd %s: %w", f, err)
		}
		for _, l := range LddPaths(out) {
			libs[l] = true
		}
	}
	files := append(append([]string{}, bins...), exts...)
	for l := range libs {
		files = append(files, l)
	}
	sort.Strings(files)
	// tar -h stores symlinked libraries as the files they point to.
	raw, err := c.output(ctx, "tar", append([]string{"-chf", "-"}, files...)...)
	if err != nil {
		return "", err
	}
	entries := []Entry{{Path: "/usr/local/bin/kube-proxy", Mode: 0o755, Source: kubeProxy}}
	for _, name := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		entries = append(entries,
			Entry{Path: "/usr/sbin/" + name, Link: "xtables-nft-multi"},
			Entry{Path: "/usr/sbin/" + strings.Replace(name, "tables", "tables-legacy", 1), Link: "xtables-legacy-multi"},
			Entry{Path: "/usr/sbin/" + strings.Replace(name, "tables", "tables-nft", 1), Link: "xtables-nft-multi"})
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(MergeTar(pw, bytes.NewReader(raw), entries)) }()
	err = dockerimage.Import(ctx, pr, ref, dockerimage.ImportOptions{
		Env: []string{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"},
	})
	return ref, err
}

// LddPaths extracts library paths from ldd output lines.
func LddPaths(lines []string) []string {
	var out []string
	for _, l := range lines {
		fields := strings.Fields(l)
		for i, f := range fields {
			if f == "=>" && i+1 < len(fields) && strings.HasPrefix(fields[i+1], "/") {
				out = append(out, fields[i+1])
			}
		}
		if len(fields) > 0 && strings.HasPrefix(fields[0], "/") {
			out = append(out, fields[0]) // the dynamic loader
		}
	}
	return out
}

// preload imports the images into the build container's containerd, pinned,
// as kind's node-image build does, so no node ever needs a registry for them.
func preload(ctx context.Context, c buildContainer, refs []string) error {
	if err := exec.CommandContext(ctx, "docker", "exec", "-d", c.id, "containerd").Run(); err != nil {
		return fmt.Errorf("starting containerd in build container: %w", err)
	}
	if err := c.waitFor(ctx, 60*time.Second, "containerd", "ctr", "version"); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(dockerimage.Save(ctx, pw, refs...)) }()
	cmd := c.CommandContext(ctx, "ctr", "--namespace=k8s.io", "images", "import",
		"--label=io.cri-containerd.pinned=pinned", "--all-platforms", "--no-unpack", "--digests", "-").SetStdin(pr)
	if out, err := exec.CombinedOutputLines(cmd); err != nil {
		return fmt.Errorf("importing images into node containerd: %v: %s", err, strings.Join(out, "\n"))
	}
	listed, err := exec.OutputLines(c.Command("ctr", "--namespace=k8s.io", "images", "list", "-q"))
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, l := range listed {
		have[l] = true
	}
	for _, r := range refs {
		if !have[r] {
			return fmt.Errorf("image %s missing from node containerd after import (have %v)", r, listed)
		}
	}
	_ = c.run(ctx, "pkill", "containerd")
	return c.waitFor(ctx, 30*time.Second, "containerd to stop", "sh", "-c", "! pgrep -x containerd")
}

func commit(ctx context.Context, c buildContainer, key, nodeRef string) error {
	tmp := Ref("node-build", key)
	if out, err := exec.CombinedOutputLines(exec.CommandContext(ctx, "docker", "commit",
		"--change", `ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		"--change", "ENV container=docker",
		"--change", "CMD []",
		c.id, tmp)); err != nil {
		return fmt.Errorf("committing node image: %v: %s", err, strings.Join(out, "\n"))
	}
	// docker commit cannot set STOPSIGNAL; a two-line local build can (no pull).
	dockerfile := fmt.Sprintf("FROM %s\nSTOPSIGNAL SIGRTMIN+3\nLABEL %s=%q\n", tmp, dockerimage.InputsLabel, key)
	cmd := exec.CommandContext(ctx, "docker", "build", "-q", "-t", nodeRef, "-").
		SetStdin(strings.NewReader(dockerfile)).SetEnv(append(os.Environ(), "DOCKER_BUILDKIT=0")...)
	if out, err := exec.CombinedOutputLines(cmd); err != nil {
		return fmt.Errorf("setting STOPSIGNAL on node image: %v: %s", err, strings.Join(out, "\n"))
	}
	_ = exec.CommandContext(ctx, "docker", "rmi", tmp).Run()
	return nil
}
