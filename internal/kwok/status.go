package kwok

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// State is what Status finds in the cluster.
type State struct {
	// Installed: the controller Deployment exists.
	Installed bool `json:"installed"`
	// Image is the controller image the Deployment runs.
	Image string `json:"image,omitempty"`
	// Module is the kwok module whose manifests were rendered (sigs.k8s.io/kwok@v0.8.0).
	Module string `json:"module,omitempty"`
	// Version is the kwok version the controller reports on its fake nodes
	// (nodeInfo.kubeletVersion "kwok-<version>"), empty before a node is initialized.
	Version string `json:"version,omitempty"`
	// Controllers are the kwok controller pods in the whole cluster (want exactly one).
	Controllers []string `json:"controllers"`
	// ControllersReady counts the Ready, non-terminating ones.
	ControllersReady int `json:"controllers_ready"`
	// FakeNodes are the nodes labelled type=kwok, by name.
	FakeNodes []FakeNodeState `json:"fake_nodes"`
	// StageSets maps each stage set present (Stage label termlab.dev/stage-set) to its stages.
	StageSets map[string][]string `json:"stage_sets"`
	// DefaultStageSet is the set recorded on the fake nodes: the one that plays
	// pods without a termlab.dev/stage-set label ("mixed" if the nodes disagree).
	DefaultStageSet string `json:"default_stage_set,omitempty"`
}

// FakeNodeState is one fake node.
type FakeNodeState struct {
	Name     string `json:"name"`
	Ready    bool   `json:"ready"`
	StageSet string `json:"stage_set"`
	Managed  bool   `json:"managed"` // carries kwok.x-k8s.io/node=fake, so the controller plays it
}

// ReadyFakeNodes counts the Ready fake nodes.
func (s *State) ReadyFakeNodes() int {
	n := 0
	for _, f := range s.FakeNodes {
		if f.Ready {
			n++
		}
	}
	return n
}

// PodStageSets lists the pod stage sets present (without the node stages), sorted.
func (s *State) PodStageSets() []string {
	var out []string
	for k := range s.StageSets {
		if k != NodeStageSet {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Healthy: one Ready controller and every fake node Ready.
func (s *State) Healthy() bool {
	return s.Installed && len(s.Controllers) == 1 && s.ControllersReady == 1 && len(s.FakeNodes) > 0 && s.ReadyFakeNodes() == len(s.FakeNodes)
}

func (s *State) String() string {
	if !s.Installed {
		return "kwok: not installed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kwok: %s, image %s, version %s\n", s.Module, s.Image, orDash(s.Version))
	fmt.Fprintf(&b, "  controllers: %d (%d ready) %v\n", len(s.Controllers), s.ControllersReady, s.Controllers)
	fmt.Fprintf(&b, "  fake nodes: %d/%d ready", s.ReadyFakeNodes(), len(s.FakeNodes))
	for _, n := range s.FakeNodes {
		fmt.Fprintf(&b, " %s(ready=%v)", n.Name, n.Ready)
	}
	fmt.Fprintf(&b, "\n  stage sets: %v, default (on the fake nodes): %s\n", s.PodStageSets(), orDash(s.DefaultStageSet))
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Status reads kwok's state from the cluster: controller image and version,
// fake nodes and their readiness, and the stage sets (from the Stage labels).
func Status(ctx context.Context, cfg *rest.Config) (*State, error) {
	c, err := newClients(cfg)
	if err != nil {
		return nil, err
	}
	st := &State{StageSets: map[string][]string{}}

	d, err := c.kube.AppsV1().Deployments(Namespace).Get(ctx, ControllerName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("kwok status: %w", err)
	default:
		st.Installed = true
		st.Image = deploymentImage(d)
		st.Module = d.Annotations[ModuleAnnotation]
	}

	pods, err := c.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: ControllerLabel})
	if err != nil {
		return nil, fmt.Errorf("kwok status: %w", err)
	}
	for _, p := range pods.Items {
		st.Controllers = append(st.Controllers, p.Namespace+"/"+p.Name)
		if podReady(&p) && p.DeletionTimestamp == nil {
			st.ControllersReady++
		}
	}

	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: FakeNodeTypeLabel + "=" + FakeNodeTypeValue})
	if err != nil {
		return nil, fmt.Errorf("kwok status: %w", err)
	}
	sets := map[string]bool{}
	for _, n := range nodes.Items {
		st.FakeNodes = append(st.FakeNodes, FakeNodeState{
			Name:     n.Name,
			Ready:    nodeReady(&n) == "True",
			StageSet: n.Labels[StageSetLabel],
			Managed:  IsFake(&n),
		})
		sets[n.Labels[StageSetLabel]] = true
		if v, ok := strings.CutPrefix(n.Status.NodeInfo.KubeletVersion, "kwok-"); ok && st.Version == "" {
			st.Version = v
		}
	}
	switch len(sets) {
	case 0:
	case 1:
		for k := range sets {
			st.DefaultStageSet = k
		}
	default:
		st.DefaultStageSet = "mixed"
	}

	stages, err := c.dyn.Resource(stageGVR).List(ctx, metav1.ListOptions{LabelSelector: StageSetLabel})
	switch {
	case apierrors.IsNotFound(err): // no Stage CRD
	case err != nil:
		return nil, fmt.Errorf("kwok status: stages: %w", err)
	default:
		for _, s := range stages.Items {
			set := s.GetLabels()[StageSetLabel]
			st.StageSets[set] = append(st.StageSets[set], s.GetName())
		}
		for _, v := range st.StageSets {
			slices.Sort(v)
		}
	}
	return st, nil
}
