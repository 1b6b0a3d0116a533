package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func projectKindConfig(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "kind", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRenderConfigAddsOnlyNeededPatches(t *testing.T) {
	cases := []struct {
		name  string
		host  HostFacts
		want  []string
		avoid []string
	}{
		{"cgroup v2, official images", HostFacts{}, nil, []string{"failCgroupV1", "imageRepository"}},
		{"cgroup v1", HostFacts{CgroupV1: true}, []string{"failCgroupV1: false"}, []string{"imageRepository"}},
		{"built images", HostFacts{ImageRepository: "termlab.local"}, []string{"imageRepository: termlab.local"}, []string{"failCgroupV1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := RenderConfig(projectKindConfig(t), "x", tc.host)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(cfg.KubeadmConfigPatches, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("missing %q in %q", w, all)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(all, a) {
					t.Errorf("unexpected %q in %q", a, all)
				}
			}
			if cp, w := CountRoles(cfg); cp != 1 || w != 2 || cfg.Name != "x" {
				t.Errorf("roles %d/%d name %q", cp, w, cfg.Name)
			}
		})
	}
}

func TestRenderConfigRejectsUnknownFields(t *testing.T) {
	if _, err := RenderConfig([]byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodez: []\n"), "x", HostFacts{}); err == nil {
		t.Fatal("want error for a misspelled field")
	}
	if _, err := RenderConfig([]byte("kind: Pod\napiVersion: v1\n"), "x", HostFacts{}); err == nil {
		t.Fatal("want error for a non-kind config")
	}
}
