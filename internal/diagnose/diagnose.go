// Package diagnose says why one pod is still there, or what its deletion is
// waiting for, from evidence read off a live cluster. It has two halves:
// Collect reads (client-go GETs and LISTs, a server-side dry-run patch, and
// node commands where node access is given) and changes nothing; Decide is
// pure: Collected in, findings, an answer and advice out, so every finding is
// unit-tested on constructed objects. Write renders the report folder.
package diagnose

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
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
	// Teardown is the kubelet's journal on the unmounts of the pod's
	// volumes, read for a pod being deleted (zero when not asked).
	Teardown TeardownCheck `json:",omitzero"`
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
	// rules are the finding, answer and advice rules that spoke, in order
	// (for TestEveryRuleIsExercised).
	rules []string
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
	// CollectedFile is everything Decide read (Collected, or
	// NamespaceCollected), as one file: copied into testdata/decide it is a
	// test case (decide_golden_test.go).
	CollectedFile = "raw/collected.json"
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
// the cluster: the facts are decided once (factsOf), then the findings,
// answer and advice from them, by the tables in pod_findings.go and
// pod_rules.go.
func Decide(c Collected) Report {
	if c.Pod == nil {
		return decideGone(c, c.Namespace, c.Name)
	}
	f := factsOf(c)
	r := Report{Pod: f.ref(), Node: f.node, At: c.At}
	var found, answered, advised []string
	r.Findings, found = findingsOf(f)
	r.Answer, answered = answerOf(f, r.Findings)
	r.Advice, advised = adviceOf(f)
	r.rules = slices.Concat(found, answered, advised)
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

// admissionName picks the webhook or policy out of an admission refusal.
var admissionName = regexp.MustCompile(`(admission webhook "[^"]+"|ValidatingAdmissionPolicy '[^']+'(?: with binding '[^']+')?|webhook "[^"]+")`)

// RemoveFinalizerCommand is the kubectl command that removes one finalizer
// of an object and nothing else: a JSON patch that first tests the index
// still holds that finalizer (another removal may have moved it) and then
// removes that index. A merge patch of the list would remove them all.
func RemoveFinalizerCommand(resource, name, namespace string, index int, finalizer string) string {
	value, _ := json.Marshal(finalizer)
	path := fmt.Sprintf("/metadata/finalizers/%d", index)
	return fmt.Sprintf(`kubectl patch %s %s -n %s --type=json -p '[{"op":"test","path":"%s","value":%s},{"op":"remove","path":"%s"}]'`, resource, name, namespace, path, value, path)
}

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
