// Package evidence records what happens during a lab run, as it happens:
// watch events on the run's pods (events.jsonl), the namespace's Kubernetes
// events, the Ready condition of the real nodes, object snapshots at named
// steps, the exact requests the lab made, and crictl evidence from the node.
//
// The Recorder writes every item to the run folder when it is observed and
// keeps an in-memory Record. The Record is plain data: claims and reports are
// decided and rendered from it alone, never from the cluster.
package evidence

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/ledger"
)

// Files of a run folder, written by internal/recorder.
const (
	EventsFile     = "events.jsonl"      // watch events on the run's pods
	KubeEventsFile = "kube-events.jsonl" // Kubernetes Events in the run's namespace
	NodesFile      = "nodes.jsonl"       // Ready-condition changes of the real nodes
	ActionsFile    = "actions.jsonl"     // requests and node commands the lab made
	RecordFile     = "record.json"       // steps, actions, snapshots, crictl observations, notes, watch gaps
	WatchGapsFile  = "watch-gaps.jsonl"  // each time a watch was down, written when it is back (or the run ends)
	// AuditFile (audit.go) holds the API server's audit events on the run's objects.
)

// The recorder's watches, as WatchGap.Source names them.
const (
	WatchPods   = "pods"   // the run's pods: events.jsonl
	WatchEvents = "events" // the namespace's Kubernetes Events: kube-events.jsonl
	WatchNodes  = "nodes"  // the nodes: nodes.jsonl
)

// Record is everything a run observed, in the order it was observed.
// How a run reached the nodes (Record.NodeAccess).
const (
	NodeAccessDocker = "docker exec"
	NodeAccessPod    = "node pod"
	// NodeAccessNone: a cluster reached through a kubeconfig without
	// -node-access; claims that need crictl are not checked.
	NodeAccessNone = "none"
)

type Record struct {
	Lab       string            `json:"lab"`
	RunID     string            `json:"run_id"`
	Namespace string            `json:"namespace"`
	StartedAt time.Time         `json:"started_at"`
	EndedAt   time.Time         `json:"ended_at"`
	Versions  map[string]string `json:"versions,omitempty"`
	// NodeAccess is how the run reached the nodes' container runtime and
	// kubelet: NodeAccessDocker, NodeAccessPod or NodeAccessNone ("" in
	// records made before the field: docker exec).
	NodeAccess string `json:"node_access,omitempty"`
	// NoFakeNodes: the cluster had no kwok fake node, so a lab's part on
	// fake nodes did not run and its claims are not checked (false in
	// records made before the field: they all had some).
	NoFakeNodes bool `json:"no_fake_nodes,omitempty"`
	// Clocks are the other clocks' offsets from the host's, measured during
	// the run (the nodes' by probes, the API server's from the audit log).
	Clocks []ClockOffset `json:"clocks,omitempty"`

	Steps      []Step                 `json:"steps"`
	Actions    []Action               `json:"actions"`
	PodEvents  []PodEvent             `json:"-"` // events.jsonl
	KubeEvents []KubeEvent            `json:"-"` // kube-events.jsonl
	NodeEvents []NodeEvent            `json:"-"` // nodes.jsonl
	Snapshots  []Snapshot             `json:"snapshots"`
	Containers []ContainerObservation `json:"container_observations"`
	Notes      []Note                 `json:"notes"`
	// Gaps are the times a watch was down: what happened then was seen late or not at all.
	Gaps []WatchGap `json:"watch_gaps"`
	// Ledgers are the reads of a lab's in-cluster ledger (lab:statefulset).
	Ledgers []LedgerRead `json:"ledger_reads,omitempty"`
	// Audit are the API server's audit events on the run's objects
	// (audit.jsonl), in the order the server wrote them; empty when the
	// cluster keeps no audit log.
	Audit []AuditEvent `json:"-"`
	// Lists are LISTs of the run's pods taken at chosen moments, to check
	// the watch's record against the API server's own answer (lab:scale).
	Lists []PodList `json:"pod_lists,omitempty"`
	// EndpointSlices are the watch events on the namespace's EndpointSlices
	// (endpointslices.jsonl), for a lab that asks for that watch.
	EndpointSlices []EndpointSliceEvent `json:"-"`
	// ProxyRules are reads of kube-proxy's rules on a node (lab:graceful).
	ProxyRules []ProxyRulesRead `json:"proxy_rules,omitempty"`
	// Requests are a client pod's requests (requests.jsonl), and RequestReads
	// the reads of its log they came from.
	Requests     []Request      `json:"-"`
	RequestReads []RequestsRead `json:"request_reads,omitempty"`
	// TaskExits are containerd's exit events of containers on a node (lab:graceful).
	TaskExits []TaskExit `json:"task_exits,omitempty"`
	// NamespaceEvents are the watch events on the namespaces labelled with
	// the run's id (namespaces.jsonl), for a lab that asks for that watch.
	NamespaceEvents []NamespaceEvent `json:"-"`
	// ControllerEvents are the watch events on the pods of kwok's controller
	// (controllers.jsonl), for a run with fake nodes.
	ControllerEvents []ControllerEvent `json:"-"`
	// Journal are a node unit's journal entries that concern the run (the
	// kubelet's, naming the run's pods: lab:mount), and Mounts the looks at
	// a node's mount table and at what holds a mount.
	Journal []JournalEntry `json:"journal,omitempty"`
	Mounts  []MountLook    `json:"mount_looks,omitempty"`

	// podEventsFile, when set, holds the pod events instead of PodEvents
	// (podevents.go), and podEventCount is how many.
	podEventsFile string
	podEventCount int
	// auditFile, likewise, holds the audit events instead of Audit
	// (AuditOnDisk).
	auditFile  string
	auditCount int
	auditIndex *auditIndex // built on the first AuditFor of events on disk
}

// PodList is one LIST of the run's pods: when, why, at which
// resourceVersion, and each pod as listed.
type PodList struct {
	Why             string      `json:"why"`
	Step            string      `json:"step"`
	At              time.Time   `json:"at"`
	ResourceVersion string      `json:"resourceVersion"`
	Pods            []ListedPod `json:"pods"`
}

// ListedPod is one pod as a LIST returned it.
type ListedPod struct {
	Name            string   `json:"name"`
	UID             string   `json:"uid"`
	ResourceVersion string   `json:"resourceVersion"`
	Finalizers      []string `json:"finalizers,omitempty"`
}

// Step is a named stage of the experiment.
type Step struct {
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Error      string    `json:"error,omitempty"`
}

// ActionKind names what a lab did; its value is what the record keeps.
// Labs with actions of their own (labs/namespace) name them the same way.
type ActionKind string

// The actions internal/lab does (and a script or a person does for it).
const (
	ActionCreate           ActionKind = "create"
	ActionDelete           ActionKind = "delete"
	ActionForceDelete      ActionKind = "force-delete"
	ActionRemoveFinalizers ActionKind = "remove-finalizers"
	ActionDeleteNamespace  ActionKind = "delete-namespace"
	ActionStopKubelet      ActionKind = "stop-kubelet"
	ActionStartKubelet     ActionKind = "start-kubelet"
	ActionTaintNode        ActionKind = "taint-node"
	ActionUntaintNode      ActionKind = "untaint-node"
	ActionHoldMount        ActionKind = "hold-mount"
	ActionReleaseMount     ActionKind = "release-mount"
	// ActionCleanupRemoveFinalizers is cleanup's, on the pods a run leaves
	// with finalizers: always termlab's, and no claim reads it.
	ActionCleanupRemoveFinalizers ActionKind = "cleanup-remove-finalizers"
)

// ActionCreateOf is the kind of creating an object of another kind than a pod
// ("create-apiservice", …).
func ActionCreateOf(objectKind string) ActionKind {
	return ActionKind("create-" + strings.ToLower(objectKind))
}

// Action is something the lab did to the cluster or a node: an API request
// (with the exact options sent) or a command on a node.
type Action struct {
	Step string `json:"step"`
	// Kind names what was done (ActionDelete, ActionForceDelete, …).
	Kind ActionKind `json:"kind"`
	// Target is the pod or node acted on.
	Target string `json:"target"`
	// Request is the exact request: the API verb, resource and body (e.g. the
	// DeleteOptions as JSON), or the command run on the node.
	Request json.RawMessage `json:"request"`
	// Equivalent is the command a user would type to do the same.
	Equivalent string    `json:"equivalent,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Error      string    `json:"error,omitempty"`
}

// Succeeded reports whether the action completed without error.
func (a Action) Succeeded() bool { return a.Error == "" && !a.FinishedAt.IsZero() }

// PodState holds the deletion-relevant fields of a pod object.
type PodState struct {
	Name                       string           `json:"name"`
	UID                        string           `json:"uid"`
	ResourceVersion            string           `json:"resourceVersion"`
	NodeName                   string           `json:"nodeName,omitempty"`
	DeletionTimestamp          *time.Time       `json:"deletionTimestamp"`
	DeletionGracePeriodSeconds *int64           `json:"deletionGracePeriodSeconds"`
	Finalizers                 []string         `json:"finalizers"`
	Phase                      string           `json:"phase"`
	Ready                      string           `json:"ready,omitempty"` // status of the Ready condition: True, False, Unknown or ""
	Containers                 []ContainerState `json:"containers"`
	// InitContainers are the init containers' statuses, native sidecars
	// (restartPolicy Always) among them (lab:sidecar); omitted when none.
	InitContainers []ContainerState `json:"initContainers,omitempty"`
	// Labels are the pod's labels a claim reads (RecordedLabels), not all
	// of them: empty, not nil, when it has none of those; nil in records
	// made before the field (their events.jsonl keeps the whole object).
	Labels map[string]string `json:"labels"`
}

// RecordedLabels are the pod labels PodState keeps: the one that picks a
// kwok stage set (internal/kwok.StageSetLabel), which lab:kwok's claims
// check on every event of a fake node's pod.
var RecordedLabels = []string{"termlab.dev/stage-set"}

// HasFinalizer reports whether the pod carries finalizer f.
func (s PodState) HasFinalizer(f string) bool {
	for _, x := range s.Finalizers {
		if x == f {
			return true
		}
	}
	return false
}

// Terminal reports whether the pod phase is Succeeded or Failed.
func (s PodState) Terminal() bool { return s.Phase == "Succeeded" || s.Phase == "Failed" }

// Container returns the status of the named container, or the first one if name is "".
func (s PodState) Container(name string) (ContainerState, bool) {
	for _, c := range s.Containers {
		if name == "" || c.Name == name {
			return c, true
		}
	}
	return ContainerState{}, false
}

// ContainerState is one container's status as the API reports it.
type ContainerState struct {
	Name string `json:"name"`
	// ContainerID is the runtime's ID without the "containerd://" prefix, as crictl shows it.
	ContainerID string     `json:"containerID,omitempty"`
	State       string     `json:"state"` // waiting, running, terminated or "" (no state reported)
	Reason      string     `json:"reason,omitempty"`
	ExitCode    *int32     `json:"exitCode,omitempty"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
}

// PodEvent is one watch event on a pod, as observed by the recorder.
type PodEvent struct {
	ObservedAt time.Time `json:"observed_at"`
	Type       string    `json:"type"` // ADDED, MODIFIED, DELETED
	PodState
	Object json.RawMessage `json:"object"`
}

// KubeEvent is a Kubernetes Event in the run's namespace (e.g. the kubelet's "Killing").
type KubeEvent struct {
	ObservedAt      time.Time `json:"observed_at"`
	Type            string    `json:"type"`
	ResourceVersion string    `json:"resourceVersion"`
	Object          string    `json:"involvedObject"`
	Reason          string    `json:"reason"`
	Message         string    `json:"message"`
	Source          string    `json:"source"`
	Count           int32     `json:"count,omitempty"`
}

// NodeEvent records a change of a real node's Ready condition.
type NodeEvent struct {
	ObservedAt      time.Time `json:"observed_at"`
	Type            string    `json:"type"` // LISTED (state when the watch began), ADDED, MODIFIED, DELETED
	ResourceVersion string    `json:"resourceVersion"`
	Name            string    `json:"name"`
	Ready           string    `json:"ready"` // True, False, Unknown
	Reason          string    `json:"reason,omitempty"`
	Message         string    `json:"message,omitempty"`
	// LastTransitionTime is when the node controller or kubelet says the condition changed.
	LastTransitionTime *time.Time `json:"lastTransitionTime,omitempty"`
	Taints             []string   `json:"taints,omitempty"`
}

// UnreachableTaint is the taint the node lifecycle controller puts on a node
// whose kubelet stopped reporting, as NodeEvent.Taints writes it.
const UnreachableTaint = "node.kubernetes.io/unreachable:NoExecute"

// HasTaint reports whether the node carried taint ("key:Effect").
func (e NodeEvent) HasTaint(taint string) bool {
	for _, t := range e.Taints {
		if t == taint {
			return true
		}
	}
	return false
}

// Snapshot is an object as read at a named step, saved as kubectl-style YAML.
type Snapshot struct {
	Step  string    `json:"step"`
	Pod   string    `json:"pod"`
	At    time.Time `json:"at"`
	Found bool      `json:"found"` // false: the GET answered NotFound
	Path  string    `json:"path"`  // relative to the run folder
	State *PodState `json:"state,omitempty"`
}

// Container states as crictl names them, plus NotFound when the runtime no
// longer knows the ID.
const (
	ContainerCreated  = "CONTAINER_CREATED"
	ContainerRunning  = "CONTAINER_RUNNING"
	ContainerExited   = "CONTAINER_EXITED"
	ContainerUnknown  = "CONTAINER_UNKNOWN"
	ContainerNotFound = "NOT_FOUND"
)

// ContainerObservation is what crictl on the node said about one container.
type ContainerObservation struct {
	Step        string    `json:"step"`
	Pod         string    `json:"pod"`
	Node        string    `json:"node"`
	ContainerID string    `json:"container_id"`
	ObservedAt  time.Time `json:"observed_at"`
	// State is the crictl state (CONTAINER_RUNNING, CONTAINER_EXITED, ...) or NOT_FOUND.
	State      string     `json:"state"`
	ExitCode   *int32     `json:"exit_code,omitempty"` // only when exited
	Reason     string     `json:"reason,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Log is what the container's own log (crictl logs) showed at this moment.
	Log *LogSummary `json:"log,omitempty"`
	// Probes counts the crictl inspect calls made while waiting for this state (0: a single look).
	Probes int `json:"probes,omitempty"`
	// Files are the raw outputs saved, relative to the run folder.
	InspectPath string `json:"inspect_path,omitempty"`
	PsPath      string `json:"ps_path,omitempty"`
	LogsPath    string `json:"logs_path,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Files lists the raw evidence files of the observation.
func (o ContainerObservation) Files() []string {
	var out []string
	for _, p := range []string{o.InspectPath, o.PsPath, o.LogsPath} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// LogSummary is the part of the workload's log (internal/workloadlog) claims use.
type LogSummary struct {
	Lines          int        `json:"lines"`
	Started        bool       `json:"started"`
	Heartbeats     int        `json:"heartbeats"`
	LastSeq        int        `json:"last_seq"`
	LastBeatAt     *time.Time `json:"last_beat_at,omitempty"`
	Signal         string     `json:"signal,omitempty"` // the signal that started the shutdown, e.g. SIGTERM
	SignalAt       *time.Time `json:"signal_at,omitempty"`
	ExitLogged     bool       `json:"exit_logged"`
	ExitCodeLogged *int       `json:"exit_code_logged,omitempty"`
	ExitAt         *time.Time `json:"exit_at,omitempty"` // the workload's own time of its exit line
	// A serving workload's (lab:graceful): what it does on SIGTERM, and the
	// lines an exec preStop hook wrote into its log.
	OnTerm         string         `json:"on_term,omitempty"`
	PreStopSleep   *time.Duration `json:"prestop_sleep,omitempty"`
	PreStopStartAt *time.Time     `json:"prestop_start_at,omitempty"`
	PreStopEndAt   *time.Time     `json:"prestop_end_at,omitempty"`
}

// Note is something the record must say that is not an observation, e.g.
// that no node evidence exists for a pod on a fake node, or that leftovers were repaired.
type Note struct {
	At   time.Time `json:"at"`
	Step string    `json:"step,omitempty"`
	Text string    `json:"text"`
}

// WatchGap is a time when one of the recorder's watches was down. From is
// when its stream ended or failed; To is when a new watch was established
// from the last resourceVersion seen (changes in between then arrive late, at
// To), or, when the server no longer had that resourceVersion, when a re-LIST
// completed (changes in between may then be lost: Why says so, and the listed
// state is recorded as LISTED events). A gap still open when the recorder
// stopped ends at the record's EndedAt; in a record read while the run is on,
// an open gap has a zero To.
type WatchGap struct {
	Source string    `json:"source"` // WatchPods, WatchEvents or WatchNodes
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Why    string    `json:"why"`
	// ResumedFrom is the resourceVersion the watch started again from when it
	// came back without a re-list: the last one it had delivered. The API
	// server sends every change after it, so the events of the gap arrived
	// late but none is missing. Empty when the gap ended in a re-list or is
	// still open.
	ResumedFrom string `json:"resumed_from,omitempty"`
}

// LedgerRead is one read of a lab's ledger (internal/ledger): every write it
// had received by then, in arrival order, stamped with the ledger's clock.
type LedgerRead struct {
	Step    string         `json:"step"`
	At      time.Time      `json:"at"`
	Service string         `json:"service"` // the Service it was read through (the API server's service proxy)
	Path    string         `json:"path"`    // the raw ledger as read, relative to the run folder
	Entries []ledger.Entry `json:"entries"`
}

// ErrNoNodeAccess is what an observation of a node returns when the run has
// no way to run commands there (NodeAccessNone): the claims that rest on it
// are then not checked, and the run goes on.
var ErrNoNodeAccess = errors.New("no access to the node's container runtime (a cluster reached through a kubeconfig: pass -node-access to start a node pod)")
