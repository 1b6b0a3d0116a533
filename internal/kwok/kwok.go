// Package kwok installs kwok v0.8.0 into a termlab cluster: one kwok controller
// rendered from kwok's own kustomize manifests (in the kwok Go module), the
// stage sets of manifests/kwok, and N fake nodes that the controller plays.
//
// Which stages play a pod on a fake node is chosen by the pod's label
// StageSetLabel (termlab.dev/stage-set): SetFaithful (also for pods without
// the label), SetKwokV08Fast or SetKwokV07Fast. All sets live side by side
// under the one controller; see manifests/kwok/kustomization.yaml.
package kwok

import (
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/termlab/termlab/internal/progress"
)

const (
	// ModulePath and ModuleVersion name the kwok release whose manifests are rendered.
	ModulePath    = "sigs.k8s.io/kwok"
	ModuleVersion = "v0.8.0"
	// OfficialImage is kwok's released controller image for ModuleVersion.
	OfficialImage = "registry.k8s.io/kwok/kwok:" + ModuleVersion

	// Namespace and ControllerName locate the controller (as kwok's manifests name it).
	Namespace      = "kube-system"
	ControllerName = "kwok-controller"
	// ControllerLabel selects the controller's pods (kwok's manifests set app=kwok-controller).
	ControllerLabel = "app=" + ControllerName

	// FakeNodeAnnotation=FakeNodeAnnotationValue marks the nodes the controller
	// manages (kwok.yaml: manageNodesWithAnnotationSelector); the same key and
	// value, with effect NoSchedule, is the fake nodes' taint.
	FakeNodeAnnotation      = "kwok.x-k8s.io/node"
	FakeNodeAnnotationValue = "fake"
	// FakeNodeTypeLabel=FakeNodeTypeValue is the label pods select fake nodes by.
	FakeNodeTypeLabel = "type"
	FakeNodeTypeValue = "kwok"
	// FakeNodePrefix names the fake nodes: kwok-node-0 … kwok-node-<N-1>.
	FakeNodePrefix = "kwok-node-"

	// StageSetLabel is on every Stage (its set) and on every fake node (the set
	// that plays pods without the label). A pod's own label picks its set.
	StageSetLabel = "termlab.dev/stage-set"
	// NodeStageSet is the StageSetLabel value of the node stages.
	NodeStageSet = "nodes"

	// SetFaithful is the kubelet-faithful set, the default (manifests/kwok/faithful).
	SetFaithful = "faithful"
	// SetKwokV08Fast is kwok v0.8.0's fast pod stages as shipped.
	SetKwokV08Fast = "kwok-v0.8-fast"
	// SetKwokV07Fast is kwok ≤ v0.7's fast pod stages, whose pod-delete empties finalizers.
	SetKwokV07Fast = "kwok-v0.7-fast"
	// DefaultStageSet plays pods on fake nodes that carry no StageSetLabel.
	DefaultStageSet = SetFaithful

	// SigtermExitAfterAnnotation on a pod says how many seconds its workload takes
	// to exit after SIGTERM (default 1); the faithful set uses it to decide a clean
	// exit (0, Succeeded) from a SIGKILL at the end of the grace period (137, Failed).
	SigtermExitAfterAnnotation = "termlab.dev/sigterm-exit-after-seconds"

	// ModuleAnnotation on the controller Deployment records the rendered kwok module.
	ModuleAnnotation = "termlab.dev/kwok-module"
	// ConfigAnnotation on the controller's pod template is a hash of its
	// configuration: kwok reads it only when it starts, so a changed one
	// must roll the controller.
	ConfigAnnotation = "termlab.dev/kwok-config"
	// PodPlayParallelism is how many pod stages kwok plays at once, each an
	// API request (kwok's own default is 4). A real node's kubelet works its
	// pods in parallel with a client of its own; with 4 for all of a run's
	// fake nodes, kwok set lab:scale's pace: at 5,000 pods on 100 fake
	// nodes Running 24.8 and DELETED 13.9 pods/s (run 20261205-110622-be79);
	// with 16, 43.6 and 22.2 pods/s (run 20261205-133700-27c8), where the
	// scheduler's client limit and the API server's collection delete set
	// them.
	PodPlayParallelism = 16
	// RaisedPodPlayParallelism is kwok's on a cluster with raised limits:
	// there, with 16, kwok was the deletion's queue (run
	// 20261205-143302-e6e2: 16 API server workers marked 121.0 pods/s, kwok
	// DELETED 31.7/s).
	RaisedPodPlayParallelism = 64
	// NodeLeaseParallelism is how many fake nodes' leases kwok renews at
	// once (kwok's own default is 4). kwok renews each lease every 10 s (a
	// quarter of its 40-s duration, as a kubelet does): 500 fake nodes need
	// 50 renewals a second, each done within 80 ms by 4 workers. Under
	// lab:scale's load at 50,000 pods they took longer: leases were 25–33 s
	// old at the median and up to 53 s, past the node lifecycle
	// controller's 50-s grace, which marked 2,305 of the run's pods NotReady
	// in ten minutes (run 20261205-200226-7458): about 9 renewals a second,
	// half a second each. Each kubelet renews its own lease; 32 workers
	// allow 640 ms a renewal at 500 nodes.
	NodeLeaseParallelism = 32
	// FieldManager is termlab's server-side apply field manager.
	FieldManager = "termlab"
)

// StageSets are the pod stage sets in manifests/kwok, default first.
var StageSets = []string{SetFaithful, SetKwokV08Fast, SetKwokV07Fast}

// Options configures Render, RenderStages and Install.
type Options struct {
	// Image is the controller image: OfficialImage when it can be pulled, or a
	// locally built one (already loaded into the nodes). Required.
	Image string
	// FakeNodes is how many fake nodes Install ensures; 0 means 2.
	FakeNodes int
	// PodPlayParallelism is how many pod stages kwok plays at once; 0 means
	// PodPlayParallelism.
	PodPlayParallelism int
	// ModuleDir is the kwok module's source directory; empty: located with
	// `go list -m` / `go mod download` / the module cache.
	ModuleDir string
	// Timeout bounds each wait of Install (CRDs, controller, fake nodes); 0 means 3 minutes.
	Timeout time.Duration
	// Log receives progress; nil means progress.Default().
	Log *progress.Logger
}

// DefaultFakeNodes is the number of fake nodes when Options.FakeNodes is 0.
const DefaultFakeNodes = 2

func (o *Options) completeModule() error {
	if o.Log == nil {
		o.Log = progress.Default()
	}
	return nil
}

func (o *Options) complete() error {
	if err := o.completeModule(); err != nil {
		return err
	}
	if o.Image == "" {
		return errors.New("kwok: Options.Image is required (the official " + OfficialImage + " or a locally built image)")
	}
	if o.FakeNodes < 0 {
		return fmt.Errorf("kwok: Options.FakeNodes is %d, want >= 0", o.FakeNodes)
	}
	if o.FakeNodes == 0 {
		o.FakeNodes = DefaultFakeNodes
	}
	if o.PodPlayParallelism < 0 {
		return fmt.Errorf("kwok: Options.PodPlayParallelism is %d, want >= 0", o.PodPlayParallelism)
	}
	if o.PodPlayParallelism == 0 {
		o.PodPlayParallelism = PodPlayParallelism
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	return nil
}

// FakeNodeName is the name of the i-th fake node.
func FakeNodeName(i int) string { return fmt.Sprintf("%s%d", FakeNodePrefix, i) }

// PlaceOnFakeNode makes pod schedule onto a fake node (nodeSelector type=kwok
// and the fake-node toleration) and be played by the given stage set ("" keeps
// the pod's label as is, i.e. DefaultStageSet when it has none).
func PlaceOnFakeNode(pod *corev1.Pod, set string) error {
	if set != "" {
		if !slices.Contains(StageSets, set) {
			return fmt.Errorf("kwok: unknown stage set %q (have %v)", set, StageSets)
		}
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[StageSetLabel] = set
	}
	if pod.Spec.NodeSelector == nil {
		pod.Spec.NodeSelector = map[string]string{}
	}
	pod.Spec.NodeSelector[FakeNodeTypeLabel] = FakeNodeTypeValue
	tol := corev1.Toleration{Key: FakeNodeAnnotation, Operator: corev1.TolerationOpEqual, Value: FakeNodeAnnotationValue, Effect: corev1.TaintEffectNoSchedule}
	if !slices.Contains(pod.Spec.Tolerations, tol) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
	}
	return nil
}

// IsFake reports whether kwok's controller plays the node (it has no kubelet
// or container runtime to ask).
func IsFake(n *corev1.Node) bool { return n.Annotations[FakeNodeAnnotation] == FakeNodeAnnotationValue }
