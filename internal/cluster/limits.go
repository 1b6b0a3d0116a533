package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Limits are the request limits a cluster's control plane is made with:
// Kubernetes' defaults, or raised as kwok's own benchmarks raise them
// (kwokctl --disable-qps-limits) so that a run measures Kubernetes and this
// machine, not the defaults.
type Limits string

const (
	LimitsDefault Limits = "default"
	LimitsRaised  Limits = "raised"
)

// ParseLimits reads -limits ("" is the default).
func ParseLimits(s string) (Limits, error) {
	switch Limits(s) {
	case "", LimitsDefault:
		return LimitsDefault, nil
	case LimitsRaised:
		return LimitsRaised, nil
	}
	return "", fmt.Errorf("-limits=%q: want default or raised", s)
}

// The raised values, kwokctl's for --disable-qps-limits (sigs.k8s.io/kwok
// pkg/kwokctl/runtime: kube-api-qps 5000 and burst 10000 for the
// controller-manager and the scheduler; no inflight limit and no priority and
// fairness in the API server).
//
// And one of termlab's own: the API server deletes a collection (the
// namespace controller's delete of a namespace's pods) with
// --delete-collection-workers workers, 1 by default
// (k8s.io/apiserver/pkg/server/options/etcd.go); under the defaults its
// marking set lab:scale's deletion pace (run 20261205-133700-27c8: marked
// and DELETED both 22.2 pods/s). Raised, it works with as many as kwok plays
// pod stages at once on a default cluster (internal/kwok.PodPlayParallelism;
// a raised cluster's kwok plays more, kwok.RaisedPodPlayParallelism).
const (
	RaisedQPS                     = 5000
	RaisedBurst                   = 10000
	RaisedDeleteCollectionWorkers = 16
)

// raisedPatch is the kubeadm patch of LimitsRaised. kind merges extraArgs
// with the config's own (the audit log's) rather than replacing them.
var raisedPatch = fmt.Sprintf(`kind: ClusterConfiguration
apiServer:
  extraArgs:
    max-requests-inflight: "0"
    max-mutating-requests-inflight: "0"
    enable-priority-and-fairness: "false"
    delete-collection-workers: "%d"
controllerManager:
  extraArgs:
    kube-api-qps: "%d"
    kube-api-burst: "%d"
scheduler:
  extraArgs:
    kube-api-qps: "%d"
    kube-api-burst: "%d"
`, RaisedDeleteCollectionWorkers, RaisedQPS, RaisedBurst, RaisedQPS, RaisedBurst)

// kubeadmPatches are the limits' patches to the kind config (none for the
// defaults: a default cluster is the config file as it is).
func (l Limits) kubeadmPatches() []string {
	if l == LimitsRaised {
		return []string{raisedPatch}
	}
	return nil
}

// ClusterName is the kind cluster that runs with these limits: another
// cluster than termlab's own for raised ones, so the labs and the tests
// never run on a control plane unlike the one the README describes.
func (l Limits) ClusterName() string {
	if l == LimitsRaised {
		return DefaultName + "-raised"
	}
	return DefaultName
}

// ClientLimit is a client's token bucket (client-go's QPS and burst).
type ClientLimit struct {
	QPS   float64 `json:"qps"`
	Burst int     `json:"burst"`
}

// Client limits of the control plane's own components when no flag sets them
// (k8s.io/kubernetes v1.37: kube-scheduler's clientConnection defaults; the
// controller-manager's --kube-api-qps and --kube-api-burst).
var (
	DefaultSchedulerLimit         = ClientLimit{QPS: 50, Burst: 100}
	DefaultControllerManagerLimit = ClientLimit{QPS: 20, Burst: 30}
)

// ControlPlaneLimits are the limits a control plane runs with, read from its
// components' command lines (their mirror pods in kube-system).
type ControlPlaneLimits struct {
	Scheduler         ClientLimit `json:"scheduler"`
	ControllerManager ClientLimit `json:"controller_manager"`
	// MaxRequestsInflight and MaxMutatingRequestsInflight are the API
	// server's; 0 is no limit.
	MaxRequestsInflight         int  `json:"max_requests_inflight"`
	MaxMutatingRequestsInflight int  `json:"max_mutating_requests_inflight"`
	PriorityAndFairness         bool `json:"priority_and_fairness"`
	// DeleteCollectionWorkers is how many deletes of one collection the API
	// server runs at once.
	DeleteCollectionWorkers int `json:"delete_collection_workers,omitempty"`
	// KwokPodPlayParallelism is not the control plane's but the fake
	// nodes': how many pod stages (each an API request) kwok plays at once,
	// from its ConfigMap (0: not read).
	KwokPodPlayParallelism int `json:"kwok_pod_play_parallelism,omitempty"`
	// KwokNodeLeaseParallelism is how many fake nodes' leases kwok renews at
	// once (0: not read): too few at hundreds of nodes and the node
	// lifecycle controller marks their pods NotReady.
	KwokNodeLeaseParallelism int `json:"kwok_node_lease_parallelism,omitempty"`
	// Found names the components whose command line was read; a limit of a
	// component not found is its default.
	Found []string `json:"found"`
}

// LimitsFromCommands reads the limits from each component's command line
// (by component name: kube-apiserver, kube-controller-manager,
// kube-scheduler); what a command does not set keeps Kubernetes' default.
func LimitsFromCommands(commands map[string][]string) (ControlPlaneLimits, error) {
	l := ControlPlaneLimits{
		Scheduler:                   DefaultSchedulerLimit,
		ControllerManager:           DefaultControllerManagerLimit,
		MaxRequestsInflight:         400,
		MaxMutatingRequestsInflight: 200,
		PriorityAndFairness:         true,
		DeleteCollectionWorkers:     1,
	}
	for _, component := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		cmd, ok := commands[component]
		if !ok {
			continue
		}
		l.Found = append(l.Found, component)
		for _, arg := range cmd {
			name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			if !ok || !strings.HasPrefix(arg, "--") {
				continue
			}
			var err error
			switch component + " " + name {
			case "kube-scheduler kube-api-qps":
				l.Scheduler.QPS, err = strconv.ParseFloat(value, 64)
			case "kube-scheduler kube-api-burst":
				l.Scheduler.Burst, err = strconv.Atoi(value)
			case "kube-controller-manager kube-api-qps":
				l.ControllerManager.QPS, err = strconv.ParseFloat(value, 64)
			case "kube-controller-manager kube-api-burst":
				l.ControllerManager.Burst, err = strconv.Atoi(value)
			case "kube-apiserver max-requests-inflight":
				l.MaxRequestsInflight, err = strconv.Atoi(value)
			case "kube-apiserver max-mutating-requests-inflight":
				l.MaxMutatingRequestsInflight, err = strconv.Atoi(value)
			case "kube-apiserver enable-priority-and-fairness":
				l.PriorityAndFairness, err = strconv.ParseBool(value)
			case "kube-apiserver delete-collection-workers":
				l.DeleteCollectionWorkers, err = strconv.Atoi(value)
			}
			if err != nil {
				return l, fmt.Errorf("%s: reading %s: %w", component, arg, err)
			}
		}
	}
	return l, nil
}

// ReadLimits reads the limits of the control plane client talks to from its
// components' mirror pods (kubeadm's static pods: kube-system, label
// tier=control-plane, one container whose command holds the flags).
func ReadLimits(ctx context.Context, client kubernetes.Interface) (ControlPlaneLimits, error) {
	pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
	if err != nil {
		return ControlPlaneLimits{}, fmt.Errorf("listing the control plane's pods in kube-system to read its limits: %w", err)
	}
	commands := map[string][]string{}
	for _, p := range pods.Items {
		component := p.Labels["component"]
		if _, seen := commands[component]; seen || component == "" || len(p.Spec.Containers) == 0 {
			continue // a second control plane's copy says the same
		}
		commands[component] = p.Spec.Containers[0].Command
	}
	return LimitsFromCommands(commands)
}
