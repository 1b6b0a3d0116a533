package diagnose

import (
	"fmt"
	"strings"
)

// A namespace's answer and advice are ordered tables of small rules decided
// from nsFacts, as a pod's are from podFacts (rules.go has their shape and
// the loops that run them). Every rule whose when holds speaks, in order;
// alternatives (the answer's head, the finalize warning) have whens that
// exclude each other.

func (f *nsFacts) head() string {
	return fmt.Sprintf("Namespace %s is Terminating for %s", f.ns.Name, round(f.age))
}

// groupText is one group of leftovers as the answer says it.
func (f *nsFacts) groupText(g objectGroup) string {
	verb := "remains"
	if len(g.objects) > 1 {
		verb = "remain"
	}
	text := fmt.Sprintf("%d %s (%s) %s", len(g.objects), g.resource, objectList(g.objects, false), verb)
	if g.finalizer == "" {
		return text + " without a finalizer"
	}
	ctl := f.c.Controllers[g.finalizer]
	text += ", held by finalizer " + strings.Join(g.objects[0].Finalizers, ", ")
	if m := ctl.Manager; m != "" {
		text += ", added by " + m
	} else if m := g.objects[0].Managers[g.finalizer]; m != "" {
		text += ", added by " + m
	}
	return text + ctl.Clause()
}

// groupTexts are the groups keep accepts, as the answer says them.
func (f *nsFacts) groupTexts(keep func(objectGroup) bool) []string {
	var out []string
	for _, g := range f.groups {
		if keep(g) {
			out = append(out, f.groupText(g))
		}
	}
	return out
}

// Predicates the namespace tables share.
func (f *nsFacts) nothingListed() bool { return f.terminating && len(f.groups) == 0 }

// kubernetesFinalizerHeld: the namespace controller keeps its own
// finalizer while something is left, or may be (discovery failed), or while
// its last pass failed to delete the content.
func (f *nsFacts) kubernetesFinalizerHeld() bool {
	return f.total > 0 || f.discoveryIncomplete() || f.deletionFailed()
}

// othersOwnFinalizers: the namespace has finalizers of its own besides
// kubernetes, which only their owners remove.
func (f *nsFacts) othersOwnFinalizers() bool { return len(f.otherSpec)+len(f.ns.Finalizers) > 0 }

var nsAnswer = []sentenceRule[*nsFacts]{
	{id: "namespace-missing", when: func(f *nsFacts) bool { return !f.exists() },
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("Namespace %s does not exist: there is nothing left to delete.", f.c.Name))
		}},
	{id: "not-deleting", when: (*nsFacts).notDeleting,
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("Namespace %s is not being deleted (phase %s, no deletionTimestamp); it holds %s, %d of them with finalizers.", f.ns.Name, f.ns.Status.Phase, count(f.total, "object", "objects"), f.held))
		}},
	{id: "apiservice-would-block", when: (*nsFacts).notDeleting,
		text: func(f *nsFacts) []string {
			var out []string
			for _, a := range f.unavailable {
				out = append(out, fmt.Sprintf("APIService %s is unavailable (%s): a deletion of this namespace would stop at discovery until it is fixed.", a.Name, a.Reason))
			}
			return out
		}},
	// The head: what remains, one of four.
	{id: "pods-hold-everything", when: func(f *nsFacts) bool { return f.terminating && waitOnPods(f) },
		text: func(f *nsFacts) []string {
			// The pods hold everything: name them first, then what waits behind them.
			behind := f.groupTexts(func(g objectGroup) bool { return !g.pod && g.finalizer != "" })
			free, types := 0, []string{}
			for _, g := range f.groups {
				if !g.pod && g.finalizer == "" {
					free += len(g.objects)
					types = append(types, g.resource)
				}
			}
			if free > 0 {
				behind = append(behind, fmt.Sprintf("%s without finalizers (%s)", count(free, "object", "objects"), strings.Join(types, ", ")))
			}
			return []string{
				f.head() + ": " + strings.Join(f.groupTexts(func(g objectGroup) bool { return g.pod }), "; ") + ".",
				fmt.Sprintf("Nothing else is being deleted yet: the namespace controller deletes pods first and waits until every pod is gone, so pod %s holds everything.", strings.Join(f.waitingPods, ", ")),
				"Waiting behind it: " + strings.Join(behind, "; ") + ".",
			}
		}},
	{id: "remaining", when: func(f *nsFacts) bool { return f.terminating && !waitOnPods(f) && len(f.groups) > 0 },
		text: func(f *nsFacts) []string {
			return one(f.head() + ": " + strings.Join(f.groupTexts(func(objectGroup) bool { return true }), "; ") + ".")
		}},
	{id: "nothing-listable-remains", when: func(f *nsFacts) bool { return f.nothingListed() && f.discoveryIncomplete() },
		text: func(f *nsFacts) []string {
			return one(f.head() + ": nothing remains among the types that could be listed.")
		}},
	{id: "nothing-remains", when: func(f *nsFacts) bool { return f.nothingListed() && !f.discoveryIncomplete() },
		text: func(f *nsFacts) []string { return one(f.head() + ": nothing remains in it that could be listed.") }},
	{id: "namespace-finalizers", when: func(f *nsFacts) bool { return f.terminating },
		text: func(f *nsFacts) []string {
			var out []string
			for _, fz := range f.ns.Finalizers {
				out = append(out, fmt.Sprintf("The namespace itself carries finalizer %s (metadata.finalizers)%s.", fz, f.c.Controllers[fz].Clause()))
			}
			return out
		}},
	{id: "discovery-failed", when: func(f *nsFacts) bool { return f.terminating && f.discovery == discoveryPartial },
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("Discovery failed for %s: the namespace controller cannot know what is left of those types and keeps the namespace.", strings.Join(nsKeys(f.c.Discovery.Failed), ", ")))
		}},
	{id: "apiservice-unavailable", when: func(f *nsFacts) bool { return f.terminating },
		text: func(f *nsFacts) []string {
			var out []string
			for _, a := range f.unavailable {
				out = append(out, fmt.Sprintf("APIService %s is unavailable (%s).", a.Name, a.Reason))
			}
			return out
		}},
	{id: "deletion-failed", when: func(f *nsFacts) bool { return f.terminating },
		text: func(f *nsFacts) []string {
			var out []string
			for _, cond := range f.failedConditions {
				out = append(out, fmt.Sprintf("%s: %s.", cond.Type, strings.TrimSuffix(cond.Message, ".")))
			}
			return out
		}},
	{id: "removal-rejected", when: func(f *nsFacts) bool { return f.terminating && f.removalRejected() },
		text: func(*nsFacts) []string {
			return one("Removing a finalizer by hand would be rejected for some of them (server-side dry run).")
		}},
	{id: "claims-in-use", when: func(f *nsFacts) bool { return f.terminating && f.claimsLooked },
		text: func(f *nsFacts) []string { return one(claimsInUse(f.c)) }},
	{id: "pod-answers", when: func(f *nsFacts) bool { return f.terminating },
		text: func(f *nsFacts) []string {
			var out []string
			for _, p := range f.pods {
				out = append(out, p.Report.Answer)
			}
			return out
		}},
	{id: "kubernetes-finalizer-stays", when: func(f *nsFacts) bool {
		return f.terminating && f.kubernetesFinalizer && f.kubernetesFinalizerHeld()
	}, text: func(*nsFacts) []string {
		return one("The namespace's own kubernetes finalizer stays until that is resolved.")
	}},
	{id: "kubernetes-finalizer-last", when: func(f *nsFacts) bool {
		return f.terminating && f.kubernetesFinalizer && !f.kubernetesFinalizerHeld() && !f.othersOwnFinalizers()
	}, text: func(*nsFacts) []string {
		return one("Only the namespace's own kubernetes finalizer is left, which the namespace controller removes on its next pass.")
	}},
	{id: "kubernetes-finalizer-next-pass", when: func(f *nsFacts) bool {
		return f.terminating && f.kubernetesFinalizer && !f.kubernetesFinalizerHeld() && f.othersOwnFinalizers()
	}, text: func(*nsFacts) []string {
		return one("The namespace's own kubernetes finalizer goes on the namespace controller's next pass; its other finalizers stay until whoever owns each removes it.")
	}},
	{id: "other-spec-finalizers", when: func(f *nsFacts) bool { return f.terminating && len(f.otherSpec) > 0 },
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("Its spec.finalizers also hold %s, which the namespace controller never removes: whoever added it removes it through the finalize subresource, and the namespace stays until then.", strings.Join(f.otherSpec, ", ")))
		}},
}

// nsAnswerSpeaksFor are, by finding id (or its prefix, ending in "."), the
// answer rules whose sentence says what a warning of that finding says:
// each of the namespace's own finalizers has a rule that names it, and
// every leftover type is in the head.
var nsAnswerSpeaksFor = map[string][]string{
	FindNSFinalizers: {"namespace-finalizers", "kubernetes-finalizer-stays", "kubernetes-finalizer-last", "kubernetes-finalizer-next-pass", "other-spec-finalizers"},
	"remaining.":     {"pods-hold-everything", "remaining"},
}

// nsAnswerOf runs the answer table; a warning no sentence spoke for is
// then said in its own words.
func nsAnswerOf(f *nsFacts, findings []Finding) (string, []string) {
	s, fired := sentencesFrom(nsAnswer, f)
	s, fired = weighWarnings(findings, nsAnswerSpeaksFor, s, fired)
	return strings.Join(s, " "), fired
}

// maxHandRemovals is how many by-hand patches the advice spells out; the
// rest are one line, since each is the same patch with the same risk.
const maxHandRemovals = 5

// claimUsersHold: the PVC protection finalizer holds something, its
// controller runs, and pods still use the claims it protects, so deleting
// those pods is the way out.
func (f *nsFacts) claimUsersHold() bool {
	return f.pvcController == Present && f.c.ClaimUsersErr == "" && len(f.claimUsers) > 0
}

var nsAdvice = []adviceRule[*nsFacts]{
	{id: "fix-the-apiservice", when: (*nsFacts).exists, risk: RiskSafe,
		text: func(f *nsFacts) []string {
			var out []string
			for _, a := range f.unavailable {
				step := "fix APIService " + a.Name
				if a.Service != "" {
					step += fmt.Sprintf(" — its backend, service %s, must answer (`kubectl get apiservice %s -o yaml`, then that service's endpoints and pods)", a.Service, a.Name)
				}
				step += fmt.Sprintf(". If that extension was uninstalled for good, deleting the leftover registration (`kubectl delete apiservice %s`) lets discovery and the namespace deletion go on; risk: whatever that extension stored can then no longer be read or cleaned up through the API.", a.Name)
				out = append(out, step)
			}
			return out
		}},
	{id: "nothing-to-do-missing", when: func(f *nsFacts) bool { return !f.exists() }, risk: RiskNothing,
		text: func(*nsFacts) []string { return one("the namespace does not exist.") }},
	{id: "nothing-to-do", when: func(f *nsFacts) bool { return f.notDeleting() && len(f.unavailable) == 0 }, risk: RiskNothing,
		text: func(*nsFacts) []string { return one("the namespace is not being deleted.") }},
	// Pods that keep a protected claim: deleting them is the way out, and
	// the claim's finalizer is never one to remove by hand.
	{id: "delete-the-claim-users", when: func(f *nsFacts) bool { return f.terminating && f.claimUsersHold() }, risk: RiskSafe,
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("delete (or let finish) the pods that still use the claims: %s; the PVC protection controller then removes %s by itself. Do not remove %s by hand: the volume could be deleted under a running pod.", strings.Join(f.claimUsers, ", "), PVCProtection, PVCProtection))
		}},
	// Each other finalizer's step has the risk its controller's presence
	// gives (controllerStep).
	{id: "the-finalizers-controller", when: func(f *nsFacts) bool { return f.terminating }, risk: RiskNote,
		text: func(f *nsFacts) []string {
			var out []string
			for _, h := range f.holders {
				if h.finalizer == PVCProtection && f.claimUsersHold() {
					continue // delete-the-claim-users says it
				}
				by := ""
				if h.manager != "" {
					by = " (added by " + h.manager + ")"
				}
				risk, step := controllerStep(h.finalizer, by, h.ctl, ", and the namespace controller then finishes by itself")
				out = append(out, risk.say(step))
			}
			return out
		}},
	// A spec finalizer other than kubernetes: only its owner removes it.
	{id: "the-spec-finalizers-owner", when: func(f *nsFacts) bool { return f.terminating && len(f.otherSpec) > 0 }, risk: RiskSafe,
		text: func(f *nsFacts) []string {
			var out []string
			for _, fz := range f.otherSpec {
				out = append(out, fmt.Sprintf("bring back whoever added %s to the namespace's spec.finalizers (a controller that watches namespaces), or find out who did; it removes it through the finalize subresource after its cleanup.", fz))
			}
			return out
		}},
	{id: "remove-finalizers-by-hand", when: func(f *nsFacts) bool { return f.terminating }, risk: RiskRisky,
		text: func(f *nsFacts) []string {
			var out []string
			for i, o := range f.handRemovals {
				if i == maxHandRemovals {
					break
				}
				out = append(out, fmt.Sprintf("remove the finalizers of %s %s by hand (`kubectl patch %s %s -n %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`). This drops %s at once, and the cleanup it guards is skipped for good.",
					o.resource, o.name, o.resource, o.name, f.ns.Name, strings.Join(o.finalizers, ", ")))
			}
			return out
		}},
	{id: "more-to-remove-by-hand", when: func(f *nsFacts) bool { return f.terminating && len(f.handRemovals) > maxHandRemovals }, risk: RiskNote,
		text: func(f *nsFacts) []string {
			return one(fmt.Sprintf("(%d more objects carry finalizers: the same patch, one object at a time, with the same risk.)", len(f.handRemovals)-maxHandRemovals))
		}},
	{id: "removal-refused", when: func(f *nsFacts) bool { return f.terminating && f.removalRejected() }, risk: RiskNote,
		text: func(*nsFacts) []string {
			return one("Some finalizer patches would be refused today (see finalizers.dry_run): ask the owner of that webhook or policy; do not disable it to get one namespace out.")
		}},
	{id: "pod-advice", when: func(f *nsFacts) bool { return f.terminating }, risk: RiskNote,
		text: func(f *nsFacts) []string {
			var out []string
			for _, p := range f.pods {
				if len(p.Report.Advice) > 0 {
					out = append(out, fmt.Sprintf("Pod %s: %s (all of its advice: %s/%s)", p.Name, p.Report.Advice[0], PodDir(p.Name), MarkdownFile))
				}
			}
			return out
		}},
	// Never the finalize subresource blind: one of four, by what is left.
	{id: "never-finalize-objects-left", when: func(f *nsFacts) bool { return f.finalizeOnTable() && f.total > 0 }, risk: RiskNote,
		text: func(f *nsFacts) []string {
			return one(f.neverFinalize() + fmt.Sprintf(": here %s. The namespace would vanish, but they stay in storage with no namespace to list them by, the cleanup their finalizers guard never runs, and they come back if a namespace named %s is created again.", count(f.total, "object remains", "objects remain"), f.ns.Name))
		}},
	{id: "never-finalize-discovery-failed", when: func(f *nsFacts) bool {
		return f.finalizeOnTable() && f.total == 0 && f.discoveryIncomplete()
	}, risk: RiskNote,
		text: func(f *nsFacts) []string {
			return one(f.neverFinalize() + ": here discovery failed, so what is left of those types is unknown, to this diagnosis and to the namespace controller alike.")
		}},
	{id: "never-finalize-deletion-failed", when: func(f *nsFacts) bool {
		return f.finalizeOnTable() && f.total == 0 && !f.discoveryIncomplete() && f.deletionFailed()
	}, risk: RiskNote,
		text: func(f *nsFacts) []string {
			return one(f.neverFinalize() + ": here the namespace controller's last pass failed to delete the content (its condition's message says what it could not delete), so something may be left that this diagnosis could not list.")
		}},
	{id: "never-finalize-wait-instead", when: func(f *nsFacts) bool {
		return f.finalizeOnTable() && !f.kubernetesFinalizerHeld()
	}, risk: RiskNote,
		text: func(f *nsFacts) []string {
			return one(f.neverFinalize() + ": here nothing is left that could be listed, so the namespace controller removes it itself on its next pass — wait for it instead.")
		}},
	{id: "nothing-holds-it", when: func(f *nsFacts) bool {
		return f.terminating && !f.kubernetesFinalizerHeld() && len(f.unavailable) == 0 && len(f.ns.Finalizers) == 0
	}, risk: RiskWait,
		text: func(*nsFacts) []string {
			return one("nothing holds the namespace any more; the namespace controller finishes on its next pass.")
		}},
}

// finalizeOnTable: the namespace is being deleted and its own kubernetes
// finalizer is there, the one a person is tempted to clear by hand.
func (f *nsFacts) finalizeOnTable() bool { return f.terminating && f.kubernetesFinalizer }

func (f *nsFacts) neverFinalize() string {
	return fmt.Sprintf("Never remove the namespace's own kubernetes finalizer through the finalize subresource (`kubectl replace --raw /api/v1/namespaces/%s/finalize -f <namespace with spec.finalizers emptied>`) without knowing what is left", f.ns.Name)
}
