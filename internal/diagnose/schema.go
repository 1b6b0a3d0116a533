package diagnose

// The JSON of summary.json, which `termlab diagnose -o json` (and `kubectl
// termlab diagnose -o json`) prints unchanged. Scripts read it: a field's
// name and meaning never change; fields may be added. schema_test.go fails
// when a field is added, renamed or removed without updating SummaryFields
// and NamespaceSummaryFields below and the "JSON output" part of README.md.
//
// A pod (Summary):
//
//	pod       "<namespace>/<name>"
//	node      the node it is scheduled to (absent when unscheduled or gone)
//	at        when the evidence was read (RFC 3339, UTC)
//	answer    one paragraph: why it is still there, or what is left of it
//	findings  [Finding], in the order decided
//	advice    ["what to do, and its risk"]
//	dropped   evidence files left out because they held something
//	          credential-like (absent when none)
//	watched   with --watch, its last look once the watch ended, which the
//	          exit code follows: {"at", "exists", "held", "answer"} (absent
//	          without --watch)
//	termlab   the termlab that made it: {"version", "commit", "go",
//	          "clientGo", "date"} (as `termlab version -o json`)
//
// A namespace (NamespaceSummary):
//
//	namespace  its name
//	at, answer, findings, advice, dropped, watched, termlab   as for a pod
//	phase      status.phase (absent when the namespace does not exist)
//	remaining  {"<resource.group>": count} of what is left in it
//	pods       [{"name", "dir", "answer"}]: each remaining pod's own answer,
//	           its diagnosis in <dir> of the report folder (at most 10)
//
// A Finding:
//
//	id        what it is about: deletion, finalizer.<name>, node.ready,
//	          node.lease, node.taints, node.kubelet, container.<name>,
//	          termination, finalizers.dry_run, volumes; a gone pod: pod.gone,
//	          leftover.<node>; a namespace: namespace.deletion,
//	          namespace.condition.<type>, namespace.finalizers, discovery,
//	          apiservices, apiservice.<name>, remaining.<resource.group>,
//	          namespace.pods_first, pod.<name>, pods.skipped
//	level     blocking (holds the deletion up, or would once requested),
//	          warning (weigh it before acting), info (holds nothing up),
//	          not-checked (the evidence could not be read; text says why)
//	verdict   a word or two: requested, holds the object, NotReady, running …
//	text      the finding in a sentence
//	evidence  files of the report folder it rests on, "<file>: <fields>"
//
// The exit code is Outcome of the findings.

// SummaryFields are the JSON fields of a pod's summary.json.
var SummaryFields = []string{"pod", "node", "at", "answer", "findings", "advice", "dropped", "watched", "termlab"}

// NamespaceSummaryFields are the JSON fields of a namespace's summary.json.
var NamespaceSummaryFields = []string{"namespace", "at", "phase", "answer", "findings", "advice", "remaining", "pods", "dropped", "watched", "termlab"}

// FindingFields are the JSON fields of a finding; PodAnswerFields of a namespace's pods[].
var (
	FindingFields   = []string{"id", "level", "verdict", "text", "evidence"}
	PodAnswerFields = []string{"name", "dir", "answer"}
)
