package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/redact"
)

// Config says what to record and where.
type Config struct {
	Client    kubernetes.Interface
	Lab       string
	RunID     string
	Namespace string
	// PodSelector selects the run's pods, e.g. "termlab.dev/run-id=<id>".
	PodSelector string
	// Nodes are the real nodes whose Ready condition is recorded.
	Nodes []string
	// Dir is the run folder.
	Dir      string
	Versions map[string]string
	// NodeAccess is how the run reaches the nodes (evidence.NodeAccess*).
	NodeAccess string
	// NoFakeNodes: the cluster has no kwok fake node (evidence.Record.NoFakeNodes).
	NoFakeNodes bool
	// EndpointSlices also watches the namespace's EndpointSlices
	// (endpointslices.jsonl), for a lab about a Service's endpoints.
	EndpointSlices bool
	// NamespaceSelector, if set, also watches the namespaces it selects
	// (namespaces.jsonl), and the audit log keeps every request on an
	// object named with RunID (evidence.AuditFilter.RunID): a lab about
	// deleting namespaces of its own (lab:namespace).
	NamespaceSelector string
	// Controllers, if set, also watches the pods it names
	// (controllers.jsonl): a controller the run's evidence rests on beyond
	// the control plane (kwok's, for a lab with fake nodes).
	Controllers *ControllerPods
	// EventsOnDisk keeps the pod events in events.jsonl only, and the audit
	// events in audit.jsonl: the recorder's memory holds each pod's latest
	// event and the latest audit events (for WaitAudit), and Record's are
	// read back from the files (evidence.EachPodEvent, EachAudit). For a lab
	// of thousands of pods (lab:scale), whose memory must not grow with the
	// run.
	EventsOnDisk bool
}

// ControllerPods are a controller's pods: a namespace and a label selector.
type ControllerPods struct {
	Namespace, Selector string
}

// Recorder records a run. Create it with Start, before the lab creates any
// object, and Stop it when the run is over.
type Recorder struct {
	cfg Config

	mu       sync.Mutex
	gaps     map[string]*openGap // by watch source, while that watch is down
	rec      evidence.Record
	changed  chan struct{} // closed and replaced whenever the record grows
	files    map[string]*os.File
	step     int // index of the current step in rec.Steps, -1 before the first
	seq      map[string]int
	writeErr error

	cancel context.CancelFunc
	wg     sync.WaitGroup

	// bg lives until Stop; container log followers run in it (follow.go).
	bg        context.Context
	followers map[string]*logFollower

	// audit follows the API server's audit log (audit.go); nil without one.
	audit *auditReader

	// stream holds the pods' latest events, and auditTail the latest audit
	// events, when Config.EventsOnDisk (podstream.go); nil otherwise.
	stream    *podStream
	auditTail *auditTail

	// handed is the record HandOver gave away; nil before.
	handed *evidence.Record
}

// Start lists the run's pods, the namespace's events and the nodes to learn
// the current resourceVersions, then watches each from there, so that every
// later change is recorded in order. A watch that ends or fails is opened
// again from the last resourceVersion seen, and the time it was down is
// recorded as a gap (watch.go), so claims know when the record was blind.
// cfg.Client is the one seam to the API server: a test may wrap it.
func Start(ctx context.Context, cfg Config) (*Recorder, error) {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.Dir == "" {
		return nil, errors.New("evidence: Config needs Client, Namespace and Dir")
	}
	r := &Recorder{
		cfg:     cfg,
		changed: make(chan struct{}),
		files:   map[string]*os.File{},
		step:    -1,
		seq:     map[string]int{},
		gaps:    map[string]*openGap{},
		rec: evidence.Record{
			Lab: cfg.Lab, RunID: cfg.RunID, Namespace: cfg.Namespace,
			StartedAt: now(), Versions: cfg.Versions, NodeAccess: cfg.NodeAccess, NoFakeNodes: cfg.NoFakeNodes,
		},
	}
	if cfg.EventsOnDisk {
		r.stream = newPodStream()
		r.auditTail = &auditTail{}
	}
	// The run folder is private whoever made it (evidence.PrivateDir).
	if err := os.Chmod(cfg.Dir, evidence.PrivateDir); err != nil {
		return nil, fmt.Errorf("making the run folder private: %w", err)
	}
	files := recordedFiles
	if cfg.EndpointSlices {
		files = append(append([]string(nil), files...), evidence.EndpointSlicesFile)
	}
	if cfg.NamespaceSelector != "" {
		files = append(append([]string(nil), files...), evidence.NamespacesFile)
	}
	if cfg.Controllers != nil {
		files = append(append([]string(nil), files...), evidence.ControllersFile)
	}
	for _, name := range files {
		f, err := createPrivate(filepath.Join(cfg.Dir, name))
		if err != nil {
			r.closeFiles()
			return nil, fmt.Errorf("creating %s: %w", name, err)
		}
		r.files[name] = f
	}

	sources := r.sources()
	versions := make([]string, len(sources))
	for i, src := range sources {
		items, rv, err := src.list(ctx)
		if err != nil {
			r.closeFiles()
			return nil, fmt.Errorf("listing %s to start the watch: %w", src.what, err)
		}
		versions[i] = rv
		// Events from before the run are not the run's: only their resourceVersion is kept.
		if src.name == evidence.WatchEvents {
			continue
		}
		for _, o := range items {
			r.handle(src.name, watch.Event{Type: listed, Object: o})
		}
	}

	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.bg = watchCtx
	for i, src := range sources {
		r.wg.Add(1)
		go r.watchLoop(watchCtx, src, versions[i])
	}
	return r, nil
}

// recordedFiles are the JSONL files the recorder appends to as things happen.
var recordedFiles = []string{evidence.EventsFile, evidence.KubeEventsFile, evidence.NodesFile, evidence.ActionsFile, evidence.WatchGapsFile}

// handle records one watch event (or a LISTED object); the watch loop deals
// with errors.
func (r *Recorder) handle(what string, ev watch.Event) { r.handleAt(what, ev, now()) }

// handleAt records the event as observed at at: when it came off the watch
// stream, which may be a moment before it is recorded (watch.go).
func (r *Recorder) handleAt(what string, ev watch.Event, at time.Time) {
	if ev.Type == watch.Bookmark || ev.Type == watch.Error {
		return
	}
	if p, ok := ev.Object.(*corev1.Pod); ok && what == evidence.WatchControllers {
		r.addController(string(ev.Type), p, at)
		return
	}
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		r.addPod(string(ev.Type), o, at)
	case *corev1.Event:
		r.addKubeEvent(string(ev.Type), o, at)
	case *corev1.Node:
		r.addNode(string(ev.Type), o, at)
	case *discoveryv1.EndpointSlice:
		r.addEndpointSlice(string(ev.Type), o, at)
	case *corev1.Namespace:
		r.addNamespace(string(ev.Type), o, at)
	}
}

// addController records one watch event on a controller's pod: whether it
// is Ready, how often its containers restarted, and the last exit.
func (r *Recorder) addController(typ string, p *corev1.Pod, at time.Time) {
	e := evidence.ControllerEvent{ObservedAt: at, Type: typ, Pod: p.Name, UID: string(p.UID), ResourceVersion: p.ResourceVersion, Node: p.Spec.NodeName}
	for _, c := range p.Status.Conditions {
		e.Ready = e.Ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
	}
	for _, c := range p.Status.ContainerStatuses {
		e.Restarts += c.RestartCount
		if t := c.LastTerminationState.Terminated; t != nil {
			e.LastExit = fmt.Sprintf("container %s exited %d (%s) at %s", c.Name, t.ExitCode, t.Reason, t.FinishedAt.UTC().Format(time.RFC3339))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.ControllerEvents = append(r.rec.ControllerEvents, e)
	r.appendLine(evidence.ControllersFile, e)
	r.broadcast()
}

// addNamespace records one watch event on a namespace of the run.
func (r *Recorder) addNamespace(typ string, ns *corev1.Namespace, at time.Time) {
	e := evidence.NamespaceEvent{ObservedAt: at, Type: typ, Name: ns.Name, ResourceVersion: ns.ResourceVersion, Phase: string(ns.Status.Phase)}
	if ns.DeletionTimestamp != nil {
		t := ns.DeletionTimestamp.UTC()
		e.DeletionTimestamp = &t
	}
	for _, f := range ns.Spec.Finalizers {
		e.Finalizers = append(e.Finalizers, string(f))
	}
	for _, c := range ns.Status.Conditions {
		nc := evidence.NamespaceCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		if !c.LastTransitionTime.IsZero() {
			t := c.LastTransitionTime.UTC()
			nc.LastTransitionTime = &t
		}
		e.Conditions = append(e.Conditions, nc)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.NamespaceEvents = append(r.rec.NamespaceEvents, e)
	r.appendLine(evidence.NamespacesFile, e)
	r.broadcast()
}

// WaitNamespace blocks until a recorded event of the namespace satisfies
// cond (events recorded before the call count), or ctx ends.
func (r *Recorder) WaitNamespace(ctx context.Context, name, what string, cond func(evidence.NamespaceEvent) bool) (evidence.NamespaceEvent, error) {
	for {
		ended := ctx.Err() != nil
		r.mu.Lock()
		for _, e := range r.rec.NamespaceEvents {
			if e.Name == name && cond(e) {
				r.mu.Unlock()
				return e, nil
			}
		}
		changed := r.changed
		r.mu.Unlock()
		if ended {
			return evidence.NamespaceEvent{}, fmt.Errorf("waiting for namespace %s to %s: %w", name, what, context.Cause(ctx))
		}
		waitChanged(ctx, changed)
	}
}

func (r *Recorder) addPod(typ string, pod *corev1.Pod, at time.Time) {
	// The object is the recorder's own (decoded from the stream or a LIST):
	// its type is stamped for the JSON and put back, no copy needed.
	// Saved without its env values and last-applied configuration
	// (internal/redact: no copy unless it has either).
	tm := pod.TypeMeta
	pod.APIVersion, pod.Kind = "v1", "Pod"
	raw, err := json.Marshal(redact.Pod(pod))
	pod.TypeMeta = tm
	if err != nil {
		raw = nil
	}
	e := evidence.PodEvent{ObservedAt: at, Type: typ, PodState: evidence.StateOf(pod), Object: raw}
	line, lineErr := podEventLine(e)
	// The whole object is in events.jsonl; memory keeps the state claims read.
	e.Object = nil
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil {
		r.stream.add(e)
	} else {
		r.rec.PodEvents = append(r.rec.PodEvents, e)
	}
	if lineErr != nil {
		r.appendLine(evidence.EventsFile, e)
	} else {
		r.appendRaw(evidence.EventsFile, line)
	}
	r.broadcast()
}

// podEventLine is e as one line of events.jsonl. The object, already
// compact JSON from json.Marshal, is spliced in as it is: encoding/json
// would check and compact its every byte again, which was a third of the
// recorder's CPU per event (BenchmarkRecorderProtobuf).
func podEventLine(e evidence.PodEvent) ([]byte, error) {
	object := e.Object
	e.Object = nil
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	const tail = `"object":null}`
	if len(object) == 0 || !bytes.HasSuffix(b, []byte(tail)) {
		return append(b, '\n'), nil
	}
	b = append(b[:len(b)-len(tail)], `"object":`...)
	b = append(b, object...)
	return append(b, '}', '\n'), nil
}

// appendRaw writes line (one JSON line, newline included); r.mu must be held.
func (r *Recorder) appendRaw(file string, line []byte) {
	f := r.files[file]
	if f == nil {
		return
	}
	if _, err := f.Write(line); err != nil && r.writeErr == nil {
		r.writeErr = fmt.Errorf("writing %s: %w", file, err)
	}
}

func (r *Recorder) addKubeEvent(typ string, ev *corev1.Event, at time.Time) {
	k := evidence.KubeEvent{
		ObservedAt: at, Type: typ, ResourceVersion: ev.ResourceVersion,
		Object: ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name,
		Reason: ev.Reason, Message: ev.Message, Count: ev.Count,
		Source: strings.TrimSpace(ev.Source.Component + " " + ev.Source.Host),
	}
	if k.Source == "" {
		k.Source = ev.ReportingController + " " + ev.ReportingInstance
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.KubeEvents = append(r.rec.KubeEvents, k)
	r.appendLine(evidence.KubeEventsFile, k)
	r.broadcast()
}

// addNode records the node's Ready condition when it differs from the last one recorded.
func (r *Recorder) addNode(typ string, node *corev1.Node, at time.Time) {
	if !contains(r.cfg.Nodes, node.Name) {
		return
	}
	n := evidence.NodeEventOf(typ, node, at)
	r.mu.Lock()
	defer r.mu.Unlock()
	if typ != "DELETED" {
		var last *evidence.NodeEvent
		for i := range r.rec.NodeEvents {
			if r.rec.NodeEvents[i].Name == n.Name {
				last = &r.rec.NodeEvents[i]
			}
		}
		if last != nil && last.Ready == n.Ready && last.Reason == n.Reason && strings.Join(last.Taints, ",") == strings.Join(n.Taints, ",") {
			return
		}
	}
	r.rec.NodeEvents = append(r.rec.NodeEvents, n)
	r.appendLine(evidence.NodesFile, n)
	r.broadcast()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// appendLine writes v as one JSON line; r.mu must be held.
func (r *Recorder) appendLine(file string, v any) {
	f := r.files[file]
	if f == nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if err != nil && r.writeErr == nil {
		r.writeErr = fmt.Errorf("writing %s: %w", file, err)
	}
}

// broadcast wakes every waiter; r.mu must be held.
func (r *Recorder) broadcast() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Stop ends the watches, writes record.json and closes the files. It returns
// the first error met while writing evidence.
func (r *Recorder) Stop() error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStepLocked("")
	r.rec.EndedAt = now()
	r.closeOpenGapsLocked()
	err := r.writeErr
	if werr := writeJSON(filepath.Join(r.cfg.Dir, evidence.RecordFile), r.rec); werr != nil && err == nil {
		err = werr
	}
	r.closeFiles()
	return err
}

func (r *Recorder) closeFiles() {
	for name, f := range r.files {
		f.Close()
		delete(r.files, name)
	}
}

// evidence.Record returns a copy of everything recorded so far.
func (r *Recorder) Record() *evidence.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handed != nil {
		c := *r.handed
		return &c
	}
	c := r.rec
	c.Steps = append([]evidence.Step(nil), r.rec.Steps...)
	c.Actions = append([]evidence.Action(nil), r.rec.Actions...)
	c.PodEvents = append([]evidence.PodEvent(nil), r.rec.PodEvents...)
	if r.stream != nil {
		c.PodEventsOnDisk(filepath.Join(r.cfg.Dir, evidence.EventsFile), r.stream.count)
	}
	if r.auditTail != nil && r.audit != nil {
		c.AuditOnDisk(filepath.Join(r.cfg.Dir, evidence.AuditFile), r.auditTail.count)
	}
	c.KubeEvents = append([]evidence.KubeEvent(nil), r.rec.KubeEvents...)
	c.NodeEvents = append([]evidence.NodeEvent(nil), r.rec.NodeEvents...)
	c.Snapshots = append([]evidence.Snapshot(nil), r.rec.Snapshots...)
	c.Containers = append([]evidence.ContainerObservation(nil), r.rec.Containers...)
	c.Notes = append([]evidence.Note(nil), r.rec.Notes...)
	c.Gaps = append(append([]evidence.WatchGap(nil), r.rec.Gaps...), r.openGapsLocked()...)
	c.Ledgers = append([]evidence.LedgerRead(nil), r.rec.Ledgers...)
	c.Lists = append([]evidence.PodList(nil), r.rec.Lists...)
	c.Clocks = append([]evidence.ClockOffset(nil), r.rec.Clocks...)
	c.EndpointSlices = append([]evidence.EndpointSliceEvent(nil), r.rec.EndpointSlices...)
	c.ProxyRules = append([]evidence.ProxyRulesRead(nil), r.rec.ProxyRules...)
	c.Requests = append([]evidence.Request(nil), r.rec.Requests...)
	c.RequestReads = append([]evidence.RequestsRead(nil), r.rec.RequestReads...)
	c.TaskExits = append([]evidence.TaskExit(nil), r.rec.TaskExits...)
	c.Journal = append([]evidence.JournalEntry(nil), r.rec.Journal...)
	c.Mounts = append([]evidence.MountLook(nil), r.rec.Mounts...)
	return &c
}

// HandOver is Record for the end of a run: after Stop, the record is
// handed over and the recorder lets go of its own copy (each pod's latest
// event and versions, the audit tail, the slices), so deciding the claims
// does not hold both. Record later returns the handed-over record again.
func (r *Recorder) HandOver() *evidence.Record {
	rec := r.Record()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec = evidence.Record{}
	if r.stream != nil {
		r.stream = newPodStream()
	}
	if r.auditTail != nil {
		r.auditTail = &auditTail{}
	}
	r.handed = rec
	return rec
}

// Dir is the run folder.
func (r *Recorder) Dir() string { return r.cfg.Dir }

// BeginStep starts a named step (ending the previous one) and returns a
// function that ends it with its outcome.
func (r *Recorder) BeginStep(name string) (end func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStepLocked("")
	r.rec.Steps = append(r.rec.Steps, evidence.Step{Name: name, StartedAt: now()})
	r.step = len(r.rec.Steps) - 1
	idx := r.step
	return func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if idx != r.step {
			return
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		r.endStepLocked(msg)
	}
}

func (r *Recorder) endStepLocked(errMsg string) {
	if r.step < 0 {
		return
	}
	s := &r.rec.Steps[r.step]
	if s.FinishedAt.IsZero() {
		s.FinishedAt = now()
		s.Error = errMsg
	}
	r.step = -1
}

// currentStep is the name of the running step ("" outside steps); r.mu must be held.
func (r *Recorder) currentStepLocked() string {
	if r.step < 0 {
		return ""
	}
	return r.rec.Steps[r.step].Name
}

// stepDirLocked is the folder for the current step's files, e.g. "steps/03-force-delete".
func (r *Recorder) stepDirLocked() string {
	if r.step < 0 {
		return "steps/00-outside-steps"
	}
	return fmt.Sprintf("steps/%02d-%s", r.step+1, slug(r.rec.Steps[r.step].Name))
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes a folder name of a step name: lower case, at most 5 words.
func slug(s string) string {
	words := strings.FieldsFunc(nonSlug.ReplaceAllString(strings.ToLower(s), " "), func(r rune) bool { return r == ' ' })
	if len(words) > 5 {
		words = words[:5]
	}
	return strings.Join(words, "-")
}

// uniquePathLocked returns dir/base+ext, with -2, -3 … when it was used before in this run.
func (r *Recorder) uniquePathLocked(dir, base, ext string) string {
	key := dir + "/" + base + ext
	r.seq[key]++
	if n := r.seq[key]; n > 1 {
		return fmt.Sprintf("%s/%s-%d%s", dir, base, n, ext)
	}
	return key
}

// Notef adds a note to the record, in the current step.
func (r *Recorder) Notef(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Notes = append(r.rec.Notes, evidence.Note{At: now(), Step: r.currentStepLocked(), Text: fmt.Sprintf(format, args...)})
}

// Act performs do and records it as an action: request is the exact request
// (marshalled to JSON), equivalent the command a user would type.
func (r *Recorder) Act(kind evidence.ActionKind, target string, request any, equivalent string, do func() error) (evidence.Action, error) {
	raw, err := json.Marshal(request)
	if err != nil {
		return evidence.Action{}, fmt.Errorf("recording the %s request on %s: %w", kind, target, err)
	}
	r.mu.Lock()
	a := evidence.Action{Step: r.currentStepLocked(), Kind: kind, Target: target, Request: raw, Equivalent: equivalent, StartedAt: now()}
	r.mu.Unlock()
	doErr := do()
	a.FinishedAt = now()
	if doErr != nil {
		a.Error = doErr.Error()
	}
	r.mu.Lock()
	r.rec.Actions = append(r.rec.Actions, a)
	r.appendLine(evidence.ActionsFile, a)
	r.broadcast()
	r.mu.Unlock()
	return a, doErr
}

// WaitPod blocks until a recorded event of the pod satisfies cond (events
// recorded before the call count), or ctx ends. It waits on the watch, it
// does not poll. On timeout the error says what was last seen.
func (r *Recorder) WaitPod(ctx context.Context, pod, what string, cond func(evidence.PodEvent) bool) (evidence.PodEvent, error) {
	if r.stream != nil {
		return r.waitPodStream(ctx, pod, what, cond)
	}
	checked := 0
	for {
		ended := ctx.Err() != nil // give up only after a look that began after ctx ended
		r.mu.Lock()
		var last *evidence.PodEvent
		for i := range r.rec.PodEvents {
			e := &r.rec.PodEvents[i]
			if e.Name != pod {
				continue
			}
			last = e
			if i >= checked && cond(*e) {
				found := *e
				r.mu.Unlock()
				return found, nil
			}
		}
		checked = len(r.rec.PodEvents)
		changed := r.changed
		lastSeen := "no event of the pod"
		if last != nil {
			lastSeen = evidence.Describe(*last)
		}
		r.mu.Unlock()
		if ended {
			return evidence.PodEvent{}, fmt.Errorf("waiting for pod %s to %s: %w (last seen: %s)", pod, what, context.Cause(ctx), lastSeen)
		}
		waitChanged(ctx, changed)
	}
}

// WaitNode blocks until a recorded Ready-condition change of the node
// satisfies cond, or ctx ends.
func (r *Recorder) WaitNode(ctx context.Context, node, what string, cond func(evidence.NodeEvent) bool) (evidence.NodeEvent, error) {
	for {
		ended := ctx.Err() != nil
		r.mu.Lock()
		lastSeen := "nothing recorded"
		for _, e := range r.rec.NodeEvents {
			if e.Name != node {
				continue
			}
			lastSeen = fmt.Sprintf("Ready=%s (%s) at %s", e.Ready, e.Reason, e.ObservedAt.Format(time.RFC3339Nano))
			if cond(e) {
				r.mu.Unlock()
				return e, nil
			}
		}
		changed := r.changed
		r.mu.Unlock()
		if ended {
			return evidence.NodeEvent{}, fmt.Errorf("waiting for node %s to %s: %w (last seen: %s)", node, what, context.Cause(ctx), lastSeen)
		}
		waitChanged(ctx, changed)
	}
}

// waitRecorded blocks until an item of the record's list (items recorded
// before the call count) satisfies cond, or ctx ends; failed words the error
// from how many items were recorded and why the wait ended.
func waitRecorded[T any](ctx context.Context, r *Recorder, list func(*evidence.Record) []T, cond func(T) bool, failed func(n int, cause error) error) (T, error) {
	for {
		ended := ctx.Err() != nil // give up only after a look that began after ctx ended
		r.mu.Lock()
		items := list(&r.rec)
		for _, e := range items {
			if cond(e) {
				r.mu.Unlock()
				return e, nil
			}
		}
		n := len(items)
		changed := r.changed
		r.mu.Unlock()
		if ended {
			var zero T
			return zero, failed(n, context.Cause(ctx))
		}
		waitChanged(ctx, changed)
	}
}

// waitChanged blocks until the record changes or ctx ends. The waits give up
// only after a look at the record that began once ctx had ended: when an
// event is recorded just as the bound runs out, both cases here are ready and
// select picks one at random; a recorded event must not be lost to that.
func waitChanged(ctx context.Context, changed <-chan struct{}) {
	select {
	case <-changed:
	case <-ctx.Done():
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), evidence.PrivateFile); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// createPrivate creates (truncates) a file of the run folder, readable by
// its owner alone.
func createPrivate(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, evidence.PrivateFile)
}

// now is the observation clock: wall time in UTC, without the monotonic reading.
func now() time.Time { return time.Now().UTC().Round(0) }

// WaitEvents hands every recorded pod event to visit exactly once, in the
// order recorded (those recorded before the call first), until visit returns
// true or ctx ends. Unlike WaitPod it never looks at an event twice, so a
// lab waiting on thousands of pods costs one pass over the record.
//
// With Config.EventsOnDisk, of the events recorded before the call only
// each pod's latest is visited (the others are on disk only).
func (r *Recorder) WaitEvents(ctx context.Context, what string, visit func(evidence.PodEvent) bool) error {
	if r.stream != nil {
		return r.waitStream(ctx, what, visit)
	}
	next := 0
	return r.visitBatches(ctx, what, func() ([]evidence.PodEvent, int) {
		// The recorder only appends, so the batch stays valid unlocked.
		batch := r.rec.PodEvents[next:len(r.rec.PodEvents):len(r.rec.PodEvents)]
		next = len(r.rec.PodEvents)
		return batch, next
	}, visit)
}

// visitBatches hands visit every event of the batches take returns (called
// with r.mu held, after each change of the record) until visit returns true
// or ctx ends; recorded is how many pod events there are, for the error.
func (r *Recorder) visitBatches(ctx context.Context, what string, take func() (batch []evidence.PodEvent, recorded int), visit func(evidence.PodEvent) bool) error {
	for {
		ended := ctx.Err() != nil
		r.mu.Lock()
		batch, recorded := take()
		changed := r.changed
		r.mu.Unlock()
		for _, e := range batch {
			if visit(e) {
				return nil
			}
		}
		if ended {
			return fmt.Errorf("waiting for %s: %w (%d pod events recorded)", what, context.Cause(ctx), recorded)
		}
		waitChanged(ctx, changed)
	}
}

// listPage is how many pods one page of ListPods holds.
const listPage = 500

// ListPods LISTs the run's pods (the recorder's own selector) and adds the
// answer to the record, in the current step: names, UIDs, resourceVersions
// and finalizers, to check the watch's record against.
func (r *Recorder) ListPods(ctx context.Context, why string) (evidence.PodList, error) {
	at := now()
	pl := evidence.PodList{Why: why, At: at}
	// A page at a time: a LIST of 50,000 whole pods, decoded at once, is
	// most of a gigabyte; each page is read down to what the record keeps.
	// The pages after the first are served from the first one's snapshot.
	opts := metav1.ListOptions{LabelSelector: r.cfg.PodSelector, Limit: listPage}
	for {
		l, err := r.cfg.Client.CoreV1().Pods(r.cfg.Namespace).List(ctx, opts)
		if err != nil {
			return evidence.PodList{}, fmt.Errorf("listing the run's pods (%s, %d listed so far): %w", why, len(pl.Pods), err)
		}
		if pl.ResourceVersion == "" {
			pl.ResourceVersion = l.ResourceVersion
		}
		for _, p := range l.Items {
			pl.Pods = append(pl.Pods, evidence.ListedPod{Name: p.Name, UID: string(p.UID), ResourceVersion: p.ResourceVersion, Finalizers: p.Finalizers})
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	pl.Step = r.currentStepLocked()
	r.rec.Lists = append(r.rec.Lists, pl)
	r.broadcast()
	return pl, nil
}
