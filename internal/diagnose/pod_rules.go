package diagnose

import (
	"fmt"
	"strings"
	"time"
)

// A pod's answer and advice are ordered tables of small rules decided from
// the facts (rules.go has their shape and the loops that run them). Adding
// a cause is adding rules here, not another branch in a long function.

var podAnswer = []sentenceRule[*podFacts]{
	{id: "not-deleting", when: func(f *podFacts) bool { return !f.deleting },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Pod %s is not being deleted (no deletionTimestamp).", f.ref()))
		}},
	{id: "terminating", when: func(f *podFacts) bool { return f.deleting },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Pod %s is Terminating: %s.", f.ref(), terminatingSince(f)))
		}},
	{id: "terminating-normally", when: terminatingNormally,
		text: func(f *podFacts) []string {
			var out []string
			for _, c := range preStopsRunning(f) {
				s := fmt.Sprintf("It is terminating normally: the kubelet runs container %s's preStop hook (%s) first, then sends SIGTERM, all within the grace period, which began %s ago (%d s in all, %s left).",
					c.name, c.hook, round(f.c.At.Sub(f.requested)), f.grace, round(-f.pastDeadline))
				if c.sleep > 0 {
					if over := f.c.At.Sub(f.requested) - c.sleep; over >= 0 {
						s += fmt.Sprintf(" Its %s sleep is over, so the process has had SIGTERM for about %s; the kubelet kills whatever still runs at the deadline.", c.sleep, round(over))
					} else {
						s += fmt.Sprintf(" Its %s sleep has %s to go; then SIGTERM, and the kubelet kills whatever still runs at the deadline.", c.sleep, round(-over))
					}
				}
				out = append(out, s)
			}
			return out
		}},
	{id: "finalizers", when: (*podFacts).hasFinalizers,
		text: func(f *podFacts) []string {
			var out []string
			for _, fz := range f.finalizers {
				held := "It carries finalizer " + fz.name
				if f.deleting {
					held = "It is held by finalizer " + fz.name
				}
				if fz.manager != "" {
					held += ", added by " + fz.manager
				}
				out = append(out, held+fz.ctl.Clause()+".")
			}
			return out
		}},
	{id: "node-gone", when: nodeIs(nodeGone),
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Its node %s no longer exists, so no kubelet will finish the deletion or stop anything there.", f.node) + " " + podGC(f))
		}},
	{id: "kubelet-down-node-not-ready", when: func(f *podFacts) bool { return f.kubeletDown() && f.notReady() },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("The kubelet on %s is not running and the node is NotReady: nobody on the node can stop the containers.", f.node))
		}},
	{id: "kubelet-down", when: func(f *podFacts) bool { return f.kubeletDown() && !f.notReady() },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("The kubelet on %s is not running: nobody on the node can stop the containers.", f.node))
		}},
	{id: "node-not-ready", when: func(f *podFacts) bool { return f.notReady() && !f.kubeletDown() },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Node %s is NotReady (its kubelet was not checked%s).", f.node, notCheckedWhy(f.c.Kubelet)))
		}},
	{id: "only-the-kubelet-finishes", when: func(f *podFacts) bool {
		return f.deleting && !f.hasFinalizers() && (f.kubeletDown() || f.notReady())
	}, text: func(*podFacts) []string {
		return one("Only the kubelet finishes a graceful deletion, so it cannot finish until the kubelet is back (or the pod is force-deleted).")
	}},
	{id: "volume-busy", when: volumeBusy, text: volumeBusyAnswer},
	{id: "container-still-running", when: func(f *podFacts) bool { return len(f.running) > 0 && f.deleting },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("The container (%s) is still running on the node.", strings.Join(f.running, ", ")))
		}},
	{id: "container-runs", when: func(f *podFacts) bool { return len(f.running) > 0 && !f.deleting },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Its container (%s) runs on the node.", strings.Join(f.running, ", ")))
		}},
	{id: "container-exited", when: func(f *podFacts) bool { return len(f.exited) > 0 },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("The container (%s) already exited.", strings.Join(f.exited, ", ")))
		}},
	{id: "container-not-checked", when: func(f *podFacts) bool { return len(f.unseen) > 0 },
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Whether the container (%s) still runs was not checked.", strings.Join(f.unseen, ", ")))
		}},
	{id: "removal-accepted", when: dryRunIs(dryRunAccepted),
		text: func(*podFacts) []string {
			return one("Removing the finalizers would be accepted (server-side dry run).")
		}},
	{id: "removal-rejected", when: dryRunIs(dryRunRejected),
		text: func(f *podFacts) []string {
			return one("Removing the finalizers would be rejected by " + f.rejectedBy + " (server-side dry run).")
		}},
}

// terminatingSince says when the deletion was asked for and what its grace
// period says, for the answer's first sentence.
func terminatingSince(f *podFacts) string {
	past := f.pastDeadline
	switch {
	case past <= 0:
		return fmt.Sprintf("its %d s grace deadline is %s away", f.grace, round(-past))
	case f.grace != 0:
		return fmt.Sprintf("its %d s grace deadline passed %s ago", f.grace, round(past))
	case f.node == "":
		// The API server skips the grace period of a pod no kubelet ever ran.
		return fmt.Sprintf("it was deleted %s ago, with grace period 0 because it was never scheduled", round(past))
	case allTerminated(f.pod):
		// The kubelet's final delete, once the containers stopped, also
		// sets grace 0; the object alone cannot say which it was.
		return fmt.Sprintf("its grace period is 0 since %s ago: a force delete, or the kubelet's final delete once its containers stopped (the API server's audit log says which)", round(past))
	}
	return fmt.Sprintf("it was force-deleted (grace period 0) %s ago", round(past))
}

func notCheckedWhy(k NodeCheck) string {
	if k.NotChecked != "" {
		return ": " + k.NotChecked
	}
	return ""
}

// forceOnTable: a force delete and the out-of-service taint are only on the
// table for a scheduled pod being deleted, or one whose node is in trouble.
func forceOnTable(f *podFacts) bool { return f.node != "" && (f.deleting || f.nodeTrouble()) }

// The force-delete steps are alternatives: which one depends on what is
// known of the containers, in this order.
func forceWhenRunning(f *podFacts) bool { return forceOnTable(f) && len(f.running) > 0 }
func forceWhenNodeGone(f *podFacts) bool {
	return forceOnTable(f) && len(f.running) == 0 && f.nodeState == nodeGone
}
func forceWhenUnseen(f *podFacts) bool {
	return forceOnTable(f) && len(f.running) == 0 && f.nodeState != nodeGone && len(f.unseen) > 0
}
func forceWhenNoContainer(f *podFacts) bool {
	return forceOnTable(f) && len(f.running) == 0 && f.nodeState != nodeGone && len(f.c.Containers) == 0
}
func forceWhenAllExited(f *podFacts) bool {
	return forceOnTable(f) && len(f.running) == 0 && f.nodeState != nodeGone && len(f.unseen) == 0 && len(f.c.Containers) > 0
}

// deletingWithoutFinalizers: only the kubelet (or a force delete) ends it.
func deletingWithoutFinalizers(f *podFacts) bool { return f.deleting && !f.hasFinalizers() }

var podAdvice = []adviceRule[*podFacts]{
	{id: "release-the-mount", when: volumeBusy, risk: RiskSafe, text: volumeBusyAdvice},
	{id: "force-delete-leaves-the-mount", when: volumeBusy, risk: RiskRisky,
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("a force delete (`kubectl delete pod %s -n %s --force --grace-period=0`) removes the object but neither the mount nor what holds it: the kubelet keeps trying to clean up the pod's directory on %s, and whatever used the volume goes on using it.", f.pod.Name, f.pod.Namespace, f.node))
		}},
	{id: "start-the-kubelet", when: (*podFacts).kubeletDown, risk: RiskSafe,
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("start the kubelet on %s (`systemctl start kubelet` on the node). It finishes the deletion itself and kills the containers, with their grace period if any is left.", f.node))
		}},
	// Each controller's step has the risk its presence gives (controllerStep).
	{id: "the-finalizers-controller", when: (*podFacts).hasFinalizers, risk: RiskNote,
		text: func(f *podFacts) []string {
			var out []string
			for _, fz := range f.finalizers {
				risk, step := controllerStep(fz.name, "", fz.ctl, "")
				out = append(out, risk.say(step))
			}
			return out
		}},
	{id: "remove-the-finalizer-by-hand", when: (*podFacts).hasFinalizers, risk: RiskRisky,
		text: func(f *podFacts) []string {
			var out []string
			// Last first: removing one shifts the indices after it, so in
			// this order each line still finds its finalizer where it says.
			for i := len(f.finalizers) - 1; i >= 0; i-- {
				fz := f.finalizers[i]
				then := "the object goes at once if its deletion was requested"
				if len(f.finalizers) > 1 {
					then = "the object goes once its other finalizers are gone too, if its deletion was requested"
				}
				out = append(out, fmt.Sprintf("remove finalizer %s by hand, and only it (`%s`): the patch tests that index %d still holds it, so it removes nothing if the list changed meanwhile. The cleanup it guards is skipped for good; %s.",
					fz.name, RemoveFinalizerCommand("pod", f.pod.Name, f.pod.Namespace, i, fz.name), i, then))
			}
			return out
		}},
	{id: "removal-refused", when: dryRunIs(dryRunRejected), risk: RiskNote,
		text: func(f *podFacts) []string {
			return one("The finalizer patch would be refused today by " + f.rejectedBy + ": ask its owner; do not disable it to get one pod out.")
		}},
	{id: "kubelet-is-stopping-it", when: func(f *podFacts) bool {
		return forceWhenRunning(f) && !f.nodeTrouble() && !f.pastGrace() && !f.hasFinalizers()
	}, risk: RiskWait,
		text: func(*podFacts) []string { return one("the kubelet is stopping the container within its grace period.") }},
	{id: "force-delete-leaves-the-process", when: forceWhenRunning, risk: RiskDangerous,
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("a force delete (`kubectl delete pod %s -n %s --force --grace-period=0`) removes the object while the container keeps running on %s; a replacement (a StatefulSet's pod with the same name, or a Deployment's) can then run beside it, and the old one stops only when a kubelet there kills it.", f.pod.Name, f.pod.Namespace, f.node))
		}},
	{id: "out-of-service-taint-while-running", when: func(f *podFacts) bool { return forceWhenRunning(f) && f.nodeTrouble() }, risk: RiskNotHonest,
		text: func(*podFacts) []string {
			return one("the out-of-service taint (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) says the node is shut down; crictl shows the container running, so the pod GC would force-delete a pod whose process lives on.")
		}},
	{id: "container-outlived-the-deadline", when: func(f *podFacts) bool {
		return forceWhenRunning(f) && !f.nodeTrouble() && f.pastGrace() && !f.hasFinalizers()
	}, risk: RiskNote,
		text: func(f *podFacts) []string {
			// Only say the kubelet is active when systemd said so.
			if f.kubelet == kubeletActive {
				return one("The kubelet is active, yet the container outlived the grace deadline: read the kubelet's log (journalctl -u kubelet on the node) and the FailedKillPod events before anything else.")
			}
			return one("The container outlived the grace deadline while nothing in the API says its node is in trouble: read the kubelet's log on the node (journalctl -u kubelet, or wherever this cluster runs its kubelet) and the FailedKillPod events before anything else.")
		}},
	{id: "node-gone", when: forceWhenNodeGone, risk: RiskNote,
		text: func(f *podFacts) []string {
			return one(fmt.Sprintf("Node %s no longer exists in the API, so nothing on it can be asked through the cluster. If the machine is gone too, a force delete (`kubectl delete pod %s -n %s --force --grace-period=0`) leaves nothing behind. If it still runs (its node object deleted by hand), its containers may run on and its kubelet cannot finish anything: look on the machine itself (crictl ps) first.", f.node, f.pod.Name, f.pod.Namespace))
		}},
	{id: "containers-not-checked", when: forceWhenUnseen, risk: RiskUnknown,
		text: func(*podFacts) []string {
			return one("whether the container still runs was not checked; before a force delete or the out-of-service taint, look on the node (crictl ps), or rerun with the node access the not-checked finding names.")
		}},
	// Nothing was looked at: the status names no container (it never
	// started one, or a kwok node's pod has none).
	{id: "no-container-to-look-for", when: func(f *podFacts) bool { return forceWhenNoContainer(f) && deletingWithoutFinalizers(f) }, risk: RiskNote,
		text: func(*podFacts) []string {
			return one("Its status names no container (none was ever reported started), so there was nothing to look for on the node: a force delete leaves behind only a container the kubelet started and never reported.")
		}},
	// A busy volume's own advice says what a force delete leaves (the mount).
	{id: "force-delete-leaves-nothing", when: func(f *podFacts) bool {
		return forceWhenAllExited(f) && deletingWithoutFinalizers(f) && !volumeBusy(f)
	}, risk: RiskLow,
		text: func(*podFacts) []string {
			return one("no container of the pod runs on the node, so a force delete leaves no process behind.")
		}},
	{id: "out-of-service-taint-after-exit", when: func(f *podFacts) bool { return forceWhenAllExited(f) && f.nodeTrouble() }, risk: RiskNote,
		text: func(*podFacts) []string {
			return one("The out-of-service taint is honest only if the node is really shut down or cut off for good; no container of this pod runs on it now.")
		}},
	{id: "force-delete-does-not-help", when: func(f *podFacts) bool {
		return f.hasFinalizers() && len(f.running) == 0 && len(f.unseen) == 0
	}, risk: RiskNote,
		text: func(f *podFacts) []string {
			if len(f.c.Containers) > 0 {
				return one("A force delete does not help: the finalizer holds the object whatever the grace period; the container has already exited, so no process is left to worry about.")
			}
			return one("A force delete does not help: the finalizer holds the object whatever the grace period.")
		}},
}

// controllerStep is the step for a finalizer's controller, whatever object
// it holds (a pod, a namespace's leftovers): by names who added the
// finalizer, after ends the sentence with what happens next.
func controllerStep(finalizer, by string, ctl ControllerCheck, after string) (Risk, string) {
	switch ctl.Present {
	case Present:
		return RiskWait, fmt.Sprintf("then look at the controller that owns %s (%s): it runs but has not removed the finalizer; its log says why.", finalizer, ctl.Evidence)
	case Failing:
		return RiskSafe, fmt.Sprintf("fix the controller that owns %s first (%s): its log and Warning events say why it fails; once it works it removes the finalizer after its cleanup%s.", finalizer, ctl.Evidence, after)
	}
	return RiskSafe, fmt.Sprintf("bring back the controller that owns %s%s, or find out who does; it removes the finalizer after its cleanup%s.", finalizer, by, after)
}

// nothingToDo is the advice when no rule has any.
const nothingToDo = "not being deleted, and nothing found would hold a deletion up."

// answerOf and adviceOf run the tables in order; fired names the rules that
// said something, in order.
func answerOf(f *podFacts, findings []Finding) (answer string, fired []string) {
	s, fired := sentencesFrom(podAnswer, f)
	// A warning is a cause to weigh: one no sentence above spoke for goes
	// into the answer in its own words, not only into the findings list
	// (a stopped kubelet unit beside a finalizer: removing the finalizer
	// would not stop the container).
	s, fired = weighWarnings(findings, podAnswerSpeaksFor, s, fired)
	return strings.Join(s, " "), fired
}

// podAnswerSpeaksFor are, by finding id (or its prefix, ending in "."), the
// answer rules whose sentence says what a warning of that finding says.
var podAnswerSpeaksFor = map[string][]string{
	"container.": {"container-still-running", "container-runs", "container-exited", "container-not-checked"},
	"finalizer.": {"finalizers"},
	FindVolumes:  {"volume-busy"},
}

func adviceOf(f *podFacts) (advice, fired []string) {
	advice, fired = stepsFrom(podAdvice, f)
	if len(advice) == 0 {
		advice = append(advice, RiskNothing.say("the pod is "+nothingToDo))
		fired = append(fired, "advice.nothing-to-do")
	}
	return advice, fired
}

// terminatingNormally: deleted, within its grace period, nothing holds it
// but the kubelet's own work, and the kubelet is there to do it.
func terminatingNormally(f *podFacts) bool {
	return f.deleting && f.pastDeadline <= 0 && !f.hasFinalizers() && !f.nodeTrouble() && len(preStopsRunning(f)) > 0
}

// preStopHook is a container of the pod with a preStop hook, still running.
type preStopHook struct {
	name, hook string
	// sleep is how long the hook sleeps, when it says (the native sleep
	// action); 0 when it cannot be told from the spec.
	sleep time.Duration
}

// preStopsRunning are the containers with a preStop hook that the API
// reports running (the kubelet runs the hook before SIGTERM).
func preStopsRunning(f *podFacts) []preStopHook {
	var out []preStopHook
	for _, c := range f.pod.Spec.Containers {
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || !runningStatus(f.pod, c.Name) {
			continue
		}
		h := preStopHook{name: c.Name, hook: preStopCommand(c.Lifecycle.PreStop)}
		if s := c.Lifecycle.PreStop.Sleep; s != nil {
			h.sleep = time.Duration(s.Seconds) * time.Second
		}
		out = append(out, h)
	}
	return out
}
