package claims

import (
	"fmt"

	"github.com/termlab/termlab/internal/evidence"
)

// KubeletStopNotReady decides that the node whose kubelet the lab stopped
// (action "stop-kubelet") turned NotReady between NotReadyEarliest and
// NotReadyLatest after the stop, with the statement every such lab makes.
func KubeletStopNotReady(rec *evidence.Record, id string) Claim {
	node := rec.TargetOf(evidence.ActionStopKubelet)
	return NodeNotReady(rec, NotReady{
		ID: id,
		Statement: fmt.Sprintf("The node whose kubelet was stopped turns NotReady (Ready condition not True) between %s and %s after the stop: the node lifecycle controller waits its node-monitor-grace-period of %s after it last saw the node's lease renewed (renewed every %s, so up to that much before the stop), looks every %s (once to notice the renewal, once to find the grace run out), plus %s for its update to reach the watch. Runs compare within ±%s, the range this bound allows.",
			InSeconds(NotReadyEarliest), InSeconds(NotReadyLatest), InSeconds(NodeMonitorGracePeriod), InSeconds(NodeLeaseRenewInterval), InSeconds(NodeMonitorPeriod), InSeconds(NodeStatusAllowance), InSeconds(NotReadyLatest-NotReadyEarliest)),
		Node: node, After: evidence.ActionStopKubelet, NotBefore: NotReadyEarliest, Within: NotReadyLatest,
	}).WithTolerance("not_ready_after_seconds", NotReadyLatest-NotReadyEarliest)
}

// KubeletStopTainted decides that the node whose kubelet the lab stopped got
// the unreachable NoExecute taint between NotReadyEarliest and
// UnreachableTaintedLatest after the stop.
func KubeletStopTainted(rec *evidence.Record, id string) Claim {
	return NodeTaintedWithin(rec, Tainted{
		ID: id,
		Statement: fmt.Sprintf("The node lifecycle controller taints the node %s between %s and %s after the kubelet stop: in the pass that marks it NotReady (%s–%s) or the next one (%s later). A pod tolerates it for 300 s by default, so the taint manager evicts nothing during a lab.",
			evidence.UnreachableTaint, InSeconds(NotReadyEarliest), InSeconds(UnreachableTaintedLatest), InSeconds(NotReadyEarliest), InSeconds(NotReadyLatest), InSeconds(NodeMonitorPeriod)),
		Node: rec.TargetOf(evidence.ActionStopKubelet), Taint: evidence.UnreachableTaint, After: evidence.ActionStopKubelet, NotBefore: NotReadyEarliest, Within: UnreachableTaintedLatest,
	})
}
