package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podFindings is the order of a pod's findings.
var podFindings = []findingStep[*podFacts]{
	{rules: deletionRules},
	{each: finalizerFindings, name: "finalizers"},
	{rules: nodeReadyRules},
	{rules: taintRules},
	{rules: leaseRules},
	{rules: kubeletRules},
	{each: containerFindings, name: "containers"},
	{each: terminationFindings, name: "terminations"},
	{rules: dryRunRules},
	{each: volumeFindings, name: "volumes"},
	{each: teardownFindings, name: "teardown"},
}

// findingsOf runs the pod's finding steps in order (findingsFrom).
func findingsOf(f *podFacts) ([]Finding, []string) { return findingsFrom(podFindings, f) }

// Predicates the tables share.
func always(*podFacts) bool      { return true }
func scheduled(f *podFacts) bool { return f.node != "" }
func nodeIs(s nodeState) func(*podFacts) bool {
	return func(f *podFacts) bool { return f.nodeState == s }
}

var deletionEvidence = []string{PodFile + ": metadata.deletionTimestamp, metadata.deletionGracePeriodSeconds"}

var deletionRules = []findingRule[*podFacts]{
	{id: FindDeletion, when: func(f *podFacts) bool { return !f.deleting }, level: Info, verdict: verdictNotRequested, evidence: deletionEvidence,
		text: func(*podFacts) string { return "No deletion was requested: the pod has no deletionTimestamp." }},
	{id: FindDeletion, when: (*podFacts).pastGrace, level: Blocking, verdict: "requested", evidence: deletionEvidence,
		text: func(f *podFacts) string {
			return deletionText(f) + fmt.Sprintf("passed %s ago.", round(f.pastDeadline))
		}},
	{id: FindDeletion, when: always, level: Info, verdict: "requested", evidence: deletionEvidence,
		text: func(f *podFacts) string {
			return deletionText(f) + fmt.Sprintf("%s from now: the kubelet may still be stopping the containers.", round(-f.pastDeadline))
		}},
}

// deletionText opens the deletion finding. A later delete with a shorter
// grace period (a force delete) moves deletionTimestamp earlier:
// "requested" is the last such request.
func deletionText(f *podFacts) string {
	return fmt.Sprintf("Deletion requested at about %s (the latest request that shortened it) with a %d s grace period: the grace deadline (deletionTimestamp) is %s, ",
		f.requested.UTC().Format(time.RFC3339), f.grace, f.deadline.UTC().Format(time.RFC3339))
}

func finalizerFindings(f *podFacts) []Finding {
	var out []Finding
	for _, fz := range f.finalizers {
		who := "no managedFields entry names who added it"
		if fz.manager != "" {
			who = "added by " + fz.manager + " (managedFields manager)"
		}
		verdict, level := "set", Warning
		text := fmt.Sprintf("Finalizer %s is set, %s. ", fz.name, who) + fz.ctl.Sentence()
		if f.deleting {
			verdict, level = "holds the object", Blocking
			text += " The API server keeps the object until it is removed, whatever the grace period."
		}
		out = append(out, Finding{ID: FindFinalizer(fz.name), Level: level, Verdict: verdict, Text: text,
			Evidence: []string{PodFile + ": metadata.finalizers, metadata.managedFields"}})
	}
	return out
}

var nodeReadyRules = []findingRule[*podFacts]{
	{id: FindNodeReady, when: nodeIs(nodeUnscheduled), level: Info, verdict: "unscheduled", evidence: []string{PodFile + ": spec.nodeName"},
		text: func(*podFacts) string {
			return "The pod was never scheduled: no kubelet has to stop anything, and a deletion needs nobody but the API server (and its finalizers)."
		}},
	{id: FindNodeReady, when: nodeIs(nodeUnreadable), level: NotChecked, verdict: "not checked", evidence: []string{NodeFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s was not checked: %s. Nothing is known of it: not whether it is Ready, nor that it exists.", f.node, f.c.NodeErr)
		}},
	{id: FindNodeReady, when: nodeIs(nodeGone), level: Blocking, verdict: "missing", evidence: []string{PodFile + ": spec.nodeName", NodeFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s does not exist (the API answered NotFound): no kubelet will finish the deletion. %s", f.node, podGC(f))
		}},
	{id: FindNodeReady, when: nodeIs(nodeNotRead), level: NotChecked, verdict: "not checked",
		text: func(f *podFacts) string { return fmt.Sprintf("Node %s was not read.", f.node) }},
	{id: FindNodeReady, when: nodeIs(nodeNoReadyCondition), level: Warning, verdict: "unknown", evidence: []string{NodeFile + ": status.conditions"},
		text: func(f *podFacts) string { return fmt.Sprintf("Node %s reports no Ready condition.", f.node) }},
	{id: FindNodeReady, when: nodeIs(nodeReady), level: Info, verdict: "Ready", evidence: []string{NodeFile + ": status.conditions[Ready]"},
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s is Ready (last heartbeat %s ago).", f.node, round(f.c.At.Sub(f.ready.LastHeartbeatTime.Time)))
		}},
	{id: FindNodeReady, when: nodeIs(nodeNotReady), level: Blocking, verdict: "NotReady", evidence: []string{NodeFile + ": status.conditions[Ready]"},
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s is NotReady (Ready=%s since %s ago, reason %s: %s).", f.node, f.ready.Status,
				round(f.c.At.Sub(f.ready.LastTransitionTime.Time)), f.ready.Reason, f.ready.Message)
		}},
}

// Pod garbage collector timings (k8s.io/kubernetes v1.37.2
// pkg/controller/podgc): it sweeps every 20 s and deletes a pod bound to a
// missing node once the node has been missing for its 40 s quarantine.
const (
	podGCSweep      = 20 * time.Second
	podGCQuarantine = 40 * time.Second
)

// podGC says what the pod garbage collector does with a pod whose node is
// gone, and why it has not done it yet.
func podGC(f *podFacts) string {
	s := fmt.Sprintf("The pod garbage collector (in kube-controller-manager) force-deletes pods bound to a node that no longer exists, within %s of the node going (a %s quarantine, a sweep every %s)", podGCQuarantine+podGCSweep, podGCQuarantine, podGCSweep)
	cm := f.c.ControllerManager
	switch {
	case f.hasFinalizers():
		return s + fmt.Sprintf("; its delete, like any, leaves the object while finalizers stay: %s.", f.finalizerNames())
	case cm.Present == Absent:
		return s + "; it has not, and cannot: kube-controller-manager is not running (" + cm.Evidence + ")."
	case cm.Present == Unknown:
		return s + "; whether kube-controller-manager runs was not checked (" + cm.Evidence + ")."
	}
	return s + "; kube-controller-manager runs (" + cm.Evidence + "): if the node went longer ago than that, read kube-controller-manager's log for the pod GC."
}

// nodeRead: the node object was read, so its taints can be.
func nodeRead(f *podFacts) bool {
	return f.nodeState == nodeReady || f.nodeState == nodeNotReady || f.nodeState == nodeNoReadyCondition
}

func taintsAre(t taintState) func(*podFacts) bool {
	return func(f *podFacts) bool { return nodeRead(f) && f.taints == t }
}

var taintEvidence = []string{NodeFile + ": spec.taints"}

var taintRules = []findingRule[*podFacts]{
	{id: FindNodeTaints, when: taintsAre(taintsOutOfService), level: Warning, verdict: "out-of-service", evidence: taintEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s carries the out-of-service taint (%s): the pod garbage collector force-deletes pods terminating there once the node is NotReady, whether or not their containers still run.", f.node, strings.Join(f.taintList, ", "))
		}},
	{id: FindNodeTaints, when: taintsAre(taintsUnreachable), level: Warning, verdict: "unreachable", evidence: taintEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s is tainted by the node lifecycle controller (%s): it evicts pods without tolerations, but an eviction is an ordinary delete that the same absent kubelet must finish.", f.node, strings.Join(f.taintList, ", "))
		}},
	{id: FindNodeTaints, when: taintsAre(taintsOther), level: Info, verdict: "other", evidence: taintEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s has taints that say nothing about reachability: %s.", f.node, strings.Join(f.taintList, ", "))
		}},
	{id: FindNodeTaints, when: taintsAre(taintsNone), level: Info, verdict: "none", evidence: taintEvidence,
		text: func(f *podFacts) string { return fmt.Sprintf("Node %s has no taints.", f.node) }},
}

func leaseIs(s leaseState) func(*podFacts) bool {
	return func(f *podFacts) bool { return scheduled(f) && f.lease == s }
}

var leaseEvidence = []string{LeaseFile + ": spec.renewTime"}

var leaseRules = []findingRule[*podFacts]{
	{id: FindNodeLease, when: leaseIs(leaseUnreadable), level: NotChecked, verdict: "not checked", evidence: []string{LeaseFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("The Lease of node %s was not checked: %s.", f.node, f.c.LeaseErr)
		}},
	{id: FindNodeLease, when: leaseIs(leaseMissing), level: Warning, verdict: "missing", evidence: leaseEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("Node %s has no renewed Lease in kube-node-lease: its kubelet's heartbeat cannot be judged.", f.node)
		}},
	{id: FindNodeLease, when: leaseIs(leaseStaleState), level: Blocking, verdict: "stale", evidence: leaseEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("The kubelet of %s last renewed its Lease %s ago (it renews every 10 s): it is not heartbeating.", f.node, round(f.leaseAge))
		}},
	{id: FindNodeLease, when: leaseIs(leaseFresh), level: Info, verdict: "fresh", evidence: leaseEvidence,
		text: func(f *podFacts) string {
			return fmt.Sprintf("The kubelet of %s renewed its Lease %s ago.", f.node, round(f.leaseAge))
		}},
}

func kubeletIs(s kubeletSays) func(*podFacts) bool {
	return func(f *podFacts) bool { return scheduled(f) && f.kubelet == s }
}

var kubeletRules = []findingRule[*podFacts]{
	{id: FindKubelet, when: kubeletIs(kubeletNotAsked), level: NotChecked, verdict: "not checked",
		text: func(f *podFacts) string {
			return fmt.Sprintf("Whether the kubelet on %s runs was not checked: %s.", f.node, f.c.Kubelet.NotChecked)
		}},
	{id: FindKubelet, when: kubeletIs(kubeletAskFailed), level: NotChecked, verdict: "not checked", evidence: []string{KubeletFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("Asking systemd on %s about the kubelet failed: %s.", f.node, f.c.Kubelet.Err)
		}},
	{id: FindKubelet, when: kubeletIs(kubeletActive), level: Info, verdict: "active", evidence: []string{KubeletFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("The kubelet on %s is active (%s).", f.node, f.c.Kubelet.Command)
		}},
	{id: FindKubelet, when: kubeletIs(kubeletUnitDownHeartbeating), level: Warning,
		verdictOf: func(f *podFacts) string { return "unit " + f.c.Kubelet.Output },
		evidence:  []string{KubeletFile, LeaseFile + ": spec.renewTime", NodeFile + ": status.conditions[Ready]"},
		text: func(f *podFacts) string {
			return fmt.Sprintf("systemd's kubelet unit on %s is %s, yet the node's Lease was renewed %s ago and the node is Ready: either the kubelet was stopped within the last %s, or it runs outside that unit. Not judged as stopped.", f.node, f.c.Kubelet.Output, round(f.leaseAge), leaseStale)
		}},
	{id: FindKubelet, when: kubeletIs(kubeletStopped), level: Blocking, evidence: []string{KubeletFile},
		verdictOf: func(f *podFacts) string { return f.c.Kubelet.Output },
		text: func(f *podFacts) string {
			k := f.c.Kubelet
			return fmt.Sprintf("The kubelet on %s is not running (%s: %s): nobody on the node stops the containers or finishes a graceful deletion.", f.node, k.Command, k.Output)
		}},
}

func containerFindings(f *podFacts) []Finding {
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range f.pod.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	var out []Finding
	for _, cc := range f.c.Containers {
		id := FindContainer(cc.Name)
		ev := []string{ContainerFile(cc.ID)}
		api := ""
		if s, ok := statuses[cc.Name]; ok && s.State.Terminated != nil {
			api = fmt.Sprintf("; the API status says terminated (exit %d, %s)", s.State.Terminated.ExitCode, s.State.Terminated.Reason)
			ev = append(ev, PodFile+": status.containerStatuses["+cc.Name+"].state")
		}
		var fd Finding
		switch {
		case cc.NotChecked != "":
			fd = Finding{ID: id, Level: NotChecked, Verdict: "not checked", Evidence: ev[1:],
				Text: fmt.Sprintf("Container %s (%s) on the node was not checked: %s%s.", cc.Name, short(cc.ID), cc.NotChecked, api)}
		case cc.Err != "":
			fd = Finding{ID: id, Level: NotChecked, Verdict: "not checked", Evidence: ev,
				Text: fmt.Sprintf("crictl could not say whether container %s (%s) runs: %s%s.", cc.Name, short(cc.ID), cc.Err, api)}
		case cc.State == ContainerRunning:
			fd = Finding{ID: id, Level: Info, Verdict: "running", Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) is running on the node (crictl: %s, pid %d)%s.", cc.Name, short(cc.ID), cc.State, cc.PID, api)}
			if f.pastGrace() {
				fd.Level = Blocking
				fd.Text += " The grace deadline has passed and it still runs: nobody has killed it."
			}
		case cc.State == ContainerExited:
			fd = Finding{ID: id, Level: Info, Verdict: "exited", Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) already exited (crictl: %s, exit code %d)%s.", cc.Name, short(cc.ID), cc.State, cc.ExitCode, api)}
		case cc.State == ContainerNotFound:
			fd = Finding{ID: id, Level: Info, Verdict: "gone", Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) no longer exists on the node (crictl: NotFound): it exited and was removed%s.", cc.Name, short(cc.ID), api)}
		default:
			fd = Finding{ID: id, Level: Warning, Verdict: strings.ToLower(cc.State), Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) is %s on the node%s.", cc.Name, short(cc.ID), cc.State, api)}
		}
		out = append(out, fd)
	}
	return out
}

// Kubelet event reasons that tell a termination in progress or failing.
var terminationReasons = map[string]bool{"Killing": true, "FailedKillPod": true, "FailedPreStopHook": true, "ExceededGracePeriod": true}

func terminationFindings(f *podFacts) []Finding {
	p := f.pod
	var parts []string
	for _, s := range p.Status.ContainerStatuses {
		switch {
		case s.State.Terminated != nil:
			t := s.State.Terminated
			parts = append(parts, fmt.Sprintf("container %s terminated (exit %d, %s, at %s)", s.Name, t.ExitCode, t.Reason, t.FinishedAt.UTC().Format(time.RFC3339)))
		case s.State.Running != nil:
			parts = append(parts, fmt.Sprintf("container %s reported running", s.Name))
		case s.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("container %s waiting (%s)", s.Name, s.State.Waiting.Reason))
		}
	}
	var events []string
	failed := false
	for _, e := range sortedEvents(f.c.Events) {
		if !terminationReasons[e.Reason] {
			continue
		}
		if e.Reason != "Killing" {
			failed = true
		}
		events = append(events, fmt.Sprintf("%s %s: %s (×%d, by %s)", eventTime(e).UTC().Format(time.RFC3339), e.Reason, strings.TrimSpace(e.Message), max(e.Count, 1), e.Source.Component))
	}
	// The kubelet runs a preStop hook before SIGTERM, inside the grace
	// period: a running container of a pod being deleted may be in its hook.
	for _, c := range p.Spec.Containers {
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
			continue
		}
		hook := preStopCommand(c.Lifecycle.PreStop)
		if f.deleting && runningStatus(p, c.Name) {
			parts = append(parts, fmt.Sprintf("container %s has a preStop hook (%s) that the kubelet runs before SIGTERM, within the grace period: it may be running now", c.Name, hook))
		} else {
			parts = append(parts, fmt.Sprintf("container %s has a preStop hook (%s)", c.Name, hook))
		}
	}
	text := fmt.Sprintf("Phase %s; ", p.Status.Phase)
	if len(parts) == 0 {
		text += "no container status"
	} else {
		text += strings.Join(parts, "; ")
	}
	if len(events) == 0 {
		text += ". No kubelet event about killing it (Killing, FailedKillPod, FailedPreStopHook)."
	} else {
		text += ". Kubelet events: " + strings.Join(events, "; ") + "."
	}
	level, verdict := Info, "no kill seen"
	switch {
	case failed:
		level, verdict = Warning, "kill failed"
	case len(events) > 0:
		verdict = "killing"
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		verdict = "terminated"
	}
	return []Finding{{ID: FindTermination, Level: level, Verdict: verdict, Text: text,
		Evidence: []string{PodFile + ": status.phase, status.containerStatuses", EventsFile}}}
}

func dryRunIs(s dryRunState) func(*podFacts) bool {
	return func(f *podFacts) bool { return f.dryRun == s }
}

var dryRunRules = []findingRule[*podFacts]{
	{id: FindDryRun, when: dryRunIs(dryRunSkipped), level: NotChecked, verdict: "not checked",
		text: func(f *podFacts) string {
			return "Whether removing the finalizers would be accepted was not checked: " + f.c.DryRun.Skipped + "."
		}},
	// RBAC refused the diagnosing user, not the removal: that says nothing about admission.
	{id: FindDryRun, when: dryRunIs(dryRunForbidden), level: NotChecked, verdict: "not checked", evidence: []string{DryRunFile},
		text: func(f *podFacts) string {
			return "Whether removing the finalizers would be accepted was not checked: these credentials may not patch the pod (" + f.c.DryRun.Err + ")."
		}},
	{id: FindDryRun, when: dryRunIs(dryRunAccepted), level: Info, verdict: "accepted", evidence: []string{DryRunFile},
		text: func(f *podFacts) string {
			return fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s, dryRun=All) was accepted: nothing in admission blocks it.", f.c.DryRun.Patch)
		}},
	{id: FindDryRun, when: dryRunIs(dryRunRejected), level: Blocking, verdict: "rejected", evidence: []string{DryRunFile},
		text: func(f *podFacts) string {
			dr := f.c.DryRun
			return fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s) was rejected by %s (HTTP %d): %s", dr.Patch, f.rejectedBy, dr.Code, dr.Err)
		}},
}

// volumeFindings: nothing for a pod without claims.
func volumeFindings(f *podFacts) []Finding {
	v, p := f.c.Volumes, f.pod
	if len(v.PVs) == 0 && v.Err == "" {
		return nil
	}
	ev := []string{VolumesFile}
	if v.Err != "" {
		return []Finding{{ID: FindVolumes, Level: NotChecked, Verdict: "not checked", Evidence: ev, Text: "The pod's volume attachments were not read: " + v.Err + "."}}
	}
	var here, elsewhere []string
	for _, va := range v.Attachments {
		if !va.Status.Attached {
			continue
		}
		desc := fmt.Sprintf("%s (VolumeAttachment %s, attacher %s)", *va.Spec.Source.PersistentVolumeName, va.Name, va.Spec.Attacher)
		if va.Spec.NodeName == p.Spec.NodeName {
			here = append(here, desc)
		} else {
			elsewhere = append(elsewhere, desc+" on "+va.Spec.NodeName)
		}
	}
	sort.Strings(here)
	sort.Strings(elsewhere)
	var out []Finding
	switch {
	case len(here) > 0 && f.deleting:
		out = append(out, Finding{ID: FindVolumes, Level: Warning, Verdict: "attached", Evidence: ev,
			Text: fmt.Sprintf("Still attached to %s: %s. The attach/detach controller detaches a volume only once the pod is gone (or the node carries the out-of-service taint); a replacement that needs it elsewhere waits until then.", p.Spec.NodeName, strings.Join(here, ", "))})
	case len(here) > 0:
		out = append(out, Finding{ID: FindVolumes, Level: Info, Verdict: "attached", Evidence: ev,
			Text: fmt.Sprintf("Attached to %s: %s.", p.Spec.NodeName, strings.Join(here, ", "))})
	default:
		out = append(out, Finding{ID: FindVolumes, Level: Info, Verdict: "detached", Evidence: ev,
			Text: fmt.Sprintf("No volume of the pod's claims is attached to %s.", p.Spec.NodeName)})
	}
	if len(elsewhere) > 0 {
		out = append(out, Finding{ID: FindVolumes + ".elsewhere", Level: Info, Verdict: "attached elsewhere", Evidence: ev,
			Text: "Attached to another node: " + strings.Join(elsewhere, ", ") + "."})
	}
	return out
}
