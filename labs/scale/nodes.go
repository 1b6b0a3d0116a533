package scale

import (
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kwok"
)

// ClaimNodesReady: no pod of the run lost its Ready condition while it
// ran, so the run's fake nodes stayed healthy and its figures are a healthy
// cluster's.
const ClaimNodesReady = "scale.fake_nodes_stayed_ready"

// nodeLifecycleController is the node lifecycle controller as a sender
// (evidence.AuditEvent.Sender). It writes a pod only to mark it NotReady
// (its Ready condition False) when the pod's node stopped renewing its lease.
const nodeLifecycleController = "node-controller (kube-controller-manager)"

// unreadied is the pods that lost Ready while they ran (isUnreadied).
type unreadied struct {
	pods  int
	first time.Time
	pod   string // the first one
}

// isUnreadied: a pod that was Ready before is Running and not Ready, not
// being deleted. kwok's stages never do that to a running pod; the node
// lifecycle controller does, to every pod of a node whose lease lapsed
// (kwok renews the fake nodes' leases as kubelets do).
func isUnreadied(e evidence.PodEvent, wasReady bool) bool {
	return wasReady && e.Type != "DELETED" && e.DeletionTimestamp == nil && e.Phase == "Running" && e.Ready == "False"
}

// add counts a pod; the record is read in the order observed, so the
// first added is the first.
func (u *unreadied) add(e evidence.PodEvent) {
	if u.pods == 0 {
		u.first, u.pod = e.ObservedAt, e.Name
	}
	u.pods++
}

// nodesReady decides ClaimNodesReady from the pods watch; the audit log, when
// there is one, says who took Ready away. At 50,000 pods on 500 fake nodes,
// with kwok renewing 4 leases at once, the node lifecycle controller marked
// 2,305 of the run's pods NotReady in ten minutes (run
// 20261205-200226-7458), and kwok readied them again on top of the run's
// work.
func nodesReady(f *facts) claims.Claim {
	v := newVerdict(ClaimNodesReady, "No pod of the run lost its Ready condition while it ran: once Ready, each stayed Ready until its deletion began. The node lifecycle controller marks every pod of a node NotReady when the node has not renewed its lease within node-monitor-grace-period (50 s), and kwok renews the fake nodes' leases as kubelets do: a pod that lost Ready means kwok fell behind, and the run measured a cluster whose nodes were failing.", eventsFile)
	if !v.Require(f.readErr == nil, "reading the pod events back: %v", f.readErr) {
		return v.Done()
	}
	v.Observe("pods_unreadied", f.unreadied.pods)
	who := "not known: the run has no audit log"
	if f.auditErr == nil && f.audited > 0 {
		n := 0
		if w := f.writes[nodeLifecycleController]; w != nil {
			n = len(w.at)
		}
		// Cited only when read: a run without one (a -kubeconfig run on a
		// cluster without audit) has no audit.jsonl to point at.
		v.Cite(evidence.AuditFile)
		v.Observe("node_lifecycle_controller_pod_writes", n)
		who = fmt.Sprintf("the node lifecycle controller wrote %d of the run's pods", n)
	}
	v.Require(f.unreadied.pods == 0, "%d pods lost Ready while they ran, the first %s at %s (%s): their fake nodes' leases lapsed, kwok renewing %d at once (kwok.NodeLeaseParallelism) fell behind on this machine; the run's figures are of failing nodes: run fewer fake nodes",
		f.unreadied.pods, f.unreadied.pod, f.unreadied.first.UTC().Format("15:04:05.000"), who, kwok.NodeLeaseParallelism)
	return v.Done()
}
