package mutants

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/workloadlog"
)

// dropMutants each leave one watch event out: of a pod, of a node's Ready
// condition, of the namespace's Kubernetes Events. An event that repeats
// the state before it (only its resourceVersion is new) is not dropped:
// what the watch showed would not change.
func dropMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	podRepeats := repeats(len(rec.PodEvents), podObject(rec), func(i, j int) bool { return samePodState(rec.PodEvents[i], rec.PodEvents[j]) })
	nodeRepeats := repeats(len(rec.NodeEvents), nodeObject(rec), func(i, j int) bool { return sameNodeState(rec.NodeEvents[i], rec.NodeEvents[j]) })
	for i, e := range rec.PodEvents {
		if podRepeats[i] {
			continue
		}
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s pod event %d (%s %s)", OpDrop, i, e.Type, e.Name),
			func(r *evidence.Record) { r.PodEvents = slices.Delete(r.PodEvents, i, i+1) }})
	}
	for i, e := range rec.NodeEvents {
		if nodeRepeats[i] {
			continue
		}
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s node event %d (%s %s Ready=%s)", OpDrop, i, e.Type, e.Name, e.Ready),
			func(r *evidence.Record) { r.NodeEvents = slices.Delete(r.NodeEvents, i, i+1) }})
	}
	for i, e := range rec.KubeEvents {
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s kube event %d (%s %s)", OpDrop, i, e.Reason, e.Object),
			func(r *evidence.Record) { r.KubeEvents = slices.Delete(r.KubeEvents, i, i+1) }})
	}
	for i, e := range rec.EndpointSlices {
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s endpointslice event %d (%s %s)", OpDrop, i, e.Type, e.Service),
			func(r *evidence.Record) { r.EndpointSlices = slices.Delete(r.EndpointSlices, i, i+1) }})
	}
	for i, e := range rec.NamespaceEvents {
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s namespace event %d (%s %s)", OpDrop, i, e.Type, e.Name),
			func(r *evidence.Record) { r.NamespaceEvents = slices.Delete(r.NamespaceEvents, i, i+1) }})
	}
	for i, e := range rec.Journal {
		out = append(out, Mutant{OpDrop, fmt.Sprintf("%s journal entry %d (%s on %s: %s)", OpDrop, i, e.Unit, e.Node, journalGist(e.Message)),
			func(r *evidence.Record) { r.Journal = slices.Delete(r.Journal, i, i+1) }})
	}
	return out
}

// journalGist names a journal entry by its first words (no times or IDs,
// so a recorded-again run keeps most names): "E nestedpendingoperations.go"
// for a kubelet line, the first two words otherwise.
func journalGist(msg string) string {
	f := strings.Fields(msg)
	switch {
	case len(f) >= 4 && len(f[0]) == 5 && strings.HasSuffix(f[3], "]"):
		return f[0][:1] + " " + strings.TrimSuffix(f[3], "]")
	case len(f) >= 2:
		return f[0] + " " + f[1]
	}
	return msg
}

// requestTargets are the targets of the record's requests, in first-seen order.
func requestTargets(rec *evidence.Record) []string {
	var out []string
	for _, q := range rec.Requests {
		if !slices.Contains(out, q.Target) {
			out = append(out, q.Target)
		}
	}
	return out
}

// requestFlips turn, per target, its first failed request into an answered
// one, every failed request into answered ones, and the answered request
// halfway through its requests into a refused one: a failure hidden, all of
// them hidden, and one the deletion did not cause.
func requestFlips(rec *evidence.Record) []Mutant {
	var out []Mutant
	for _, target := range requestTargets(rec) {
		var ok []int
		firstFailed := -1
		for i, q := range rec.Requests {
			switch {
			case q.Target != target:
			case q.Failed() && firstFailed < 0:
				firstFailed = i
			case !q.Failed():
				ok = append(ok, i)
			}
		}
		flip := func(i int, to string) {
			q := rec.Requests[i]
			out = append(out, Mutant{OpFlip, fmt.Sprintf("%s request %d (%s seq %d) %s→%s", OpFlip, i, target, q.Seq, q.Outcome, to),
				func(r *evidence.Record) {
					r.Requests[i].Outcome = to
					if to != workloadlog.OutcomeOK {
						r.Requests[i].Backend = ""
					}
				}})
		}
		if firstFailed >= 0 {
			flip(firstFailed, workloadlog.OutcomeOK)
			// Every failure of the target answered: what a deletion cost,
			// gone from the client's log.
			out = append(out, Mutant{OpFlip, fmt.Sprintf("%s every failed request to %s →ok", OpFlip, target),
				func(r *evidence.Record) {
					for i := range r.Requests {
						if r.Requests[i].Target == target && r.Requests[i].Failed() {
							r.Requests[i].Outcome = workloadlog.OutcomeOK
						}
					}
				}})
		}
		if len(ok) > 0 {
			flip(ok[len(ok)/2], workloadlog.OutcomeRefused)
		}
	}
	return out
}

// swapMutants each exchange two consecutive watch events of one object
// (a pod by its UID, a node by its name): what they said arrives in the
// other order, at the same times, so the stream stays in time order. Two
// events of the same state are not swapped: nothing but resourceVersions
// would change.
func swapMutants(rec *evidence.Record) []Mutant {
	var out []Mutant
	for _, p := range adjacentPairs(len(rec.NamespaceEvents), func(i int) string { return rec.NamespaceEvents[i].Name }) {
		a, b := rec.NamespaceEvents[p[0]], rec.NamespaceEvents[p[1]]
		out = append(out, Mutant{OpSwap, fmt.Sprintf("%s namespace events %d and %d (%s: %s, %s)", OpSwap, p[0], p[1], a.Name, a.Type, b.Type),
			func(r *evidence.Record) {
				x, y := &r.NamespaceEvents[p[0]], &r.NamespaceEvents[p[1]]
				*x, *y = *y, *x
				x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
			}})
	}
	for _, p := range adjacentPairs(len(rec.PodEvents), podObject(rec)) {
		a, b := rec.PodEvents[p[0]], rec.PodEvents[p[1]]
		if samePodState(a, b) {
			continue
		}
		out = append(out, Mutant{OpSwap, fmt.Sprintf("%s pod events %d and %d (%s: %s, %s)", OpSwap, p[0], p[1], a.Name, a.Type, b.Type),
			func(r *evidence.Record) {
				x, y := &r.PodEvents[p[0]], &r.PodEvents[p[1]]
				*x, *y = *y, *x
				x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
			}})
	}
	for _, p := range adjacentPairs(len(rec.NodeEvents), nodeObject(rec)) {
		a, b := rec.NodeEvents[p[0]], rec.NodeEvents[p[1]]
		if sameNodeState(a, b) {
			continue
		}
		out = append(out, Mutant{OpSwap, fmt.Sprintf("%s node events %d and %d (%s: Ready=%s, Ready=%s)", OpSwap, p[0], p[1], a.Name, a.Ready, b.Ready),
			func(r *evidence.Record) {
				x, y := &r.NodeEvents[p[0]], &r.NodeEvents[p[1]]
				*x, *y = *y, *x
				x.ObservedAt, y.ObservedAt = y.ObservedAt, x.ObservedAt
			}})
	}
	return out
}

func podObject(rec *evidence.Record) func(int) string {
	return func(i int) string { return rec.PodEvents[i].UID + "/" + rec.PodEvents[i].Name }
}

func nodeObject(rec *evidence.Record) func(int) string {
	return func(i int) string { return rec.NodeEvents[i].Name }
}

// samePodState: the two events say the same of the pod but for their
// resourceVersion (and the whole object kept beside).
func samePodState(a, b evidence.PodEvent) bool {
	a.ResourceVersion, b.ResourceVersion = "", ""
	return a.Type == b.Type && reflect.DeepEqual(a.PodState, b.PodState)
}

// sameNodeState: the two events say the same of the node's Ready condition and taints.
func sameNodeState(a, b evidence.NodeEvent) bool {
	return a.Ready == b.Ready && a.Reason == b.Reason && slices.Equal(a.Taints, b.Taints)
}

// repeats marks the items that say the same as the item before them of
// the same object.
func repeats(n int, object func(int) string, same func(i, j int) bool) []bool {
	out := make([]bool, n)
	last := map[string]int{}
	for i := range n {
		if j, ok := last[object(i)]; ok && same(j, i) {
			out[i] = true
		}
		last[object(i)] = i
	}
	return out
}

// adjacentPairs are the index pairs of consecutive items of one object.
func adjacentPairs(n int, object func(i int) string) [][2]int {
	var out [][2]int
	last := map[string]int{}
	for i := range n {
		if j, ok := last[object(i)]; ok {
			out = append(out, [2]int{j, i})
		}
		last[object(i)] = i
	}
	slices.SortStableFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
	return out
}

// flipMutants each turn one observed container state running ↔ exited: a
// crictl look, or a container's state in the pod watch event that first
// reported it (a later event repeating it is not flipped). A running
// container that is made exited gets an exit (code 0, at the observation);
// an exited one made running loses it.
func flipMutants(rec *evidence.Record) []Mutant {
	out := requestFlips(rec)
	for i, o := range rec.Containers {
		var to string
		switch o.State {
		case evidence.ContainerRunning:
			to = evidence.ContainerExited
		case evidence.ContainerExited:
			to = evidence.ContainerRunning
		default:
			continue
		}
		out = append(out, Mutant{OpFlip, fmt.Sprintf("%s crictl look %d (%s, step %q) %s→%s", OpFlip, i, o.Pod, o.Step, o.State, to),
			func(r *evidence.Record) {
				o := &r.Containers[i]
				o.State = to
				if to == evidence.ContainerExited {
					at, code := o.ObservedAt, int32(0)
					o.FinishedAt, o.ExitCode = &at, &code
				} else {
					o.FinishedAt, o.ExitCode, o.Reason = nil, nil, ""
				}
			}})
	}
	for i, l := range rec.Mounts {
		mounted := len(l.Mounted) > 0
		out = append(out, Mutant{OpFlip, fmt.Sprintf("%s mount look %d (%s, %q) mounted %v→%v", OpFlip, i, l.Node, l.Why, mounted, !mounted),
			func(r *evidence.Record) {
				if mounted {
					r.Mounts[i].Mounted = nil
				} else {
					r.Mounts[i].Mounted = []string{"0 0 0:0 / " + l.Dir + " rw - tmpfs tmpfs rw"}
				}
			}})
		to := "active"
		if l.HolderState == "active" {
			to = "inactive"
		}
		out = append(out, Mutant{OpFlip, fmt.Sprintf("%s mount look %d (%s, %q) holder %s→%s", OpFlip, i, l.Node, l.Why, l.HolderState, to),
			func(r *evidence.Record) {
				r.Mounts[i].HolderState = to
				if to == "active" {
					r.Mounts[i].HolderPID, r.Mounts[i].HolderCwd = 1, l.Dir
				} else {
					r.Mounts[i].HolderPID, r.Mounts[i].HolderCwd = 0, ""
				}
			}})
	}
	prevState := map[string]string{} // by pod UID and container
	for i, e := range rec.PodEvents {
		for j, c := range e.Containers {
			key := e.UID + "/" + e.Name + "/" + c.Name
			if prevState[key] == c.State {
				continue
			}
			prevState[key] = c.State
			var to string
			switch c.State {
			case "running":
				to = "terminated"
			case "terminated":
				to = "running"
			default:
				continue
			}
			out = append(out, Mutant{OpFlip, fmt.Sprintf("%s pod event %d (%s %s) container %s %s→%s", OpFlip, i, e.Type, e.Name, c.Name, c.State, to),
				func(r *evidence.Record) {
					cs := r.PodEvents[i].Containers
					c := &cs[j]
					c.State = to
					if to == "terminated" {
						at, code := r.PodEvents[i].ObservedAt, int32(0)
						c.FinishedAt, c.ExitCode, c.Reason = &at, &code, "Completed"
					} else {
						c.FinishedAt, c.ExitCode, c.Reason = nil, nil, ""
					}
					r.PodEvents[i].Containers = cs
				}})
		}
	}
	return out
}

// exitCodes are the codes an exit-code mutant moves between: a clean exit,
// SIGKILL (128+9) and SIGTERM unhandled (128+15).
var exitCodes = []int32{0, 137, 143}

// exitCodeMutants each change the exit code of one container, everywhere
// the record states it (crictl and the pod's status), to each of the other
// codes.
func exitCodeMutants(rec *evidence.Record) []Mutant {
	type exit struct {
		id, pod string
		code    int32
	}
	var exits []exit
	seen := map[exit]bool{}
	note := func(id, pod string, code *int32) {
		if code == nil || id == "" || !slices.Contains(exitCodes, *code) {
			return
		}
		e := exit{id, pod, *code}
		if !seen[e] {
			seen[e] = true
			exits = append(exits, e)
		}
	}
	for _, o := range rec.Containers {
		note(o.ContainerID, o.Pod, o.ExitCode)
	}
	for _, e := range rec.PodEvents {
		for _, c := range e.Containers {
			note(c.ContainerID, e.Name, c.ExitCode)
		}
	}
	// A container is named by its pod and its place among the pod's
	// containers (1, 2, … as first seen), not by its ID: names stay the same
	// when the lab's reference run is recorded again.
	ordinal, perPod := map[string]int{}, map[string]int{}
	for _, e := range exits {
		if ordinal[e.id] == 0 {
			perPod[e.pod]++
			ordinal[e.id] = perPod[e.pod]
		}
	}
	var out []Mutant
	for _, e := range exits {
		for _, to := range exitCodes {
			if to == e.code {
				continue
			}
			out = append(out, Mutant{OpExitCode, fmt.Sprintf("%s of pod %s's container %d %d→%d", OpExitCode, e.pod, ordinal[e.id], e.code, to),
				func(r *evidence.Record) {
					change := func(id string, code **int32) {
						if id == e.id && *code != nil && **code == e.code {
							c := to
							*code = &c
						}
					}
					for i := range r.Containers {
						change(r.Containers[i].ContainerID, &r.Containers[i].ExitCode)
					}
					for i := range r.PodEvents {
						cs := r.PodEvents[i].Containers
						for j := range cs {
							change(cs[j].ContainerID, &cs[j].ExitCode)
						}
						r.PodEvents[i].Containers = cs
					}
				}})
		}
	}
	return out
}

// gapMutants each put one watch gap over one step of the run: the watch
// was down and came back by a re-list, so what happened in the step may
// have been lost (evidence.WatchGap). One per watch the run kept (pods
// always; the nodes' and the namespace's Events when the record has any)
// and step.
func gapMutants(rec *evidence.Record) []Mutant {
	sources := []string{evidence.WatchPods}
	if len(rec.NodeEvents) > 0 {
		sources = append(sources, evidence.WatchNodes)
	}
	if len(rec.KubeEvents) > 0 {
		sources = append(sources, evidence.WatchEvents)
	}
	if len(rec.NamespaceEvents) > 0 {
		sources = append(sources, evidence.WatchNamespaces)
	}
	var out []Mutant
	for _, src := range sources {
		for i, s := range rec.Steps {
			if s.StartedAt.IsZero() || !s.FinishedAt.After(s.StartedAt) {
				continue
			}
			gap := evidence.WatchGap{Source: src, From: s.StartedAt, To: s.FinishedAt,
				Why: "mutant: the watch was down and came back by a re-list; what changed in between may be lost"}
			out = append(out, Mutant{OpGap, fmt.Sprintf("%s in the %s watch over step %d (%s)", OpGap, src, i, s.Name),
				func(r *evidence.Record) {
					r.Gaps = append(r.Gaps, gap)
					slices.SortStableFunc(r.Gaps, func(a, b evidence.WatchGap) int { return a.From.Compare(b.From) })
				}})
		}
	}
	return out
}
