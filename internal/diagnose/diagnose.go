// Package diagnose says why one pod is still there, or what its deletion is
// waiting for, from evidence read off a live cluster. It has two halves:
// Collect reads (client-go GETs and LISTs, a server-side dry-run patch, and
// node commands where node access is given) and changes nothing; Decide is
// pure: Collected in, findings, an answer and advice out, so every finding is
// unit-tested on constructed objects. Write renders the report folder.
package diagnose

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Collected is everything Decide reads: raw API objects as the server
// returned them, and what the node said (or why it was not asked).
type Collected struct {
	// At is when the evidence was read; ages and deadlines count from it.
	At time.Time
	// Namespace and Name are the pod asked about.
	Namespace, Name string
	// Gone is the search for what is left of a pod that does not exist.
	Gone *GoneCheck
	// Pod is the pod; nil when it does not exist.
	Pod *corev1.Pod
	// Node and Lease are the pod's node and its kube-node-lease Lease; nil
	// when the pod is not scheduled, or when they do not exist.
	Node  *corev1.Node
	Lease *coordinationv1.Lease
	// NodeGone: the API answered NotFound for the pod's node. NodeErr and
	// LeaseErr say why the node or its Lease could not be read otherwise
	// (RBAC, a timeout): then nothing is known of it, least of all that it
	// is gone.
	NodeGone          bool
	NodeErr, LeaseErr string
	// ControllerManager is kube-controller-manager's leader Lease, read when
	// the node is gone: its pod garbage collector deletes such pods.
	ControllerManager ControllerCheck
	// Events are the core/v1 events about the pod.
	Events []corev1.Event
	// Controllers are what Collect found of the controllers that could remove
	// each finalizer, by finalizer name.
	Controllers map[string]ControllerCheck
	// DryRun is the server-side dry-run patch that removes every finalizer.
	DryRun DryRun
	// Kubelet is `systemctl is-active kubelet` on the pod's node.
	Kubelet NodeCheck
	// Volumes are the pod's persistent volumes and their attachments.
	Volumes Volumes
	// Containers are crictl's word on each container of the pod's status.
	Containers []ContainerCheck
}

// NodeCheck is one command on the pod's node.
type NodeCheck struct {
	// NotChecked says why the node was not asked ("" when it was).
	NotChecked string
	// Command is what ran, as a person would type it after docker exec.
	Command string
	// Output is its trimmed stdout (for the kubelet: active, inactive …).
	Output string
	// Err is the command's failure that says nothing about the answer.
	Err string
	// Raw is the command's whole output, for the evidence folder.
	Raw string `json:"-"`
}

// evidence is the saved file: the command, what it printed, and its failure.
func (c NodeCheck) evidence() []byte {
	out := c.Raw
	if out == "" {
		out = c.Output
	}
	s := "$ " + c.Command + "\n" + strings.TrimRight(out, "\n") + "\n"
	if c.Err != "" {
		s += c.Err + "\n"
	}
	if c.NotChecked != "" {
		s += "not checked: " + c.NotChecked + "\n"
	}
	return []byte(s)
}

// Checked reports whether the command ran and answered.
func (c NodeCheck) Checked() bool { return c.NotChecked == "" && c.Err == "" }

// ContainerCheck is `crictl inspect <id>` for one container of the pod.
type ContainerCheck struct {
	Name string
	ID   string // without the runtime prefix
	NodeCheck
	// State is crictl's state (CONTAINER_RUNNING, CONTAINER_EXITED …), or
	// NOT_FOUND when crictl answered that the container does not exist.
	State    string
	ExitCode int32
	PID      int
}

// Container states as crictl names them (plus NotFound for crictl's NotFound).
const (
	ContainerRunning  = "CONTAINER_RUNNING"
	ContainerExited   = "CONTAINER_EXITED"
	ContainerNotFound = "NOT_FOUND"
)

// ControllerCheck is what Collect found of a controller that could remove a finalizer.
type ControllerCheck struct {
	// Manager is the managedFields manager that added the finalizer.
	Manager string
	// Present: a running pod or a fresh leader Lease that looks like the
	// controller was found; Evidence names it. Unknown when nothing could say.
	Present  Presence
	Evidence string
}

// Presence is whether a finalizer's controller seems to run.
type Presence string

// Presence values.
const (
	Present Presence = "present"
	Absent  Presence = "absent"
	Unknown Presence = "unknown"
	// Failing: the controller's pods are there but not well (not Ready,
	// restarting, CrashLoopBackOff), or it runs and reports Warnings about
	// the held object.
	Failing Presence = "failing"
)

// presenceWords are how a finding (sentence) and the answer (clause, after
// "held by finalizer X") say each presence; the evidence follows.
var presenceWords = map[Presence]struct{ sentence, clause string }{
	Present: {"A controller that could remove it runs", ", whose controller runs"},
	Failing: {"Its controller is running, but failing", ", whose controller is running, but failing"},
	Absent:  {"No controller that could remove it runs", ", whose controller is not running"},
	Unknown: {"Whether a controller that could remove it runs was not checked", "; whether a controller that removes it runs was not checked"},
}

func (c ControllerCheck) words() (sentence, clause string) {
	w, ok := presenceWords[c.Present]
	if !ok {
		w = presenceWords[Unknown]
	}
	return w.sentence, w.clause
}

// Sentence is the check as a finding says it.
func (c ControllerCheck) Sentence() string {
	s, _ := c.words()
	if c.Evidence == "" {
		return s + "."
	}
	return s + ": " + c.Evidence + "."
}

// Clause is the check as the answer says it, after "held by finalizer X".
func (c ControllerCheck) Clause() string {
	_, s := c.words()
	if c.Evidence == "" {
		return s
	}
	return s + " (" + c.Evidence + ")"
}

// DryRun is the result of the dry-run patch that removes the finalizers.
type DryRun struct {
	// Skipped says why no dry run was sent ("" when it was).
	Skipped string `json:"skipped,omitempty"`
	// Patch is the merge patch sent with dryRun=All.
	Patch string `json:"patch,omitempty"`
	// Err is the server's refusal ("" when accepted).
	Err string `json:"error,omitempty"`
	// Code is the HTTP status of a refusal.
	Code int32 `json:"code,omitempty"`
}

// Level says how much a finding matters for the question "why is it still there".
type Level string

// Levels of findings.
const (
	// Blocking holds the pod's deletion up (or would, once requested).
	Blocking Level = "blocking"
	// Warning is a fact a person must weigh before acting.
	Warning Level = "warning"
	// Info is a fact that holds nothing up.
	Info Level = "info"
	// NotChecked: the evidence could not be read.
	NotChecked Level = "not-checked"
)

// Finding is one thing decided, with the evidence it rests on.
type Finding struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Verdict is the finding's one-word answer (requested, held, NotReady, running …).
	Verdict string `json:"verdict"`
	Text    string `json:"text"`
	// Evidence names the saved files and the fields read from them.
	Evidence []string `json:"evidence"`
}

// Report is what Decide returns: answer first, then findings, then advice.
type Report struct {
	Pod      string    `json:"pod"`
	Node     string    `json:"node,omitempty"`
	At       time.Time `json:"at"`
	Answer   string    `json:"answer"`
	Findings []Finding `json:"findings"`
	Advice   []string  `json:"advice"`
}

// Finding returns the finding with the id.
func (r Report) Finding(id string) (Finding, bool) {
	for _, f := range r.Findings {
		if f.ID == id {
			return f, true
		}
	}
	return Finding{}, false
}

// Evidence file names in the report folder, which findings cite.
const (
	PodFile    = "raw/pod.json"
	NodeFile   = "raw/node.json"
	LeaseFile  = "raw/lease.json"
	EventsFile = "raw/events.json"
	DryRunFile = "raw/dry-run.json"
	// ControllerManagerFile is kube-controller-manager's leader Lease.
	ControllerManagerFile = "raw/lease-kube-controller-manager.json"
	KubeletFile           = "node/kubelet.txt"
)

// ContainerFile is the saved crictl output for a container.
func ContainerFile(id string) string { return "node/crictl-inspect-" + short(id) + ".json" }

// Finding ids.
const (
	FindDeletion    = "deletion"
	FindNodeReady   = "node.ready"
	FindNodeLease   = "node.lease"
	FindNodeTaints  = "node.taints"
	FindKubelet     = "node.kubelet"
	FindTermination = "termination"
	FindDryRun      = "finalizers.dry_run"
)

// FindFinalizer is the id of a finalizer's finding.
func FindFinalizer(name string) string { return "finalizer." + name }

// FindContainer is the id of a container's finding.
func FindContainer(name string) string { return "container." + name }

// Bounds the findings compare with, each from the mechanism it stands for.
const (
	// leaseStale: a kubelet renews its node Lease every 10 s (a tenth of
	// its 40 s lease duration); three missed renewals mean it is not renewing.
	leaseStale = 30 * time.Second
)

// Decide decides the findings from the collected evidence. It never talks to
// the cluster.
func Decide(c Collected) Report {
	d := decider{c: c}
	return d.decide()
}

type decider struct {
	c        Collected
	findings []Finding
}

func (d *decider) add(f Finding) { d.findings = append(d.findings, f) }

func (d *decider) decide() Report {
	c := d.c
	if c.Pod == nil {
		return decideGone(c, c.Namespace, c.Name)
	}
	pod := c.Pod
	r := Report{Pod: pod.Namespace + "/" + pod.Name, Node: pod.Spec.NodeName, At: c.At}
	d.deletion()
	d.finalizers()
	d.node()
	d.containers()
	d.termination()
	d.dryRun()
	d.volumes()
	r.Findings = d.findings
	r.Answer = d.answer()
	r.Advice = d.advice()
	return r
}

// deadline is when the grace period ends: the API server sets
// deletionTimestamp to the request time plus the grace period.
func deadline(p *corev1.Pod) (requested, deadline time.Time, grace int64) {
	deadline = p.DeletionTimestamp.Time
	if p.DeletionGracePeriodSeconds != nil {
		grace = *p.DeletionGracePeriodSeconds
	}
	return deadline.Add(-time.Duration(grace) * time.Second), deadline, grace
}

func (d *decider) deletion() {
	p := d.c.Pod
	ev := []string{PodFile + ": metadata.deletionTimestamp, metadata.deletionGracePeriodSeconds"}
	if p.DeletionTimestamp == nil {
		d.add(Finding{ID: FindDeletion, Level: Info, Verdict: "not requested", Evidence: ev,
			Text: "No deletion was requested: the pod has no deletionTimestamp."})
		return
	}
	requested, dl, grace := deadline(p)
	past := d.c.At.Sub(dl)
	// A later delete with a shorter grace period (a force delete) moves
	// deletionTimestamp earlier: "requested" is the last such request.
	text := fmt.Sprintf("Deletion requested at about %s (the latest request that shortened it) with a %d s grace period: the grace deadline (deletionTimestamp) is %s, ",
		requested.UTC().Format(time.RFC3339), grace, dl.UTC().Format(time.RFC3339))
	level := Info
	if past > 0 {
		text += fmt.Sprintf("passed %s ago.", round(past))
		level = Blocking
	} else {
		text += fmt.Sprintf("%s from now: the kubelet may still be stopping the containers.", round(-past))
	}
	d.add(Finding{ID: FindDeletion, Level: level, Verdict: "requested", Text: text, Evidence: ev})
}

func (d *decider) finalizers() {
	p := d.c.Pod
	for _, f := range p.Finalizers {
		ctl := d.c.Controllers[f]
		manager := ctl.Manager
		if manager == "" {
			manager = FinalizerManager(p, f)
		}
		who := "no managedFields entry names who added it"
		if manager != "" {
			who = "added by " + manager + " (managedFields manager)"
		}
		verdict, level := "set", Warning
		if p.DeletionTimestamp != nil {
			verdict, level = "holds the object", Blocking
		}
		text := fmt.Sprintf("Finalizer %s is set, %s. ", f, who) + ctl.Sentence()
		if p.DeletionTimestamp != nil {
			text += " The API server keeps the object until it is removed, whatever the grace period."
		}
		d.add(Finding{ID: FindFinalizer(f), Level: level, Verdict: verdict, Text: text,
			Evidence: []string{PodFile + ": metadata.finalizers, metadata.managedFields"}})
	}
}

// FinalizerManager is the managedFields manager whose fieldsV1 owns the
// finalizer ("" if none does).
func FinalizerManager(p *corev1.Pod, finalizer string) string {
	return ManagerOf(p.ManagedFields, finalizer)
}

// ManagerOf is the manager among managedFields whose fieldsV1 owns the
// finalizer ("" if none does); it works on any object's metadata.
func ManagerOf(managedFields []metav1.ManagedFieldsEntry, finalizer string) string {
	// fieldsV1 lists a set member as the JSON key "v:\"<value>\"".
	needle := `v:\"` + finalizer + `\"`
	for _, mf := range managedFields {
		if mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), needle) {
			return mf.Manager
		}
	}
	return ""
}

func (d *decider) node() {
	c := d.c
	p := c.Pod
	if p.Spec.NodeName == "" {
		d.add(Finding{ID: FindNodeReady, Level: Info, Verdict: "unscheduled", Evidence: []string{PodFile + ": spec.nodeName"},
			Text: "The pod was never scheduled: no kubelet has to stop anything, and a deletion needs nobody but the API server (and its finalizers)."})
		return
	}
	node := p.Spec.NodeName
	switch {
	case c.NodeErr != "":
		d.add(Finding{ID: FindNodeReady, Level: NotChecked, Verdict: "not checked", Evidence: []string{NodeFile},
			Text: fmt.Sprintf("Node %s was not checked: %s. Nothing is known of it: not whether it is Ready, nor that it exists.", node, c.NodeErr)})
	case c.NodeGone:
		d.add(Finding{ID: FindNodeReady, Level: Blocking, Verdict: "missing", Evidence: []string{PodFile + ": spec.nodeName", NodeFile},
			Text: fmt.Sprintf("Node %s does not exist (the API answered NotFound): no kubelet will finish the deletion. %s", node, d.podGC())})
	case c.Node == nil:
		d.add(Finding{ID: FindNodeReady, Level: NotChecked, Verdict: "not checked", Text: fmt.Sprintf("Node %s was not read.", node)})
	default:
		ready := condition(c.Node, corev1.NodeReady)
		switch {
		case ready == nil:
			d.add(Finding{ID: FindNodeReady, Level: Warning, Verdict: "unknown", Evidence: []string{NodeFile + ": status.conditions"},
				Text: fmt.Sprintf("Node %s reports no Ready condition.", node)})
		case ready.Status == corev1.ConditionTrue:
			d.add(Finding{ID: FindNodeReady, Level: Info, Verdict: "Ready", Evidence: []string{NodeFile + ": status.conditions[Ready]"},
				Text: fmt.Sprintf("Node %s is Ready (last heartbeat %s ago).", node, round(c.At.Sub(ready.LastHeartbeatTime.Time)))})
		default:
			d.add(Finding{ID: FindNodeReady, Level: Blocking, Verdict: "NotReady", Evidence: []string{NodeFile + ": status.conditions[Ready]"},
				Text: fmt.Sprintf("Node %s is NotReady (Ready=%s since %s ago, reason %s: %s).", node, ready.Status,
					round(c.At.Sub(ready.LastTransitionTime.Time)), ready.Reason, ready.Message)})
		}
		d.taints()
	}
	d.lease()
	d.kubelet()
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
func (d *decider) podGC() string {
	p := d.c.Pod
	s := fmt.Sprintf("The pod garbage collector (in kube-controller-manager) force-deletes pods bound to a node that no longer exists, within %s of the node going (a %s quarantine, a sweep every %s)", podGCQuarantine+podGCSweep, podGCQuarantine, podGCSweep)
	cm := d.c.ControllerManager
	switch {
	case len(p.Finalizers) > 0:
		return s + fmt.Sprintf("; its delete, like any, leaves the object while finalizers stay: %s.", strings.Join(p.Finalizers, ", "))
	case cm.Present == Absent:
		return s + "; it has not, and cannot: kube-controller-manager is not running (" + cm.Evidence + ")."
	case cm.Present == Unknown:
		return s + "; whether kube-controller-manager runs was not checked (" + cm.Evidence + ")."
	}
	return s + "; kube-controller-manager runs (" + cm.Evidence + "): if the node went longer ago than that, read kube-controller-manager's log for the pod GC."
}

func (d *decider) lease() {
	c := d.c
	node := c.Pod.Spec.NodeName
	ev := []string{LeaseFile + ": spec.renewTime"}
	if c.LeaseErr != "" {
		d.add(Finding{ID: FindNodeLease, Level: NotChecked, Verdict: "not checked", Evidence: []string{LeaseFile},
			Text: fmt.Sprintf("The Lease of node %s was not checked: %s.", node, c.LeaseErr)})
		return
	}
	if c.Lease == nil || c.Lease.Spec.RenewTime == nil {
		d.add(Finding{ID: FindNodeLease, Level: Warning, Verdict: "missing", Evidence: ev,
			Text: fmt.Sprintf("Node %s has no renewed Lease in kube-node-lease: its kubelet's heartbeat cannot be judged.", node)})
		return
	}
	age := c.At.Sub(c.Lease.Spec.RenewTime.Time)
	if age > leaseStale {
		d.add(Finding{ID: FindNodeLease, Level: Blocking, Verdict: "stale", Evidence: ev,
			Text: fmt.Sprintf("The kubelet of %s last renewed its Lease %s ago (it renews every 10 s): it is not heartbeating.", node, round(age))})
		return
	}
	d.add(Finding{ID: FindNodeLease, Level: Info, Verdict: "fresh", Evidence: ev,
		Text: fmt.Sprintf("The kubelet of %s renewed its Lease %s ago.", node, round(age))})
}

func (d *decider) taints() {
	n := d.c.Node
	var unreachable, notReady, outOfService bool
	var all []string
	for _, t := range n.Spec.Taints {
		all = append(all, t.Key+"="+t.Value+":"+string(t.Effect))
		switch t.Key {
		case corev1.TaintNodeUnreachable:
			unreachable = true
		case corev1.TaintNodeNotReady:
			notReady = true
		case corev1.TaintNodeOutOfService:
			outOfService = true
		}
	}
	ev := []string{NodeFile + ": spec.taints"}
	switch {
	case outOfService:
		d.add(Finding{ID: FindNodeTaints, Level: Warning, Verdict: "out-of-service", Evidence: ev,
			Text: fmt.Sprintf("Node %s carries the out-of-service taint (%s): the pod garbage collector force-deletes pods terminating there once the node is NotReady, whether or not their containers still run.", n.Name, strings.Join(all, ", "))})
	case unreachable || notReady:
		d.add(Finding{ID: FindNodeTaints, Level: Warning, Verdict: "unreachable", Evidence: ev,
			Text: fmt.Sprintf("Node %s is tainted by the node lifecycle controller (%s): it evicts pods without tolerations, but an eviction is an ordinary delete that the same absent kubelet must finish.", n.Name, strings.Join(all, ", "))})
	case len(all) > 0:
		d.add(Finding{ID: FindNodeTaints, Level: Info, Verdict: "other", Evidence: ev,
			Text: fmt.Sprintf("Node %s has taints that say nothing about reachability: %s.", n.Name, strings.Join(all, ", "))})
	default:
		d.add(Finding{ID: FindNodeTaints, Level: Info, Verdict: "none", Evidence: ev, Text: fmt.Sprintf("Node %s has no taints.", n.Name)})
	}
}

func (d *decider) kubelet() {
	k := d.c.Kubelet
	node := d.c.Pod.Spec.NodeName
	ev := []string{KubeletFile}
	switch {
	case k.NotChecked != "":
		d.add(Finding{ID: FindKubelet, Level: NotChecked, Verdict: "not checked", Text: fmt.Sprintf("Whether the kubelet on %s runs was not checked: %s.", node, k.NotChecked)})
	case k.Err != "":
		d.add(Finding{ID: FindKubelet, Level: NotChecked, Verdict: "not checked", Evidence: ev, Text: fmt.Sprintf("Asking systemd on %s about the kubelet failed: %s.", node, k.Err)})
	case k.Output == "active":
		d.add(Finding{ID: FindKubelet, Level: Info, Verdict: "active", Evidence: ev, Text: fmt.Sprintf("The kubelet on %s is active (%s).", node, k.Command)})
	case d.heartbeating():
		// systemd's unit is down, yet something renews the Lease and keeps
		// the node Ready: a kubelet outside that unit, or one stopped moments ago.
		d.add(Finding{ID: FindKubelet, Level: Warning, Verdict: "unit " + k.Output, Evidence: append(ev, LeaseFile+": spec.renewTime", NodeFile+": status.conditions[Ready]"),
			Text: fmt.Sprintf("systemd's kubelet unit on %s is %s, yet the node's Lease was renewed %s ago and the node is Ready: either the kubelet was stopped within the last %s, or it runs outside that unit. Not judged as stopped.", node, k.Output, round(d.c.At.Sub(d.c.Lease.Spec.RenewTime.Time)), leaseStale)})
	default:
		d.add(Finding{ID: FindKubelet, Level: Blocking, Verdict: k.Output, Evidence: ev,
			Text: fmt.Sprintf("The kubelet on %s is not running (%s: %s): nobody on the node stops the containers or finishes a graceful deletion.", node, k.Command, k.Output)})
	}
}

// heartbeating reports whether the node's kubelet shows signs of life from
// the API alone: a Lease renewed within leaseStale and a Ready node.
func (d *decider) heartbeating() bool {
	c := d.c
	if c.Lease == nil || c.Lease.Spec.RenewTime == nil || c.Node == nil {
		return false
	}
	ready := condition(c.Node, corev1.NodeReady)
	return c.At.Sub(c.Lease.Spec.RenewTime.Time) <= leaseStale && ready != nil && ready.Status == corev1.ConditionTrue
}

func (d *decider) containers() {
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range d.c.Pod.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	terminating := d.c.Pod.DeletionTimestamp != nil
	pastDeadline := terminating && d.c.At.After(d.c.Pod.DeletionTimestamp.Time)
	for _, cc := range d.c.Containers {
		id := FindContainer(cc.Name)
		ev := []string{ContainerFile(cc.ID)}
		api := ""
		if s, ok := statuses[cc.Name]; ok && s.State.Terminated != nil {
			api = fmt.Sprintf("; the API status says terminated (exit %d, %s)", s.State.Terminated.ExitCode, s.State.Terminated.Reason)
			ev = append(ev, PodFile+": status.containerStatuses["+cc.Name+"].state")
		}
		switch {
		case cc.NotChecked != "":
			d.add(Finding{ID: id, Level: NotChecked, Verdict: "not checked", Evidence: ev[1:],
				Text: fmt.Sprintf("Container %s (%s) on the node was not checked: %s%s.", cc.Name, short(cc.ID), cc.NotChecked, api)})
		case cc.Err != "":
			d.add(Finding{ID: id, Level: NotChecked, Verdict: "not checked", Evidence: ev,
				Text: fmt.Sprintf("crictl could not say whether container %s (%s) runs: %s%s.", cc.Name, short(cc.ID), cc.Err, api)})
		case cc.State == ContainerRunning:
			level, text := Info, fmt.Sprintf("Container %s (%s) is running on the node (crictl: %s, pid %d)%s.", cc.Name, short(cc.ID), cc.State, cc.PID, api)
			if pastDeadline {
				level = Blocking
				text += " The grace deadline has passed and it still runs: nobody has killed it."
			}
			d.add(Finding{ID: id, Level: level, Verdict: "running", Evidence: ev, Text: text})
		case cc.State == ContainerExited:
			d.add(Finding{ID: id, Level: Info, Verdict: "exited", Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) already exited (crictl: %s, exit code %d)%s.", cc.Name, short(cc.ID), cc.State, cc.ExitCode, api)})
		case cc.State == ContainerNotFound:
			d.add(Finding{ID: id, Level: Info, Verdict: "gone", Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) no longer exists on the node (crictl: NotFound): it exited and was removed%s.", cc.Name, short(cc.ID), api)})
		default:
			d.add(Finding{ID: id, Level: Warning, Verdict: strings.ToLower(cc.State), Evidence: ev,
				Text: fmt.Sprintf("Container %s (%s) is %s on the node%s.", cc.Name, short(cc.ID), cc.State, api)})
		}
	}
}

// Kubelet event reasons that tell a termination in progress or failing.
var terminationReasons = map[string]bool{"Killing": true, "FailedKillPod": true, "FailedPreStopHook": true, "ExceededGracePeriod": true}

func (d *decider) termination() {
	p := d.c.Pod
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
	for _, e := range sortedEvents(d.c.Events) {
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
		if p.DeletionTimestamp != nil && runningStatus(p, c.Name) {
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
	d.add(Finding{ID: FindTermination, Level: level, Verdict: verdict, Text: text,
		Evidence: []string{PodFile + ": status.phase, status.containerStatuses", EventsFile}})
}

// admissionName picks the webhook or policy out of an admission refusal.
var admissionName = regexp.MustCompile(`(admission webhook "[^"]+"|ValidatingAdmissionPolicy '[^']+'(?: with binding '[^']+')?|webhook "[^"]+")`)

// FinalizersPatch is the merge patch that removes every finalizer, sent with dryRun=All only.
const FinalizersPatch = `{"metadata":{"finalizers":null}}`

// DryRunResult turns the dry-run patch's error into its result.
func DryRunResult(patch string, err error) DryRun {
	dr := DryRun{Patch: patch}
	if err == nil {
		return dr
	}
	dr.Err = err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		dr.Err = status.Status().Message
		dr.Code = status.Status().Code
	}
	return dr
}

// RejectedBy names the webhook or policy that refused the dry run, or "the API server".
func RejectedBy(dr DryRun) string {
	if m := admissionName.FindString(dr.Err); m != "" {
		return m
	}
	return "the API server"
}

func (d *decider) dryRun() {
	dr := d.c.DryRun
	if len(d.c.Pod.Finalizers) == 0 {
		return
	}
	ev := []string{DryRunFile}
	switch {
	case dr.Skipped != "":
		d.add(Finding{ID: FindDryRun, Level: NotChecked, Verdict: "not checked", Text: "Whether removing the finalizers would be accepted was not checked: " + dr.Skipped + "."})
	case dr.Code == 403 && !admissionName.MatchString(dr.Err):
		// RBAC refused the diagnosing user, not the removal: that says nothing about admission.
		d.add(Finding{ID: FindDryRun, Level: NotChecked, Verdict: "not checked", Evidence: ev,
			Text: "Whether removing the finalizers would be accepted was not checked: these credentials may not patch the pod (" + dr.Err + ")."})
	case dr.Err == "":
		d.add(Finding{ID: FindDryRun, Level: Info, Verdict: "accepted", Evidence: ev,
			Text: fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s, dryRun=All) was accepted: nothing in admission blocks it.", dr.Patch)})
	default:
		d.add(Finding{ID: FindDryRun, Level: Blocking, Verdict: "rejected", Evidence: ev,
			Text: fmt.Sprintf("A server-side dry run of the patch that removes the finalizers (%s) was rejected by %s (HTTP %d): %s", dr.Patch, RejectedBy(dr), dr.Code, dr.Err)})
	}
}

// answer is the one paragraph that opens the report.
func (d *decider) answer() string {
	p := d.c.Pod
	find := func(id string) (Finding, bool) { return Report{Findings: d.findings}.Finding(id) }
	var s []string
	name := p.Namespace + "/" + p.Name
	if p.DeletionTimestamp == nil {
		s = append(s, fmt.Sprintf("Pod %s is not being deleted (no deletionTimestamp).", name))
	} else {
		_, dl, grace := deadline(p)
		past := d.c.At.Sub(dl)
		when := fmt.Sprintf("its %d s grace deadline passed %s ago", grace, round(past))
		if grace == 0 {
			when = fmt.Sprintf("it was force-deleted (grace period 0) %s ago", round(past))
			if allTerminated(p) {
				// The kubelet's final delete, once the containers stopped, also
				// sets grace 0; the object alone cannot say which it was.
				when = fmt.Sprintf("its grace period is 0 since %s ago: a force delete, or the kubelet's final delete once its containers stopped (the API server's audit log says which)", round(past))
			}
			if p.Spec.NodeName == "" {
				// The API server skips the grace period of a pod no kubelet ever ran.
				when = fmt.Sprintf("it was deleted %s ago, with grace period 0 because it was never scheduled", round(past))
			}
		}
		if past <= 0 {
			when = fmt.Sprintf("its %d s grace deadline is %s away", grace, round(-past))
		}
		s = append(s, fmt.Sprintf("Pod %s is Terminating: %s.", name, when))
	}
	for _, f := range p.Finalizers {
		ctl := d.c.Controllers[f]
		manager := ctl.Manager
		if manager == "" {
			manager = FinalizerManager(p, f)
		}
		by := ""
		if manager != "" {
			by = ", added by " + manager
		}
		held := "It carries finalizer " + f
		if p.DeletionTimestamp != nil {
			held = "It is held by finalizer " + f
		}
		s = append(s, held+by+ctl.Clause()+".")
	}
	kubeletDown := false
	if k, ok := find(FindKubelet); ok && k.Level == Blocking {
		kubeletDown = true
	}
	notReady := false
	if n, ok := find(FindNodeReady); ok && n.Verdict == "NotReady" {
		notReady = true
	}
	node := p.Spec.NodeName
	if d.c.NodeGone {
		s = append(s, fmt.Sprintf("Its node %s no longer exists, so no kubelet will finish the deletion or stop anything there.", node)+" "+d.podGC())
	}
	switch {
	case kubeletDown && notReady:
		s = append(s, fmt.Sprintf("The kubelet on %s is not running and the node is NotReady: nobody on the node can stop the containers.", node))
	case kubeletDown:
		s = append(s, fmt.Sprintf("The kubelet on %s is not running: nobody on the node can stop the containers.", node))
	case notReady:
		s = append(s, fmt.Sprintf("Node %s is NotReady (its kubelet was not checked%s).", node, notCheckedWhy(d.c.Kubelet)))
	}
	if p.DeletionTimestamp != nil && len(p.Finalizers) == 0 && (kubeletDown || notReady) {
		s = append(s, "Only the kubelet finishes a graceful deletion, so it cannot finish until the kubelet is back (or the pod is force-deleted).")
	}
	var running, exited, unchecked []string
	for _, cc := range d.c.Containers {
		switch {
		case !cc.Checked():
			unchecked = append(unchecked, cc.Name)
		case cc.State == ContainerRunning:
			running = append(running, cc.Name)
		case cc.State == ContainerExited || cc.State == ContainerNotFound:
			exited = append(exited, cc.Name)
		}
	}
	switch {
	case len(running) > 0 && p.DeletionTimestamp != nil:
		s = append(s, fmt.Sprintf("The container (%s) is still running on the node.", strings.Join(running, ", ")))
	case len(running) > 0:
		s = append(s, fmt.Sprintf("Its container (%s) runs on the node.", strings.Join(running, ", ")))
	}
	if len(exited) > 0 {
		s = append(s, fmt.Sprintf("The container (%s) already exited.", strings.Join(exited, ", ")))
	}
	if len(unchecked) > 0 {
		s = append(s, fmt.Sprintf("Whether the container (%s) still runs was not checked.", strings.Join(unchecked, ", ")))
	}
	if dr, ok := find(FindDryRun); ok {
		switch dr.Verdict {
		case "accepted":
			s = append(s, "Removing the finalizers would be accepted (server-side dry run).")
		case "rejected":
			s = append(s, "Removing the finalizers would be rejected by "+RejectedBy(d.c.DryRun)+" (server-side dry run).")
		}
	}
	return strings.Join(s, " ")
}

func notCheckedWhy(k NodeCheck) string {
	if k.NotChecked != "" {
		return ": " + k.NotChecked
	}
	return ""
}

// advice says what to do, safest first, with each step's risk.
func (d *decider) advice() []string {
	p := d.c.Pod
	find := func(id string) (Finding, bool) { return Report{Findings: d.findings}.Finding(id) }
	var out []string
	node := p.Spec.NodeName
	running, unchecked := false, false
	for _, cc := range d.c.Containers {
		if !cc.Checked() {
			unchecked = true
		} else if cc.State == ContainerRunning {
			running = true
		}
	}
	if k, ok := find(FindKubelet); ok && k.Level == Blocking {
		out = append(out, fmt.Sprintf("Safe: start the kubelet on %s (`systemctl start kubelet` on the node). It finishes the deletion itself and kills the containers, with their grace period if any is left.", node))
	}
	for _, f := range p.Finalizers {
		ctl := d.c.Controllers[f]
		switch ctl.Present {
		case Absent, Unknown:
			out = append(out, fmt.Sprintf("Safe: bring back the controller that owns %s (or find out who does); it removes the finalizer after its cleanup.", f))
		case Failing:
			out = append(out, fmt.Sprintf("Safe: fix the controller that owns %s first (%s): its log and Warning events say why it fails; once it works it removes the finalizer after its cleanup.", f, ctl.Evidence))
		}
		out = append(out, fmt.Sprintf("Risky: remove finalizer %s by hand (`kubectl patch pod %s -n %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`). The cleanup it guards is skipped for good; the object goes at once if its deletion was requested.", f, p.Name, p.Namespace))
	}
	if dr, ok := find(FindDryRun); ok && dr.Verdict == "rejected" {
		out = append(out, "The finalizer patch would be refused today by "+RejectedBy(d.c.DryRun)+": ask its owner; do not disable it to get one pod out.")
	}
	deleting := p.DeletionTimestamp != nil
	nodeTrouble := false
	for _, id := range []string{FindKubelet, FindNodeReady, FindNodeLease} {
		if f, ok := find(id); ok && f.Level == Blocking {
			nodeTrouble = true
		}
	}
	// Force delete and the out-of-service taint are only on the table for a
	// pod being deleted, or one whose node is in trouble.
	if p.Spec.NodeName != "" && (deleting || nodeTrouble) {
		switch {
		case running:
			out = append(out, fmt.Sprintf("Dangerous now: a force delete (`kubectl delete pod %s -n %s --force --grace-period=0`) removes the object while the container keeps running on %s; a replacement (a StatefulSet's pod with the same name, or a Deployment's) can then run beside it, and the old one stops only when a kubelet there kills it.", p.Name, p.Namespace, node))
			if nodeTrouble {
				out = append(out, "Not honest here: the out-of-service taint (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) says the node is shut down; crictl shows the container running, so the pod GC would force-delete a pod whose process lives on.")
			} else if f, ok := find(FindDeletion); ok && f.Level == Blocking && len(p.Finalizers) == 0 {
				out = append(out, "The kubelet is active, yet the container outlived the grace deadline: read the kubelet's log (journalctl -u kubelet on the node) and the FailedKillPod events before anything else.")
			} else if len(p.Finalizers) == 0 {
				out = append(out, "Wait: the kubelet is stopping the container within its grace period.")
			}
		case d.c.NodeGone:
			out = append(out, fmt.Sprintf("Node %s no longer exists in the API, so nothing on it can be asked through the cluster. If the machine is gone too, a force delete (`kubectl delete pod %s -n %s --force --grace-period=0`) leaves nothing behind. If it still runs (its node object deleted by hand), its containers may run on and its kubelet cannot finish anything: look on the machine itself (crictl ps) first.", node, p.Name, p.Namespace))
		case unchecked:
			out = append(out, "Unknown risk: whether the container still runs was not checked; before a force delete or the out-of-service taint, look on the node (crictl ps) or rerun with -nodeaccess.")
		case len(d.c.Containers) == 0:
			// Nothing was looked at: the status names no container (it never
			// started one, or a kwok node's pod has none).
			if len(p.Finalizers) == 0 && deleting {
				out = append(out, "Its status names no container (none was ever reported started), so there was nothing to look for on the node: a force delete leaves behind only a container the kubelet started and never reported.")
			}
		default:
			if len(p.Finalizers) == 0 && deleting {
				out = append(out, "Low risk: no container of the pod runs on the node, so a force delete leaves no process behind.")
			}
			if nodeTrouble {
				out = append(out, "The out-of-service taint is honest only if the node is really shut down or cut off for good; no container of this pod runs on it now.")
			}
		}
	}
	if len(p.Finalizers) > 0 && !running && !unchecked {
		if len(d.c.Containers) > 0 {
			out = append(out, "A force delete does not help: the finalizer holds the object whatever the grace period; the container has already exited, so no process is left to worry about.")
		} else {
			out = append(out, "A force delete does not help: the finalizer holds the object whatever the grace period.")
		}
	}
	if len(out) == 0 {
		out = append(out, "Nothing to do: the pod is not being deleted, and nothing found would hold a deletion up.")
	}
	return out
}

func condition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func sortedEvents(events []corev1.Event) []corev1.Event {
	out := append([]corev1.Event(nil), events...)
	sort.SliceStable(out, func(i, j int) bool { return eventTime(out[i]).Before(eventTime(out[j])) })
	return out
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.FirstTimestamp.Time
	}
}

func round(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func short(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		id = id[i+3:]
	}
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// preStopCommand says what a preStop hook does.
func preStopCommand(h *corev1.LifecycleHandler) string {
	switch {
	case h.Exec != nil:
		return "exec " + strings.Join(h.Exec.Command, " ")
	case h.HTTPGet != nil:
		return fmt.Sprintf("HTTP GET %s on port %s", h.HTTPGet.Path, h.HTTPGet.Port.String())
	case h.Sleep != nil:
		return fmt.Sprintf("sleep %d s", h.Sleep.Seconds)
	case h.TCPSocket != nil:
		return "TCP " + h.TCPSocket.Port.String()
	}
	return "unknown handler"
}

func runningStatus(p *corev1.Pod, name string) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == name {
			return s.State.Running != nil
		}
	}
	return false
}

// allTerminated reports whether the pod has container statuses and every one is terminated.
func allTerminated(p *corev1.Pod) bool {
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated == nil {
			return false
		}
	}
	return true
}
