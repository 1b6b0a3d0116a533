package diagnose

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podFacts is what a pod's findings, answer and advice are decided from,
// built once from Collected by factsOf. Every state the rules branch on is a
// typed value here: no rule reads another rule's words, and no rule
// recomputes what another already decided.
type podFacts struct {
	c    Collected
	pod  *corev1.Pod
	node string // spec.nodeName, "" when unscheduled

	// deleting: the pod has a deletionTimestamp; then requested, deadline
	// and grace are its last deletion request, and pastDeadline is how long
	// ago the deadline passed (negative: still ahead).
	deleting                bool
	requested, deadline     time.Time
	grace                   int64
	pastDeadline            time.Duration
	finalizers              []finalizerFact
	nodeState               nodeState
	ready                   *corev1.NodeCondition
	taints                  taintState
	taintList               []string
	lease                   leaseState
	leaseAge                time.Duration
	kubelet                 kubeletSays
	running, exited, unseen []string     // containers by crictl's word; unseen: not checked
	busy                    []busyVolume // volumes whose unmount last failed busy (the kubelet's journal)
	dryRun                  dryRunState
	rejectedBy              string // who refused the dry run (dryRunRejected)
}

// finalizerFact is one finalizer of the pod and what was found of its controller.
type finalizerFact struct {
	name    string
	manager string // managedFields manager that added it ("" if none says)
	ctl     ControllerCheck
}

// nodeState is what is known of the pod's node.
type nodeState int

const (
	nodeUnscheduled nodeState = iota // no spec.nodeName
	nodeUnreadable                   // the GET failed other than NotFound (NodeErr)
	nodeGone                         // the GET answered NotFound
	nodeNotRead                      // nothing was read and no error said why
	nodeNoReadyCondition
	nodeReady
	nodeNotReady
)

// taintState is what the node's taints say of its reachability.
type taintState int

const (
	taintsNone taintState = iota
	taintsOther
	taintsUnreachable // node.kubernetes.io/unreachable or not-ready
	taintsOutOfService
)

// leaseState is the node's kube-node-lease Lease.
type leaseState int

const (
	leaseUnreadable leaseState = iota // LeaseErr
	leaseMissing                      // none, or never renewed
	leaseStaleState
	leaseFresh
)

// kubeletSays is systemd's word on the kubelet, read against the API's.
type kubeletSays int

const (
	kubeletNotAsked kubeletSays = iota // no node access, or no node
	kubeletAskFailed
	kubeletActive
	// kubeletUnitDownHeartbeating: the unit is not active, yet the Lease is
	// fresh and the node Ready: a kubelet outside that unit, or one stopped
	// moments ago. Never judged stopped.
	kubeletUnitDownHeartbeating
	kubeletStopped
)

// dryRunState is the server-side dry run of removing the finalizers.
type dryRunState int

const (
	dryRunNone      dryRunState = iota // the pod has no finalizers
	dryRunSkipped                      // not sent (DryRun.Skipped)
	dryRunForbidden                    // RBAC refused the diagnosing user: says nothing of admission
	dryRunAccepted
	dryRunRejected
)

// factsOf decides the facts once.
func factsOf(c Collected) *podFacts {
	p := c.Pod
	f := &podFacts{c: c, pod: p, node: p.Spec.NodeName}
	if p.DeletionTimestamp != nil {
		f.deleting = true
		f.requested, f.deadline, f.grace = deadline(p)
		f.pastDeadline = c.At.Sub(f.deadline)
	}
	for _, name := range p.Finalizers {
		ctl := c.Controllers[name]
		manager := ctl.Manager
		if manager == "" {
			manager = FinalizerManager(p, name)
		}
		f.finalizers = append(f.finalizers, finalizerFact{name: name, manager: manager, ctl: ctl})
	}
	f.nodeState, f.ready = nodeStateOf(c)
	if c.Node != nil {
		f.taints, f.taintList = taintsOf(c.Node)
	}
	f.lease, f.leaseAge = leaseOf(c)
	f.kubelet = f.kubeletOf()
	for _, cc := range c.Containers {
		switch {
		case !cc.Checked():
			f.unseen = append(f.unseen, cc.Name)
		case cc.State == ContainerRunning:
			f.running = append(f.running, cc.Name)
		case cc.State == ContainerExited || cc.State == ContainerNotFound:
			f.exited = append(f.exited, cc.Name)
		}
	}
	f.busy = busyVolumes(c, f)
	f.dryRun = dryRunStateOf(c.DryRun, len(p.Finalizers) > 0)
	if f.dryRun == dryRunRejected {
		f.rejectedBy = RejectedBy(c.DryRun)
	}
	return f
}

func nodeStateOf(c Collected) (nodeState, *corev1.NodeCondition) {
	switch {
	case c.Pod.Spec.NodeName == "":
		return nodeUnscheduled, nil
	case c.NodeErr != "":
		return nodeUnreadable, nil
	case c.NodeGone:
		return nodeGone, nil
	case c.Node == nil:
		return nodeNotRead, nil
	}
	ready := condition(c.Node, corev1.NodeReady)
	switch {
	case ready == nil:
		return nodeNoReadyCondition, nil
	case ready.Status == corev1.ConditionTrue:
		return nodeReady, ready
	}
	return nodeNotReady, ready
}

func taintsOf(n *corev1.Node) (taintState, []string) {
	var unreachable, outOfService bool
	var all []string
	for _, t := range n.Spec.Taints {
		all = append(all, t.Key+"="+t.Value+":"+string(t.Effect))
		switch t.Key {
		case corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady:
			unreachable = true
		case corev1.TaintNodeOutOfService:
			outOfService = true
		}
	}
	switch {
	case outOfService:
		return taintsOutOfService, all
	case unreachable:
		return taintsUnreachable, all
	case len(all) > 0:
		return taintsOther, all
	}
	return taintsNone, nil
}

func leaseOf(c Collected) (leaseState, time.Duration) {
	switch {
	case c.LeaseErr != "":
		return leaseUnreadable, 0
	case c.Lease == nil || c.Lease.Spec.RenewTime == nil:
		return leaseMissing, 0
	}
	age := c.At.Sub(c.Lease.Spec.RenewTime.Time)
	if age > leaseStale {
		return leaseStaleState, age
	}
	return leaseFresh, age
}

// kubeletOf reads systemd's answer against the API's signs of life.
func (f *podFacts) kubeletOf() kubeletSays {
	k := f.c.Kubelet
	switch {
	case f.node == "" || k.NotChecked != "":
		return kubeletNotAsked
	case k.Err != "":
		return kubeletAskFailed
	case k.Output == "active":
		return kubeletActive
	case f.lease == leaseFresh && f.nodeState == nodeReady:
		return kubeletUnitDownHeartbeating
	}
	return kubeletStopped
}

func dryRunStateOf(dr DryRun, hasFinalizers bool) dryRunState {
	switch {
	case !hasFinalizers:
		return dryRunNone
	case dr.Skipped != "":
		return dryRunSkipped
	case dr.Code == 403 && !admissionName.MatchString(dr.Err):
		return dryRunForbidden
	case dr.Err == "":
		return dryRunAccepted
	}
	return dryRunRejected
}

// Facts derived from the ones above, named for what the rules ask.

// pastGrace: the grace deadline has passed and the object is still there.
func (f *podFacts) pastGrace() bool { return f.deleting && f.pastDeadline > 0 }

// kubeletDown: systemd says the kubelet's unit is down and nothing in the
// API says a kubelet still runs.
func (f *podFacts) kubeletDown() bool { return f.kubelet == kubeletStopped }

func (f *podFacts) notReady() bool { return f.nodeState == nodeNotReady }

// nodeTrouble: the node cannot finish the deletion (its kubelet is down,
// it is NotReady or gone, or its Lease is stale).
func (f *podFacts) nodeTrouble() bool {
	return f.kubeletDown() || f.nodeState == nodeNotReady || f.nodeState == nodeGone || f.lease == leaseStaleState
}

func (f *podFacts) hasFinalizers() bool { return len(f.finalizers) > 0 }

// ref is namespace/name.
func (f *podFacts) ref() string { return f.pod.Namespace + "/" + f.pod.Name }

// finalizerNames are the pod's finalizers, comma-separated.
func (f *podFacts) finalizerNames() string { return strings.Join(f.pod.Finalizers, ", ") }
