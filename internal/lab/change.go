package lab

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/invocation"
)

// Change is one kind of change a run makes to the cluster (a kubelet
// stopped, a mount held, a taint, an APIService, the run's namespace), with
// everything termlab knows about it in one file (change_*.go). A lab
// declares the changes it makes in Uses.Changes: canRun asks their guards,
// cleanup and an interrupt their undos; repair asks every kind (changeKinds),
// as it cannot know which lab left a leftover.
type Change interface {
	// Name says what the change does, as a refusal says it ("the lab
	// stops a kubelet").
	Name() string
	// Scope is whom else the change can harm, which says the flag that
	// allows it on a cluster termlab did not make.
	Scope() Scope
	// NodeSide says the change is made on the node itself (a unit stopped,
	// a process started), not through the API: it is undone first, at once
	// on an interrupt and before cleanup waits for the API server, and its
	// leftovers are looked for on the nodes.
	NodeSide() bool
	// Guard refuses the change on this cluster (nil: it may be made): where
	// it could harm another tenant without the flag that names it, or where
	// its dead-man's switch would be too slow.
	Guard(env *cluster.Env) error
	// Undo undoes what of this kind the run made and has not undone.
	Undo(ctx context.Context, r *Run) error
	// Switch is what undoes the change if termlab cannot (SIGKILL, its
	// machine gone), and how soon.
	Switch() DeadMansSwitch
	// Repair undoes what killed earlier runs left of this kind, saying each
	// repair (p.Say). It runs under the cluster's run lock.
	Repair(ctx context.Context, p *Repairs) error
}

// Scope is whom besides the run a change can harm.
type Scope int

const (
	// RunScope: nobody; the run's own objects.
	RunScope Scope = iota
	// NodeScope: whatever runs on the lab's worker. On a cluster reached
	// through a kubeconfig it is made only to the worker named by
	// -allownodefaults.
	NodeScope
	// ClusterScope: every tenant of the cluster. On a cluster reached
	// through a kubeconfig it is made only with -allowclusterfaults.
	ClusterScope
)

// DeadMansSwitch is what undoes a change if termlab cannot, and how soon.
type DeadMansSwitch struct {
	// What undoes the change, in words.
	What string
	// Bound is the longest the change outlives a run killed outright (0:
	// until the next termlab run or cluster:up repairs it).
	Bound time.Duration
}

// changeKinds is one change of each kind, in the order cleanup undoes them
// and repair looks for them: what is on the nodes, then what is in the API,
// the run's namespace last (a cluster switch goes after all of them).
var changeKinds = []Change{KubeletStop{}, HeldMount{}, OutOfServiceTaint{}, UnavailableAPIService{}, runNamespace{}}

// Kinds is one change of each kind repair knows.
func Kinds() []Change { return append([]Change(nil), changeKinds...) }

// sameKind reports whether a and b are changes of one kind.
func sameKind(a, b Change) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

// runChanges is what a run of the lab may change: the lab's declared
// changes and the run's own namespace, in changeKinds' order (a kind
// changeKinds lacks goes last).
func runChanges(u Uses) []Change {
	all := append(append([]Change(nil), u.Changes...), runNamespace{})
	var out []Change
	for _, kind := range changeKinds {
		for _, c := range all {
			if sameKind(c, kind) {
				out = append(out, c)
			}
		}
	}
	for _, c := range all {
		if !slices.ContainsFunc(changeKinds, func(k Change) bool { return sameKind(c, k) }) {
			out = append(out, c)
		}
	}
	return out
}

// Declared returns the lab's declared change of kind T.
func Declared[T Change](u Uses) (T, bool) {
	for _, c := range u.Changes {
		if t, ok := c.(T); ok {
			return t, true
		}
	}
	var none T
	return none, false
}

// declaredBy returns the run's change of kind T, or an error for a change
// the lab did not declare: canRun did not guard it, and cleanup would not
// undo it.
func declaredBy[T Change](r *Run) (T, error) {
	for _, c := range r.changes {
		if t, ok := c.(T); ok {
			return t, nil
		}
	}
	var none T
	return none, fmt.Errorf("lab:%s %s without declaring it: list %T in its Definition's Uses.Changes, so that canRun guards it and cleanup undoes it", r.Lab, none.Name(), none)
}

// FaultsANode reports whether the lab changes its worker (a kubelet
// stopped, a mount held, a taint): on a cluster reached through a
// kubeconfig it runs only on the worker named by -allownodefaults.
func (u Uses) FaultsANode() bool { return u.scoped(NodeScope) }

// FaultsTheCluster reports whether the lab makes a change every tenant of
// the cluster feels: through a kubeconfig it runs only with -allowclusterfaults.
func (u Uses) FaultsTheCluster() bool { return u.scoped(ClusterScope) }

func (u Uses) scoped(s Scope) bool {
	return slices.ContainsFunc(u.Changes, func(c Change) bool { return c.Scope() == s })
}

// remote reports a cluster termlab did not make (reached through a kubeconfig).
func remote(env *cluster.Env) bool { return nodeAccess(env) != evidence.NodeAccessDocker }

// needsFaultNode is a node change's guard: through a kubeconfig, only on
// the worker named by -allownodefaults.
func needsFaultNode(env *cluster.Env, c Change) error {
	if remote(env) && env.FaultNode == "" {
		return fmt.Errorf("the lab %s: on a cluster reached through a kubeconfig it runs only with %s (TERMLAB_ALLOW_NODE_FAULTS), naming the one worker it may do that to", c.Name(), invocation.Flag("-allownodefaults=<node>"))
	}
	return nil
}

// needsClusterFaults is a cluster-wide change's guard: through a
// kubeconfig, only with -allowclusterfaults.
func needsClusterFaults(env *cluster.Env, c Change) error {
	if remote(env) && !env.AllowClusterFaults {
		return fmt.Errorf("the lab %s, which every tenant of the cluster feels while it lasts: on a cluster reached through a kubeconfig it runs only with %s (TERMLAB_ALLOW_CLUSTER_FAULTS=1), given by someone who may disturb the whole cluster", c.Name(), invocation.Flag("-allowclusterfaults"))
	}
	return nil
}
