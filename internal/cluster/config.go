package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// HostFacts are what the kind config must adapt to on this host.
type HostFacts struct {
	// CgroupV1: kubelet v1.35+ refuses cgroup v1 unless failCgroupV1 is false.
	CgroupV1 bool
	// ImageRepository is set when the control-plane images were built locally
	// (kubeadm then pulls nothing: they are preloaded in the node image).
	ImageRepository string
}

// DetectCgroupV1 reports whether the host runs cgroup v1 (no unified hierarchy at /sys/fs/cgroup).
func DetectCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// RenderConfig parses the project's kind config and adds only the patches the host needs.
func RenderConfig(base []byte, name string, host HostFacts) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{}
	if err := yaml.UnmarshalStrict(base, cfg); err != nil {
		return nil, fmt.Errorf("parsing kind config: %w", err)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("kind config must be kind: Cluster, apiVersion: kind.x-k8s.io/v1alpha4 (got %q %q)", cfg.Kind, cfg.APIVersion)
	}
	cfg.Name = name
	if host.CgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"kind: KubeletConfiguration\nfailCgroupV1: false\n")
	}
	if host.ImageRepository != "" {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"kind: ClusterConfiguration\nimageRepository: "+host.ImageRepository+"\n")
	}
	return cfg, nil
}

// render is the kind config that creates the cluster o names: the file's,
// with the host's patches and the limits', mounts relative to the file.
func (o Options) render(base []byte, host HostFacts) (*v1alpha4.Cluster, error) {
	cfg, err := RenderConfig(base, o.Name, host)
	if err != nil {
		return nil, err
	}
	cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, o.Limits.kubeadmPatches()...)
	ResolveMounts(cfg, filepath.Dir(o.ConfigPath))
	return cfg, nil
}

// CountRoles returns how many control-plane and worker nodes the config asks for.
func CountRoles(cfg *v1alpha4.Cluster) (controlPlanes, workers int) {
	for _, n := range cfg.Nodes {
		switch n.Role {
		case v1alpha4.ControlPlaneRole:
			controlPlanes++
		case v1alpha4.WorkerRole:
			workers++
		}
	}
	return
}

// ResolveMounts makes every relative extraMounts hostPath of the config
// absolute, relative to dir (the folder of the config file), as a reader of
// manifests/kind/cluster.yaml expects; kind itself would take it relative to
// the working directory.
func ResolveMounts(cfg *v1alpha4.Cluster, dir string) {
	for i := range cfg.Nodes {
		for j := range cfg.Nodes[i].ExtraMounts {
			m := &cfg.Nodes[i].ExtraMounts[j]
			if m.HostPath != "" && !filepath.IsAbs(m.HostPath) {
				m.HostPath = filepath.Join(dir, m.HostPath)
			}
		}
	}
}

// configHash is ConfigHash of a cluster made with limits: the raised ones'
// patches change the control plane, so they change the hash; the defaults
// leave it as the file's.
func configHash(configPath string, limits Limits) (string, error) {
	sum, err := ConfigHash(configPath)
	patches := limits.kubeadmPatches()
	if err != nil || len(patches) == 0 {
		return sum, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00limits %s\x00%s", sum, limits, strings.Join(patches, "\x00"))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ConfigHash identifies the cluster a config file makes: a hash of the file
// and of every file its extraMounts bring into a node (the audit policy).
// It does not depend on the host (HostFacts), so a lab that only connects
// computes the same hash as cluster:up. A mount that cannot be read is hashed
// as its error, so the difference shows.
func ConfigHash(configPath string) (string, error) {
	base, err := os.ReadFile(configPath)
	if err != nil {
		return "", fmt.Errorf("reading kind config: %w", err)
	}
	cfg, err := RenderConfig(base, DefaultName, HostFacts{})
	if err != nil {
		return "", err
	}
	ResolveMounts(cfg, filepath.Dir(configPath))
	h := sha256.New()
	fmt.Fprintf(h, "cluster.yaml\x00%d\x00%s", len(base), base)
	for _, n := range cfg.Nodes {
		for _, m := range n.ExtraMounts {
			var files []string
			_ = filepath.WalkDir(m.HostPath, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					fmt.Fprintf(h, "\x00mount %s: %v", m.ContainerPath, err)
					return nil
				}
				if !d.IsDir() {
					files = append(files, path)
				}
				return nil
			})
			sort.Strings(files)
			for _, f := range files {
				b, err := os.ReadFile(f)
				rel, _ := filepath.Rel(m.HostPath, f)
				fmt.Fprintf(h, "\x00%s/%s\x00%d\x00%s%v", m.ContainerPath, filepath.ToSlash(rel), len(b), b, err)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
