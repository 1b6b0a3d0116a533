package stack

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
)

// checkFaultNode makes sure a lab may fault the named node of a cluster
// termlab did not make, and can undo it. May it be done here: the node is
// a Ready worker, cordoned, and holds no pod but DaemonSet pods, the node's
// own static pods and termlab's (a stopped kubelet gets a node's pods
// evicted once the unreachable toleration runs out, and lab:stuck's
// out-of-service taint deletes every pod there that does not tolerate it
// and force-detaches its volumes). Can it be undone: its kubelet is the
// systemd unit "kubelet" answering through the node pod's agent (a managed
// cluster's nodes fail here, before anything is stopped).
func checkFaultNode(ctx context.Context, log *progress.Logger, env *cluster.Env, r Remote, nodes []corev1.Node) error {
	name := r.FaultNode
	var node cluster.Node
	for _, w := range env.Workers {
		if w.String() == name {
			node = w
		}
	}
	if node == nil {
		return fmt.Errorf("-allownodefaults=%s: not one of the cluster's Ready workers %v", name, workerNames(env.Workers))
	}
	var cordoned bool
	for i := range nodes {
		if nodes[i].Name == name {
			cordoned = nodes[i].Spec.Unschedulable
		}
	}
	done := log.Step("checking that " + name + " is cordoned and holds no other tenant's pod")
	lctx, cancel := context.WithTimeout(ctx, startCallTimeout)
	pods, err := env.Client.CoreV1().Pods("").List(lctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
	cancel()
	if err != nil {
		done(err)
		return fmt.Errorf("-allownodefaults=%s: listing the pods on the node, to be sure no other tenant's is there: %w", name, err)
	}
	if refusal := faultNodeRefusal(name, cordoned, PodsInTheWay(pods.Items), r); refusal != "" {
		done(fmt.Errorf("not termlab's alone"))
		return fmt.Errorf("%s", refusal)
	}
	done(nil)
	done = log.Step("checking that termlab can stop and restore the kubelet on " + name)
	state, err := kubelet.State(ctx, node)
	if err == nil && state != "active" {
		err = fmt.Errorf("systemd says the kubelet unit is %q, not active", state)
	}
	done(err)
	if err != nil {
		return fmt.Errorf("-allownodefaults=%s: termlab cannot control this node's kubelet, so it will not stop it (a managed node, or a kubelet that is not the systemd unit \"kubelet\"?): %w", name, err)
	}
	env.FaultNode = name
	log.Infof("%s is cordoned and holds only DaemonSet pods and termlab's; when you are done with it: %s", name, kubectlCommand(r, "uncordon", name))
	return nil
}

// PodsInTheWay are the pods on a node that a node fault could harm: every
// one but DaemonSet pods (their controller keeps them on every node, and
// they are what a drain leaves too), the node's own static pods (mirror
// pods) and termlab's own (labelled with a run id). Finished pods count:
// the out-of-service taint deletes them as well.
func PodsInTheWay(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if termlabs(p) {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if ownedByDaemonSet(p) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// termlabs reports a pod termlab started: a run's (its id label) or a
// dead-man's switch's (a lab's or the node pods'), which ends with its run.
func termlabs(p corev1.Pod) bool {
	for _, label := range []string{lab.RunIDLabel, lab.SwitchOfRunLabel, nodepod.SwitchLabel} {
		if _, ok := p.Labels[label]; ok {
			return true
		}
	}
	return false
}

func ownedByDaemonSet(p corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// maxPodsListed keeps a refusal readable on a busy node.
const maxPodsListed = 20

// faultNodeRefusal is what a person reads when the node named for faults
// is not yet termlab's alone: what is in the way and the commands that
// make it so, or "" when nothing is.
func faultNodeRefusal(name string, cordoned bool, inTheWay []corev1.Pod, r Remote) string {
	if cordoned && len(inTheWay) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-allownodefaults=%s: termlab faults only a node that no other workload uses. A lab stops its kubelet (pods there are evicted once they stop tolerating an unreachable node) or taints it out-of-service (lab:stuck: every pod there that does not tolerate the taint is deleted and its volumes force-detached). Make the node termlab's alone first:\n", name)
	if !cordoned {
		fmt.Fprintf(&b, "  - it is not cordoned, so new pods can land on it: %s\n", kubectlCommand(r, "cordon", name))
	}
	if len(inTheWay) > 0 {
		fmt.Fprintf(&b, "  - %d pod(s) on it are neither DaemonSet pods nor termlab's:\n", len(inTheWay))
		for i, p := range inTheWay {
			if i == maxPodsListed {
				fmt.Fprintf(&b, "      … and %d more\n", len(inTheWay)-maxPodsListed)
				break
			}
			fmt.Fprintf(&b, "      %s/%s (%s%s)\n", p.Namespace, p.Name, p.Status.Phase, ownerNote(p))
		}
		fmt.Fprintf(&b, "    move them away: %s\n", kubectlCommand(r, "drain", name, "--ignore-daemonsets", "--delete-emptydir-data"))
	}
	fmt.Fprintf(&b, "then run the lab again; afterwards %s gives the node back.", kubectlCommand(r, "uncordon", name))
	return b.String()
}

func ownerNote(p corev1.Pod) string {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return ", owned by " + o.Kind + " " + o.Name
		}
	}
	return ", no controller: drain needs --force and the pod is gone for good"
}

// kubectlCommand is a kubectl command line against the cluster r names.
func kubectlCommand(r Remote, args ...string) string {
	parts := []string{"kubectl"}
	if r.Kubeconfig != "" {
		parts = append(parts, "--kubeconfig="+r.Kubeconfig)
	}
	if r.Context != "" {
		parts = append(parts, "--context="+r.Context)
	}
	return "`" + strings.Join(append(parts, args...), " ") + "`"
}
