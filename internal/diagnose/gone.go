package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/termlab/termlab/internal/redact"
)

// A pod that no longer exists in the API can still have a container on a
// node: a force delete removes the object whatever the kubelet does. Only the
// node can say, and only by the labels the kubelet put on the container
// (io.kubernetes.pod.namespace/name/uid), so diagnose searches the node the
// pod was scheduled to (from its Scheduled event, which outlives the pod by
// the API server's event TTL, an hour by default), or every node it can reach.

// GoneCheck is what Collect found about a pod that does not exist.
type GoneCheck struct {
	// Events are the core/v1 events about any pod of that name (they carry
	// the old UIDs and the node it was assigned to).
	Events []corev1.Event
	// Searched are the nodes asked for containers of the pod, in order.
	Searched []NodeSearch
	// NoNodeNamed: no Scheduled event names the pod's node, and every node
	// was not searched (Source.SearchAllNodes unset): it says how to.
	NoNodeNamed string
}

// NodeSearch is `crictl ps -a` on one node for containers labelled with the pod's name.
type NodeSearch struct {
	Node string
	// Why names where the node came from (a Scheduled event, or "every node reachable").
	Why string
	NodeCheck
	Containers []RuntimeContainer
	// Kubelet is `systemctl is-active kubelet` on that node.
	Kubelet NodeCheck
}

// RuntimeContainer is one container crictl lists.
type RuntimeContainer struct {
	ID        string
	Name      string
	State     string
	PodUID    string
	CreatedAt time.Time
}

// PsFile is the saved crictl ps output for a node.
func PsFile(node string) string { return "node/crictl-ps-" + node + ".json" }

// KubeletFileOf is the saved kubelet state of a node searched for a gone pod.
func KubeletFileOf(node string) string { return "node/kubelet-" + node + ".txt" }

// GoneEventsFile holds the events about pods of the name, whatever their UID.
const GoneEventsFile = "raw/events-by-name.json"

// assigned matches the scheduler's Scheduled event message.
var assigned = regexp.MustCompile(`^Successfully assigned (\S+)/(\S+) to (\S+)`)

// collectGone searches for what is left of a pod that no longer exists.
func collectGone(ctx context.Context, src Source, namespace, name string, raw Raw) *GoneCheck {
	g := &GoneCheck{}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}.AsSelector().String()
	if events, err := src.Client.CoreV1().Events(namespace).List(cctx, metav1.ListOptions{FieldSelector: sel}); err == nil {
		g.Events = events.Items
		raw.put(GoneEventsFile, events)
	} else {
		raw[GoneEventsFile] = errorJSON("listing events of pods named "+name, err)
	}
	cancel()

	var nodes []string
	why := map[string]string{}
	for _, e := range sortedEvents(g.Events) {
		if m := assigned.FindStringSubmatch(e.Message); e.Reason == "Scheduled" && m != nil && m[1] == namespace && m[2] == name {
			if _, seen := why[m[3]]; !seen {
				nodes = append(nodes, m[3])
				why[m[3]] = "named by the Scheduled event of pod UID " + string(e.InvolvedObject.UID)
			}
		}
	}
	switch {
	case len(nodes) > 0:
	case src.SearchAllNodes && src.Nodes != nil:
		for _, n := range src.Nodes(ctx) {
			nodes = append(nodes, n)
			why[n] = "no Scheduled event is left, so every reachable node is searched (-allnodes)"
		}
	case src.Nodes != nil:
		// Each node search may start a privileged pod and wait up to a
		// minute for it: only when asked.
		g.NoNodeNamed = "no Scheduled event is left to name the node it ran on (events expire after an hour), so no node was searched; rerun with -allnodes (kubectl termlab: --all-nodes) to search every node, one after another"
	}
	nodeFor := src.Node
	if nodeFor == nil {
		nodeFor = NoNodeAccess("no node access was given")
	}
	for _, n := range nodes {
		s := NodeSearch{Node: n, Why: why[n]}
		s.Command = fmt.Sprintf("crictl ps -a -o json --label io.kubernetes.pod.namespace=%s --label io.kubernetes.pod.name=%s", namespace, name)
		node, reason := nodeFor(ctx, n)
		if node == nil {
			s.NotChecked = reason
			s.Kubelet.NotChecked = reason
			g.Searched = append(g.Searched, s)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		var stdout, stderr bytes.Buffer
		cmd := node.CommandContext(cctx, "crictl", "ps", "-a", "-o", "json",
			"--label", "io.kubernetes.pod.namespace="+namespace, "--label", "io.kubernetes.pod.name="+name)
		cmd.SetStdout(&stdout)
		cmd.SetStderr(&stderr)
		if err := cmd.Run(); err != nil {
			s.Err = fmt.Sprintf("on node %s: %s: %v: %s", n, s.Command, err, strings.TrimSpace(stderr.String()))
			raw[PsFile(n)] = []byte(s.Err + "\n")
		} else if list, err := ParsePs(stdout.Bytes()); err != nil {
			s.Err = err.Error()
			raw[PsFile(n)] = kept(stdout.Bytes(), redact.Ps)
		} else {
			s.Containers, s.Output = list, fmt.Sprintf("%d containers", len(list))
			raw[PsFile(n)] = kept(stdout.Bytes(), redact.Ps)
		}
		s.Kubelet = kubeletState(cctx, node)
		raw[KubeletFileOf(n)] = s.Kubelet.evidence()
		cancel()
		g.Searched = append(g.Searched, s)
	}
	return g
}

// ParsePs reads `crictl ps -a -o json`.
func ParsePs(raw []byte) ([]RuntimeContainer, error) {
	var doc struct {
		Containers []struct {
			ID       string `json:"id"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			State     string            `json:"state"`
			CreatedAt string            `json:"createdAt"`
			Labels    map[string]string `json:"labels"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing crictl ps output: %w", err)
	}
	var out []RuntimeContainer
	for _, c := range doc.Containers {
		rc := RuntimeContainer{ID: c.ID, Name: c.Metadata.Name, State: c.State, PodUID: c.Labels["io.kubernetes.pod.uid"]}
		// crictl prints createdAt as Unix nanoseconds in a string.
		if ns, err := strconv.ParseInt(c.CreatedAt, 10, 64); err == nil {
			rc.CreatedAt = time.Unix(0, ns).UTC()
		}
		out = append(out, rc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Finding ids of a pod that is gone.
const (
	FindGone = "pod.gone"
)

// FindLeftover is the id of the finding about what one node still has of the pod.
func FindLeftover(node string) string { return "leftover." + node }

// decideGone decides the report of a pod that does not exist.
func decideGone(c Collected, namespace, name string) Report {
	r := Report{Pod: namespace + "/" + name, At: c.At}
	g := c.Gone
	uids := map[string]bool{}
	if g != nil {
		for _, e := range g.Events {
			uids[string(e.InvolvedObject.UID)] = true
		}
	}
	r.Findings = append(r.Findings, Finding{ID: FindGone, Level: Info, Verdict: "gone", Evidence: []string{GoneEventsFile},
		Text: fmt.Sprintf("Pod %s/%s does not exist in the API; %d events about pods of that name remain (UIDs: %s).", namespace, name, eventsCount(g), strings.Join(sortedKeys(uids), ", "))})
	var running, exited []string
	var checked, unchecked []string
	var kubeletDown []string
	for _, s := range searched(g) {
		ev := []string{PsFile(s.Node)}
		switch {
		case s.NotChecked != "":
			unchecked = append(unchecked, s.Node)
			r.Findings = append(r.Findings, Finding{ID: FindLeftover(s.Node), Level: NotChecked, Verdict: "not checked",
				Text: fmt.Sprintf("Node %s (%s) was not searched for the pod's containers: %s.", s.Node, s.Why, s.NotChecked)})
			continue
		case s.Err != "":
			unchecked = append(unchecked, s.Node)
			r.Findings = append(r.Findings, Finding{ID: FindLeftover(s.Node), Level: NotChecked, Verdict: "not checked", Evidence: ev,
				Text: fmt.Sprintf("Searching node %s for the pod's containers failed: %s.", s.Node, s.Err)})
			continue
		}
		checked = append(checked, s.Node)
		var run, done []string
		for _, rc := range s.Containers {
			desc := fmt.Sprintf("%s (%s, pod UID %s)", rc.Name, short(rc.ID), rc.PodUID)
			if rc.State == ContainerRunning {
				run = append(run, desc)
			} else {
				done = append(done, desc+" "+strings.TrimPrefix(rc.State, "CONTAINER_"))
			}
		}
		k := ""
		if s.Kubelet.Checked() {
			k = fmt.Sprintf("; the kubelet there is %s", s.Kubelet.Output)
			if s.Kubelet.Output != "active" {
				kubeletDown = append(kubeletDown, s.Node)
			}
			ev = append(ev, KubeletFileOf(s.Node))
		}
		switch {
		case len(run) > 0:
			running = append(running, fmt.Sprintf("%s on %s", strings.Join(run, ", "), s.Node))
			r.Findings = append(r.Findings, Finding{ID: FindLeftover(s.Node), Level: Blocking, Verdict: "running", Evidence: ev,
				Text: fmt.Sprintf("On node %s (%s) crictl lists running container %s, though no pod object exists%s: its process outlived its API object.", s.Node, s.Why, strings.Join(run, ", "), k)})
		case len(done) > 0:
			exited = append(exited, s.Node)
			r.Findings = append(r.Findings, Finding{ID: FindLeftover(s.Node), Level: Info, Verdict: "exited", Evidence: ev,
				Text: fmt.Sprintf("On node %s (%s) the pod's containers have all exited: %s%s.", s.Node, s.Why, strings.Join(done, ", "), k)})
		default:
			r.Findings = append(r.Findings, Finding{ID: FindLeftover(s.Node), Level: Info, Verdict: "none", Evidence: ev,
				Text: fmt.Sprintf("On node %s (%s) crictl lists no container of the pod%s.", s.Node, s.Why, k)})
		}
	}

	s := []string{fmt.Sprintf("Pod %s/%s does not exist in the API.", namespace, name)}
	if eventsCount(g) == 0 {
		// A mistyped name lands here too: say so before anything else.
		s = append(s, fmt.Sprintf("No event names a pod of that name either: if it was deleted over an hour ago its events have expired; otherwise check the name and namespace (`kubectl get pods -n %s`).", namespace))
	}
	switch {
	case len(running) > 0:
		s = append(s, fmt.Sprintf("Its container still runs: %s. The object was removed (a force delete, or the pod GC) while nothing on the node stopped the process.", strings.Join(running, "; ")))
		if len(kubeletDown) > 0 {
			s = append(s, fmt.Sprintf("The kubelet on %s is not running, so nothing will stop it until the kubelet starts.", strings.Join(kubeletDown, ", ")))
		}
	case len(checked) > 0 && len(unchecked) == 0:
		s = append(s, fmt.Sprintf("No container of it runs on %s (crictl).", strings.Join(checked, ", ")))
	case len(checked) == 0 && len(unchecked) == 0 && g != nil && g.NoNodeNamed != "":
		s = append(s, "Whether a container of it still runs was not checked: "+g.NoNodeNamed+".")
	case len(checked) == 0 && len(unchecked) == 0:
		s = append(s, "No node to search is known (no Scheduled event remains and no node list was given), so whether a container of it still runs was not checked.")
	default:
		s = append(s, fmt.Sprintf("Whether a container of it still runs was not checked on %s%s.", strings.Join(unchecked, ", "), firstNotChecked(g)))
	}
	r.Answer = strings.Join(s, " ")

	switch {
	case len(running) > 0 && len(kubeletDown) > 0:
		r.Advice = append(r.Advice, RiskSafe.say(fmt.Sprintf("start the kubelet on %s (`systemctl start kubelet` on the node). It kills containers of pods that no longer exist at once (SIGKILL: the grace period went with the object).", strings.Join(kubeletDown, ", "))))
	case len(running) > 0:
		r.Advice = append(r.Advice, "The kubelet is active and should kill the container of a pod that no longer exists within seconds; diagnose again. If it stays, read the kubelet's log (journalctl -u kubelet on the node), then stop it by hand (`crictl stop <id>` on the node).")
	}
	if len(running) > 0 {
		r.Advice = append(r.Advice, RiskDangerous.say("a replacement with the same identity (a StatefulSet's pod of the same name) may already run elsewhere, so until the old process stops two may write the same data. Fence the node or stop the old process before trusting the new one."))
	}
	if len(unchecked) > 0 {
		r.Advice = append(r.Advice, RiskUnknown.say("look on the node (crictl ps -a --label io.kubernetes.pod.name=<name>), or rerun with the node access the not-checked finding names, before assuming the process is gone."))
	}
	if len(r.Advice) == 0 {
		r.Advice = append(r.Advice, RiskNothing.say("the object is gone and no process of it runs on the nodes searched."))
	}
	return r
}

func searched(g *GoneCheck) []NodeSearch {
	if g == nil {
		return nil
	}
	return g.Searched
}

func eventsCount(g *GoneCheck) int {
	if g == nil {
		return 0
	}
	return len(g.Events)
}

func firstNotChecked(g *GoneCheck) string {
	for _, s := range searched(g) {
		if s.NotChecked != "" {
			return " (" + s.NotChecked + ")"
		}
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}
