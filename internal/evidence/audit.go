package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// AuditFile holds the API server's audit events that touched a run's objects
// (manifests/kind/audit/policy.yaml decides what the server records).
const AuditFile = "audit.jsonl"

// AuditLogPath is where the kind config makes the API server write its audit
// log, inside the control-plane node.
const AuditLogPath = "/var/log/kubernetes/audit/audit.log"

// AuditEvent is one request as the API server recorded it: who sent it, what
// it asked for and what the server answered. It keeps what deletion needs, not
// the whole audit event (no pod specs, no credentials' fingerprints).
type AuditEvent struct {
	AuditID string `json:"auditID"`
	// ReceivedAt is when the API server received the request; CompletedAt
	// when it had answered (the ResponseComplete stage).
	ReceivedAt  time.Time `json:"requestReceivedTimestamp"`
	CompletedAt time.Time `json:"stageTimestamp"`
	User        string    `json:"user"`
	UserAgent   string    `json:"userAgent,omitempty"`
	Verb        string    `json:"verb"`
	Resource    string    `json:"resource"`
	Subresource string    `json:"subresource,omitempty"`
	Namespace   string    `json:"namespace,omitempty"`
	Name        string    `json:"name,omitempty"`
	Code        int       `json:"code"`
	// GracePeriodSeconds and PropagationPolicy are the request's
	// DeleteOptions (body or query), when a delete carried them.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	PropagationPolicy  string `json:"propagationPolicy,omitempty"`
	// Patch is the body of a patch of the object itself (not a status
	// subresource), when it is small: e.g. {"metadata":{"finalizers":null}}.
	Patch json.RawMessage `json:"patch,omitempty"`
	// Taints are a node update's or patch's taints after the request ("key:Effect").
	Taints []string `json:"taints,omitempty"`
	// Result says what a delete did: AuditGone (the object was removed in the
	// request) or AuditMarked (it got a deletionTimestamp and stays).
	Result string `json:"result,omitempty"`
	// DeletionGracePeriodSeconds is what the object carried after a delete that marked it.
	DeletionGracePeriodSeconds *int64 `json:"deletionGracePeriodSeconds,omitempty"`
	// DryRun: a server-side dry run (dryRun=All), which changed nothing.
	DryRun bool `json:"dryRun,omitempty"`
}

// Results of a delete, as AuditEvent.Result says them.
const (
	AuditGone   = "gone"
	AuditMarked = "marked"
)

// Succeeded reports a 2xx answer.
func (e AuditEvent) Succeeded() bool { return e.Code >= 200 && e.Code < 300 }

// Object is "pods/held", "nodes/termlab-worker" or "pods/held/status".
func (e AuditEvent) Object() string {
	s := e.Resource + "/" + e.Name
	if e.Subresource != "" {
		s += "/" + e.Subresource
	}
	return s
}

// Sender is who sent it, in the words a report uses: the kubelet of a node,
// a controller by its service account, or the user.
func (e AuditEvent) Sender() string {
	switch {
	case strings.HasPrefix(e.User, "system:node:"):
		return "kubelet on " + strings.TrimPrefix(e.User, "system:node:")
	case strings.HasPrefix(e.User, "system:serviceaccount:"):
		sa := e.User[strings.LastIndexByte(e.User, ':')+1:]
		if strings.HasPrefix(e.UserAgent, "kube-controller-manager/") {
			return sa + " (kube-controller-manager)"
		}
		return sa
	}
	return e.User
}

// ByPerson reports whether a person or a script sent it (the cluster's admin
// user, as kubectl or termlab), not a kubelet, controller or kwok.
func (e AuditEvent) ByPerson() bool {
	return !strings.HasPrefix(e.User, "system:")
}

// Describe is one line: time, sender, verb, object and options.
func (e AuditEvent) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", e.ReceivedAt.Format("15:04:05.000"), e.Sender(), strings.ToUpper(e.Verb), e.Object())
	if e.GracePeriodSeconds != nil {
		fmt.Fprintf(&b, " gracePeriodSeconds=%d", *e.GracePeriodSeconds)
	}
	if e.PropagationPolicy != "" {
		fmt.Fprintf(&b, " propagationPolicy=%s", e.PropagationPolicy)
	}
	if len(e.Patch) > 0 {
		fmt.Fprintf(&b, " %s", e.Patch)
	}
	if e.DryRun {
		b.WriteString(" (dry run)")
	}
	if e.Result != "" {
		fmt.Fprintf(&b, " → %s", e.Result)
	}
	fmt.Fprintf(&b, " (%d)", e.Code)
	return b.String()
}

// AuditFilter selects a run's audit events.
type AuditFilter struct {
	// Namespace is the run's namespace: every request on an object in it,
	// and on the namespace itself.
	Namespace string
	// Nodes are the nodes whose changes (not their status) the run cares about.
	Nodes []string
	// RunID, if set, also keeps every request on an object whose namespace
	// or name holds it, subresources included: a lab's own namespaces and
	// cluster-scoped objects, named with the run's id (lab:namespace).
	// Nodes are left to Nodes: lab:scale's fake nodes carry the id too.
	RunID string
}

// Keep reports whether the event touched the run's objects.
func (f AuditFilter) Keep(e AuditEvent) bool {
	switch {
	case f.Namespace != "" && e.Namespace == f.Namespace:
		return true
	case e.Resource == "namespaces" && e.Name == f.Namespace && e.Subresource == "":
		return true
	case f.RunID != "" && e.Resource != "nodes" && (strings.Contains(e.Namespace, f.RunID) || strings.Contains(e.Name, f.RunID)):
		return true
	case e.Resource == "nodes" && e.Subresource == "":
		for _, n := range f.Nodes {
			if n == e.Name {
				return true
			}
		}
	}
	return false
}

// maxPatch is the largest patch body kept.
const maxPatch = 2048

// ParseAuditLine reads one line of the API server's audit log (an
// audit.k8s.io/v1 Event). ok is false for a line that is not a completed
// request on a resource (a RequestReceived stage, a non-resource URL).
func ParseAuditLine(line []byte) (e AuditEvent, ok bool, err error) {
	var raw struct {
		AuditID    string                    `json:"auditID"`
		Stage      string                    `json:"stage"`
		RequestURI string                    `json:"requestURI"`
		Verb       string                    `json:"verb"`
		UserAgent  string                    `json:"userAgent"`
		User       struct{ Username string } `json:"user"`
		ObjectRef  *struct {
			Resource, Subresource, Namespace, Name string
		} `json:"objectRef"`
		ResponseStatus *struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
		RequestObject  json.RawMessage `json:"requestObject"`
		ResponseObject json.RawMessage `json:"responseObject"`
		Received       time.Time       `json:"requestReceivedTimestamp"`
		StageAt        time.Time       `json:"stageTimestamp"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return e, false, fmt.Errorf("parsing an audit log line: %w", err)
	}
	if raw.ObjectRef == nil || (raw.Stage != "ResponseComplete" && raw.Stage != "Panic") {
		return e, false, nil
	}
	e = AuditEvent{
		AuditID: raw.AuditID, ReceivedAt: raw.Received.UTC(), CompletedAt: raw.StageAt.UTC(),
		User: raw.User.Username, UserAgent: raw.UserAgent, Verb: raw.Verb,
		Resource: raw.ObjectRef.Resource, Subresource: raw.ObjectRef.Subresource,
		Namespace: raw.ObjectRef.Namespace, Name: raw.ObjectRef.Name,
	}
	if raw.ResponseStatus != nil {
		e.Code = raw.ResponseStatus.Code
	}
	e.DryRun = strings.Contains(raw.RequestURI, "dryRun=")
	switch e.Verb {
	case "delete", "deletecollection":
		e.GracePeriodSeconds, e.PropagationPolicy = deleteOptions(raw.RequestObject, raw.RequestURI)
		if e.Verb == "delete" { // a collection's answer is a list: no one object's result
			e.Result, e.DeletionGracePeriodSeconds = deleteResult(raw.ResponseObject)
		}
	case "patch", "update":
		if e.Subresource == "" && len(raw.RequestObject) > 0 && e.Resource != "nodes" && len(raw.RequestObject) <= maxPatch {
			var compact bytes.Buffer
			if json.Compact(&compact, raw.RequestObject) == nil {
				e.Patch = compact.Bytes()
			}
		}
		if e.Resource == "nodes" && e.Subresource == "" {
			e.Taints = nodeTaints(raw.ResponseObject)
		}
	}
	return e, true, nil
}

// deleteOptions reads gracePeriodSeconds and propagationPolicy from a
// delete's body (kubectl and client-go send DeleteOptions there) or, failing
// that, from its query.
func deleteOptions(body json.RawMessage, uri string) (*int64, string) {
	var opts struct {
		GracePeriodSeconds *int64 `json:"gracePeriodSeconds"`
		PropagationPolicy  string `json:"propagationPolicy"`
	}
	if len(body) > 0 {
		_ = json.Unmarshal(body, &opts)
	}
	if opts.GracePeriodSeconds == nil {
		if i := strings.Index(uri, "gracePeriodSeconds="); i >= 0 {
			var g int64
			if _, err := fmt.Sscanf(uri[i+len("gracePeriodSeconds="):], "%d", &g); err == nil {
				opts.GracePeriodSeconds = &g
			}
		}
	}
	return opts.GracePeriodSeconds, opts.PropagationPolicy
}

// deleteResult tells from a delete's response whether the object went at
// once (a Status, or an object without deletionTimestamp) or was marked.
func deleteResult(resp json.RawMessage) (string, *int64) {
	if len(resp) == 0 {
		return "", nil
	}
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			DeletionTimestamp          *time.Time `json:"deletionTimestamp"`
			DeletionGracePeriodSeconds *int64     `json:"deletionGracePeriodSeconds"`
			Finalizers                 []string   `json:"finalizers"`
		} `json:"metadata"`
	}
	if json.Unmarshal(resp, &obj) != nil {
		return "", nil
	}
	// The server answers a delete with the object as it left it: with grace
	// 0 and no finalizer left, that object is already gone.
	g := obj.Metadata.DeletionGracePeriodSeconds
	if obj.Kind == "Status" || obj.Metadata.DeletionTimestamp == nil || (g != nil && *g == 0 && len(obj.Metadata.Finalizers) == 0) {
		return AuditGone, g
	}
	return AuditMarked, obj.Metadata.DeletionGracePeriodSeconds
}

func nodeTaints(resp json.RawMessage) []string {
	var n struct {
		Spec struct {
			Taints []struct{ Key, Effect string } `json:"taints"`
		} `json:"spec"`
	}
	if len(resp) == 0 || json.Unmarshal(resp, &n) != nil {
		return nil
	}
	out := []string{}
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+t.Effect)
	}
	return out
}

// ParseAudit reads audit log lines and keeps the completed requests the
// filter selects. Lines that do not parse are counted, not fatal: a log read
// while the server writes may end in half a line.
func ParseAudit(log []byte, f AuditFilter) (kept []AuditEvent, bad int) {
	for _, line := range bytes.Split(log, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e, ok, err := ParseAuditLine(line)
		if err != nil {
			bad++
			continue
		}
		if ok && f.Keep(e) {
			kept = append(kept, e)
		}
	}
	return kept, bad
}

// AuditFor returns the API server's record of a recorded API action: the
// request of the action's verb on its target, sent by a person or script
// (not a kubelet or controller). An action recorded from the audit log
// names its entry; any other is matched to the request the server received
// while the action was in flight, its time corrected by the server's
// measured offset (APIServerOffset, which matches by what was asked, not by
// time); AuditSlack and the offset's uncertainty allow for rounding.
func (r *Record) AuditFor(a Action) (AuditEvent, bool) {
	verb, resource := actionVerb(a)
	if verb == "" {
		return AuditEvent{}, false
	}
	got := r.personRequests(verb, resource, a.Target)
	if id := a.auditID(); id != "" {
		for _, e := range got {
			if e.AuditID == id {
				return e, true
			}
		}
		return AuditEvent{}, false
	}
	var offset, slack time.Duration = 0, AuditSlack
	if o, ok := r.ClockOffsetOf(ClockAPIServer); ok {
		offset, slack = seconds(o.Offset), slack+seconds(o.Uncertainty)
	}
	// Of the requests inside the slack, the one nearest the action's own
	// window wins: a lab's next request on the same pod can follow within a
	// few milliseconds (kwok answers at once), and the first one inside the
	// slack would then be the previous action's.
	var best AuditEvent
	bestOff, found := time.Duration(0), false
	for _, e := range got {
		off := outside(e.ReceivedAt.Add(-offset), a.StartedAt, a.FinishedAt)
		if off > slack || (found && off >= bestOff) {
			continue
		}
		best, bestOff, found = e, off, true
	}
	return best, found
}

// personRequests are the audit events of a person's or script's requests of
// verb on the named object (not its subresources, not dry runs). Audit
// events on disk are indexed by object once, on the first call: a record
// that large holds hundreds of thousands of them.
func (r *Record) personRequests(verb, resource, name string) []AuditEvent {
	keep := func(e AuditEvent) bool {
		return e.Subresource == "" && e.ByPerson() && !e.DryRun
	}
	if r.auditFile == "" {
		return where(r.Audit, func(e AuditEvent) bool {
			return e.Verb == verb && e.Resource == resource && e.Name == name && keep(e)
		})
	}
	if r.auditIndex == nil {
		r.auditIndex = &auditIndex{}
	}
	ix := r.auditIndex
	ix.once.Do(func() {
		ix.byObject = map[string][]AuditEvent{}
		ix.err = r.EachAudit(func(e AuditEvent) bool {
			if keep(e) {
				k := e.Verb + " " + e.Resource + " " + e.Name
				ix.byObject[k] = append(ix.byObject[k], e)
			}
			return true
		})
	})
	return ix.byObject[verb+" "+resource+" "+name]
}

// auditIndex is a person's requests among the audit events on disk, by verb
// and object; built once.
type auditIndex struct {
	once     sync.Once
	byObject map[string][]AuditEvent
	err      error
}

// outside is how far t lies outside [start, end] (end zero: [start, start]).
func outside(t, start, end time.Time) time.Duration {
	if end.IsZero() || end.Before(start) {
		end = start
	}
	switch {
	case t.Before(start):
		return start.Sub(t)
	case t.After(end):
		return t.Sub(end)
	}
	return 0
}

// AuditSlack is how far outside an action's start and end its request may
// be stamped by the API server.
const AuditSlack = 50 * time.Millisecond

// actionVerb is the API verb and resource of a recorded action ("" for node commands).
// APIRequest reports whether the action is an API request the audit log
// can hold (a pod or node change), not a node command.
func (a Action) APIRequest() bool {
	verb, _ := actionVerb(a)
	return verb != ""
}

// auditID is the audit entry an action recorded from the audit log (a
// script's or a person's request) came from; "" for termlab's own.
func (a Action) auditID() string {
	var req struct {
		AuditID string `json:"auditID"`
	}
	_ = json.Unmarshal(a.Request, &req)
	return req.AuditID
}

// fromAudit: the action was recorded from the audit log, its times the server's.
func (a Action) fromAudit() bool { return a.auditID() != "" }

func actionVerb(a Action) (verb, resource string) {
	var req struct {
		Verb string `json:"verb"`
		Path string `json:"path"`
	}
	if json.Unmarshal(a.Request, &req) != nil || req.Verb == "" {
		return "", ""
	}
	switch {
	case strings.Contains(req.Path, "/pods"):
		resource = "pods"
	case strings.Contains(req.Path, "/nodes/"):
		resource = "nodes"
	default:
		return "", ""
	}
	verb = map[string]string{"POST": "create", "DELETE": "delete", "PATCH": "patch", "PUT": "update"}[req.Verb]
	if resource == "nodes" && verb == "patch" {
		verb = "update" // termlab sets taints with an update (internal/lab setTaint)
	}
	return verb, resource
}

// AuditByOthers are the run's audit events that changed its pods and were not
// sent by a person or script: the kubelet's final delete, the pod garbage
// collector, the taint manager, the namespace controller, kwok.
func (r *Record) AuditByOthers() []AuditEvent {
	var out []AuditEvent
	_ = r.EachAudit(func(e AuditEvent) bool {
		if !e.ByPerson() && e.Resource == "pods" && e.Subresource == "" && (e.Verb == "delete" || e.Verb == "patch" || e.Verb == "update") {
			out = append(out, e)
		}
		return true
	})
	return out
}
