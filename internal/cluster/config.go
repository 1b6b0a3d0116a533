package cluster

import (
	"fmt"
	"os"

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
