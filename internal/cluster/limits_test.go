package cluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseLimits(t *testing.T) {
	for in, want := range map[string]Limits{"": LimitsDefault, "default": LimitsDefault, "raised": LimitsRaised} {
		if got, err := ParseLimits(in); err != nil || got != want {
			t.Errorf("ParseLimits(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseLimits("unlimited"); err == nil {
		t.Error("ParseLimits(unlimited): want an error")
	}
	if LimitsDefault.ClusterName() != DefaultName || LimitsRaised.ClusterName() == DefaultName {
		t.Errorf("cluster names %q %q: raised limits must be another cluster", LimitsDefault.ClusterName(), LimitsRaised.ClusterName())
	}
}

// A raised cluster's hash differs from the file's, so the default cluster is
// never reused as a raised one (or back); the default's is the file's own.
func TestConfigHashOfLimits(t *testing.T) {
	path := filepath.Join("..", "..", "manifests", "kind", "cluster.yaml")
	file, err := ConfigHash(path)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := configHash(path, LimitsDefault)
	raised, _ := configHash(path, LimitsRaised)
	if def != file || raised == file || raised == "" {
		t.Errorf("hashes: file %s default %s raised %s", file, def, raised)
	}
	if len(LimitsDefault.kubeadmPatches()) != 0 || len(LimitsRaised.kubeadmPatches()) != 1 {
		t.Error("the default limits patch nothing; the raised ones one ClusterConfiguration")
	}
}

func TestLimitsFromCommands(t *testing.T) {
	// What kubeadm runs by default: no limit flag, so the defaults.
	l, err := LimitsFromCommands(map[string][]string{
		"kube-scheduler":          {"kube-scheduler", "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"},
		"kube-controller-manager": {"kube-controller-manager", "--use-service-account-credentials=true"},
		"kube-apiserver":          {"kube-apiserver", "--audit-log-maxsize=200"},
	})
	want := ControlPlaneLimits{Scheduler: DefaultSchedulerLimit, ControllerManager: DefaultControllerManagerLimit,
		MaxRequestsInflight: 400, MaxMutatingRequestsInflight: 200, PriorityAndFairness: true, DeleteCollectionWorkers: 1,
		Found: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}}
	if err != nil || !reflect.DeepEqual(l, want) {
		t.Errorf("defaults: %+v, %v", l, err)
	}
	// The raised cluster's flags.
	l, err = LimitsFromCommands(map[string][]string{
		"kube-scheduler":          {"kube-scheduler", "--kube-api-qps=5000", "--kube-api-burst=10000"},
		"kube-controller-manager": {"kube-controller-manager", "--kube-api-qps=5000", "--kube-api-burst=10000"},
		"kube-apiserver":          {"kube-apiserver", "--max-requests-inflight=0", "--max-mutating-requests-inflight=0", "--enable-priority-and-fairness=false", "--delete-collection-workers=16"},
	})
	raised := ClientLimit{QPS: RaisedQPS, Burst: RaisedBurst}
	if err != nil || l.Scheduler != raised || l.ControllerManager != raised || l.MaxRequestsInflight != 0 || l.MaxMutatingRequestsInflight != 0 || l.PriorityAndFairness || l.DeleteCollectionWorkers != RaisedDeleteCollectionWorkers {
		t.Errorf("raised: %+v, %v", l, err)
	}
	// A component not found keeps its default and is not listed as read.
	l, _ = LimitsFromCommands(map[string][]string{"kube-scheduler": {"--kube-api-qps=70"}})
	if l.Scheduler.QPS != 70 || l.ControllerManager != DefaultControllerManagerLimit || !reflect.DeepEqual(l.Found, []string{"kube-scheduler"}) {
		t.Errorf("partial: %+v", l)
	}
	if _, err := LimitsFromCommands(map[string][]string{"kube-scheduler": {"--kube-api-qps=fast"}}); err == nil {
		t.Error("an unreadable value: want an error")
	}
}

func TestRenderWithLimits(t *testing.T) {
	path, _ := filepath.Abs(filepath.Join("..", "..", "manifests", "kind", "cluster.yaml"))
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Limits{LimitsDefault, LimitsRaised} {
		cfg, err := Options{Name: l.ClusterName(), ConfigPath: path, Limits: l}.render(base, HostFacts{})
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(cfg.KubeadmConfigPatches, "\n")
		if raised := strings.Contains(all, "kube-api-qps: \"5000\"") && strings.Contains(all, "delete-collection-workers: \"16\""); raised != (l == LimitsRaised) {
			t.Errorf("%s: patches %q", l, all)
		}
		if m := cfg.Nodes[0].ExtraMounts; len(m) == 0 || !filepath.IsAbs(m[0].HostPath) {
			t.Errorf("%s: the audit mount is not resolved: %+v", l, m)
		}
	}
}
