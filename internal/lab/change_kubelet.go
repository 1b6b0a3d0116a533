package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
)

// DefaultUnreachableToleration is the tolerationSeconds the
// DefaultTolerationSeconds admission plugin gives every pod for the
// node.kubernetes.io/unreachable taint: a pod on a node whose kubelet stays
// away longer is evicted by the taint manager. A kubelet termlab stops on a
// cluster it did not make comes back sooner, even if termlab is killed.
const DefaultUnreachableToleration = 300 * time.Second

// KubeletStop is a kubelet stopped on the lab's worker (containerd keeps
// running): the node's own systemd timer, armed before the stop, starts it
// again DownAtMost after it if termlab cannot.
type KubeletStop struct {
	// DownAtMost is the switch's bound: the longest the lab stops a kubelet
	// for (StopKubelet's restoreAfter).
	DownAtMost time.Duration
}

func (KubeletStop) Name() string   { return "stops a kubelet" }
func (KubeletStop) Scope() Scope   { return NodeScope }
func (KubeletStop) NodeSide() bool { return true }

// Guard: only on the worker named for faults, and on a cluster termlab did
// not make only if the kubelet is back before any pod's default unreachable
// toleration runs out, even if termlab is killed.
func (k KubeletStop) Guard(env *cluster.Env) error {
	if err := needsFaultNode(env, k); err != nil {
		return err
	}
	if bound := k.Switch().Bound; remote(env) && bound >= DefaultUnreachableToleration {
		return fmt.Errorf("the lab stops a kubelet for up to %s if termlab is killed (its dead-man's switch), not under the %s every pod tolerates an unreachable node by default: on a cluster reached through a kubeconfig that could evict other tenants' pods, so it does not run there",
			bound, DefaultUnreachableToleration)
	}
	return nil
}

// Undo starts every kubelet the run stopped and has not started again.
func (KubeletStop) Undo(ctx context.Context, r *Run) error { return r.restoreKubelets(ctx) }

func (k KubeletStop) Switch() DeadMansSwitch {
	return DeadMansSwitch{What: "a systemd timer on the node (" + kubelet.UnitPrefix + "<run id>) starts the kubelet again", Bound: k.DownAtMost}
}

// Repair starts a kubelet an earlier run left stopped and disarms the
// timers it left armed (one that fired later would restart a kubelet in the
// middle of this run), and waits for a restarted node to be Ready.
func (KubeletStop) Repair(ctx context.Context, p *Repairs) error {
	restored, err := kubelet.Restore(ctx, kubeletNodes(p.Env))
	errs := []error{err}
	for _, rep := range restored {
		p.Say("%s", rep.Text)
		if rep.Started {
			errs = append(errs, WaitNodeReady(ctx, p.Env, rep.Node, 90*time.Second))
		}
	}
	return errors.Join(errs...)
}

// StopKubelet stops only the kubelet on a real node (containerd keeps
// running). It first arms the node's dead-man's switch (internal/kubelet):
// the node starts its kubelet by itself restoreAfter from now if termlab
// cannot (SIGKILL, a lost terminal). From this call on, the run restarts it
// on every exit path, first thing on an interrupt.
func (r *Run) StopKubelet(ctx context.Context, node cluster.Node, restoreAfter time.Duration) error {
	declared, err := declaredBy[KubeletStop](r)
	if err != nil {
		return err
	}
	if nodeAccess(r.Env) != evidence.NodeAccessDocker && restoreAfter >= DefaultUnreachableToleration {
		return fmt.Errorf("stopping the kubelet on %s: its dead-man's switch would start it only after %s, not under the %s every pod tolerates an unreachable node by default; on a cluster reached through a kubeconfig termlab does not risk other tenants' pods (declare lab.KubeletStop{DownAtMost: …} so the lab is refused before it starts)", node, restoreAfter, DefaultUnreachableToleration)
	}
	// canRun judged the declared bound: a longer one was never guarded.
	if restoreAfter > declared.DownAtMost {
		return fmt.Errorf("stopping the kubelet on %s: its dead-man's switch would start it after %s, later than the %s the lab declares (KubeletStop.DownAtMost)", node, restoreAfter, declared.DownAtMost)
	}
	return r.perform(ctx, action{kind: evidence.ActionStopKubelet, target: node.String(), doing: "stopping the kubelet on " + node.String(),
		equivalent: dockerExec(node, [][]string{kubelet.StopCommand}),
		request:    nodeRequest{node.String(), [][]string{kubelet.StopCommand}},
		send:       func(ctx context.Context) error { return kubelet.Stop(ctx, node) },
		said:       fmt.Sprintf("kubelet on %s stopped (containerd keeps running); the node restarts it by itself in %s if termlab cannot", node, restoreAfter),
		unit:       &kubeletStopped, node: node,
		before: func(ctx context.Context) error {
			r.remember(&r.stoppedKubelet, node) // before the stop: a half-done stop is restarted too
			// The kubelet that comes back kills and removes the containers it no
			// longer wants within a second or two: on a loaded machine crictl's
			// next look finds nothing, and the exit code is lost. containerd's exit
			// events keep it. Until the switch restores the kubelet, and a minute
			// for its kills.
			if err := r.Unobserved(ctx, r.Rec.FollowTaskExits(node, restoreAfter+time.Minute)); err != nil {
				return fmt.Errorf("following containerd's exits on %s: %w", node, err)
			}
			// termlab arms the switch itself, whoever stops the kubelet.
			if err := kubelet.Arm(ctx, node, r.ID, restoreAfter); err != nil {
				return fmt.Errorf("arming the dead-man's switch on %s: %w", node, err)
			}
			r.Rec.Notef("armed the dead-man's switch on %s: %s", node, dockerExec(node, [][]string{kubelet.ArmCommand(r.ID, restoreAfter)}))
			return nil
		},
	})
}

// The kubelet's changes, as a person or a script makes them.
var (
	kubeletStopped = unitChange{kind: evidence.ActionStopKubelet, unit: "kubelet", active: false, what: "the kubelet"}
	kubeletStarted = unitChange{kind: evidence.ActionStartKubelet, unit: "kubelet", active: true, what: "the kubelet"}
)

// StartKubelet starts the kubelet on the node again and disarms its switch.
// Skipped (-by), the kubelet is still stopped, and cleanup starts it.
func (r *Run) StartKubelet(ctx context.Context, node cluster.Node) error {
	return r.perform(ctx, action{kind: evidence.ActionStartKubelet, target: node.String(), doing: "starting the kubelet on " + node.String(),
		equivalent: dockerExec(node, [][]string{kubelet.StartCommand}),
		request:    nodeRequest{node.String(), [][]string{kubelet.StartCommand}},
		send:       func(ctx context.Context) error { return kubelet.Start(ctx, node) },
		said:       fmt.Sprintf("kubelet on %s started", node),
		unit:       &kubeletStarted, node: node,
		after: func(ctx context.Context) error {
			if err := kubelet.Disarm(ctx, node, r.ID); err != nil {
				return fmt.Errorf("disarming the dead-man's switch on %s: %w", node, err)
			}
			r.forget(r.stoppedKubelet, node.String())
			return nil
		},
	})
}

// restoreKubelets starts every kubelet the run stopped and has not started
// again. It is the first thing cleanup does, and it also runs the moment
// the run is interrupted (see Execute): mage exits five seconds after
// Ctrl-C, whatever cleanup is still doing.
func (r *Run) restoreKubelets(ctx context.Context) error {
	r.restoring.Lock() // one restore at a time: the interrupt's and cleanup's
	defer r.restoring.Unlock()
	r.setActor(byTermlab) // termlab restores what the run changed itself
	stopped := r.nodesOf(r.stoppedKubelet)
	var errs []error
	for _, n := range stopped {
		r.Log.Infof("cleanup: starting the kubelet on %s again", n)
		if err := r.StartKubelet(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	r.mu.Lock()
	r.restartedInCleanup = append(r.restartedInCleanup, stopped...)
	r.mu.Unlock()
	return errors.Join(errs...)
}

// waitRestartedNodesReady leaves the nodes whose kubelet cleanup restarted
// as the run found them: Ready (the next lab may schedule there). It runs
// after the reports are written, so an impatient interrupt loses nothing.
func (r *Run) waitRestartedNodesReady(ctx context.Context) error {
	r.mu.Lock()
	nodes := append([]cluster.Node(nil), r.restartedInCleanup...)
	r.mu.Unlock()
	var errs []error
	for _, n := range nodes {
		r.Log.Infof("cleanup: waiting for %s to be Ready again", n)
		if err := WaitNodeReady(ctx, r.Env, n.String(), 90*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kubeletNodes is every real node of the cluster, as internal/kubelet takes them.
func kubeletNodes(env *cluster.Env) []kubelet.Node {
	// Only termlab's own cluster and a node named for faults have kubelets a
	// run may have stopped (canRun): elsewhere the check would start a node
	// pod on every node for nothing.
	if nodeAccess(env) != evidence.NodeAccessDocker {
		if w := env.Worker(env.FaultNode); env.FaultNode != "" && w != nil {
			return []kubelet.Node{w}
		}
		return nil
	}
	var out []kubelet.Node
	if env.ControlPlane != nil {
		out = append(out, env.ControlPlane)
	}
	for _, w := range env.Workers {
		out = append(out, w)
	}
	return out
}
