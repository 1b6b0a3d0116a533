package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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

// The project's config mounts the audit policy from a path relative to
// itself, and its hash changes with the policy, not with the host.
func TestConfigHashFollowsMountedFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "audit"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, projectKindConfig(t), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "audit", "policy.yaml")
	if err := os.WriteFile(policy, []byte("rules: [{level: Metadata}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h1, err := ConfigHash(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := ConfigHash(cfgPath); h2 != h1 {
		t.Fatalf("hash not stable: %s vs %s", h1, h2)
	}
	if err := os.WriteFile(policy, []byte("rules: [{level: RequestResponse}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h3, _ := ConfigHash(cfgPath); h3 == h1 {
		t.Fatal("a changed audit policy must change the hash")
	}

	cfg, err := RenderConfig(projectKindConfig(t), "x", HostFacts{})
	if err != nil {
		t.Fatal(err)
	}
	ResolveMounts(cfg, dir)
	m := cfg.Nodes[0].ExtraMounts
	if len(m) != 1 || m[0].HostPath != filepath.Join(dir, "audit") || m[0].ContainerPath != "/etc/termlab/audit" {
		t.Fatalf("control-plane mounts %+v", m)
	}
	if _, err := os.Stat(filepath.Join("..", "..", "manifests", "kind", "audit", "policy.yaml")); err != nil {
		t.Fatalf("the mounted policy must exist: %v", err)
	}
}

// The audit policy records nothing that could hold a credential: its first
// rule drops secrets, configmaps, service account tokens and token reviews,
// and reads are never recorded.
func TestAuditPolicyKeepsNoSecrets(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "manifests", "kind", "audit", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Kind  string `json:"kind"`
		Rules []struct {
			Level     string   `json:"level"`
			Verbs     []string `json:"verbs"`
			Resources []struct {
				Group     string   `json:"group"`
				Resources []string `json:"resources"`
			} `json:"resources"`
		} `json:"rules"`
	}
	if err := yaml.Unmarshal(raw, &policy); err != nil || policy.Kind != "Policy" || len(policy.Rules) < 2 {
		t.Fatalf("parsing the policy: %v (%+v)", err, policy)
	}
	first := policy.Rules[0]
	dropped := map[string]bool{}
	for _, r := range first.Resources {
		for _, res := range r.Resources {
			dropped[r.Group+"/"+res] = true
		}
		if len(r.Resources) == 0 {
			dropped[r.Group+"/*"] = true
		}
	}
	if first.Level != "None" || len(first.Verbs) != 0 {
		t.Fatalf("the first rule must drop, for every verb: %+v", first)
	}
	for _, want := range []string{"/secrets", "/configmaps", "/serviceaccounts/token", "authentication.k8s.io/tokenreviews"} {
		if !dropped[want] {
			t.Errorf("the first rule does not drop %s: %v", want, dropped)
		}
	}
	reads := policy.Rules[1]
	if reads.Level != "None" || strings.Join(reads.Verbs, ",") != "get,list,watch" {
		t.Errorf("the second rule must drop every read: %+v", reads)
	}
	for _, r := range policy.Rules {
		if r.Level == "RequestResponse" {
			for _, res := range r.Resources {
				for _, name := range res.Resources {
					if strings.Contains(name, "secret") || strings.Contains(name, "token") || strings.Contains(name, "configmap") {
						t.Errorf("RequestResponse for %s", name)
					}
				}
			}
		}
	}
}
