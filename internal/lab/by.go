package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/nodeunit"
)

// Who does a lab's actions (Options.By).
const (
	// ByTermlab: termlab sends every request itself (the default).
	ByTermlab = ""
	// ByScript: scripts/<lab>.sh does each action (`scripts/<lab>.sh <kind> <target>`),
	// unattended; termlab waits until the audit log or the node shows it.
	ByScript = "script"
	// ByYou: a person types each action's command; termlab prints it, waits
	// until the audit log or the node shows it, names a wrong command and
	// waits for the right one (or "skip").
	ByYou = "you"
)

// ParseBy checks a -by value.
func ParseBy(s string) (string, error) {
	switch s {
	case "", "termlab":
		return ByTermlab, nil
	case ByScript, ByYou:
		return s, nil
	}
	return "", fmt.Errorf("-by=%q: want termlab, script or you", s)
}

// ScriptPath is a lab's script: scripts/<name>.sh in the repository.
func ScriptPath(root, lab string) string { return filepath.Join(root, "scripts", lab+".sh") }

// Bounds of waiting for someone else's action to show.
const (
	scriptShows = 15 * time.Second // after the script's step returned
	auditEvery  = 250 * time.Millisecond
	nodeEvery   = 200 * time.Millisecond
)

// asker is someone other than termlab doing the actions: a script or a
// person. termlab asks for each action and waits until it shows.
type asker interface {
	// ask has the action done: the script runs its step, a person is shown
	// the command. skipped is closed when a person gives up on the step.
	ask(ctx context.Context, r *Run, kind evidence.ActionKind, target, command string) (skipped <-chan struct{}, err error)
	// wrong says that what was seen is not what the step wants; a script
	// fails the step, a person may try again (retry true).
	wrong(r *Run, msg string) (retry bool)
	// done says the step was seen.
	done(r *Run, what string)
	// showsWithin bounds the wait for an action to show after ask returned
	// (0: no bound; a person takes the time they need). what names the
	// action and where it is looked for.
	showsWithin(what, why string) (time.Duration, error)
}

// expectation decides whether an audit event is the asked-for request.
type expectation struct {
	verbs    []string // e.g. delete; patch or update
	resource string   // pods, nodes
	// check says what is wrong with a request of the right verb on the right
	// object ("" when it is the one the step wants).
	check func(evidence.AuditEvent) string
	// path is the request's path as the record keeps it ("": the pod's,
	// the namespace's or the node's, by resource).
	path string
}

func (x expectation) matches(e evidence.AuditEvent, target string, since time.Time) bool {
	if !e.ByPerson() || e.Resource != x.resource || e.Name != target || e.Subresource != "" || e.ReceivedAt.Before(since) {
		return false
	}
	for _, v := range x.verbs {
		if e.Verb == v {
			return true
		}
	}
	return false
}

// errSkipped is what byOther and byOtherOnNode return when the participant
// skipped the action: no error for the run (perform counts it as none; the
// claims that need the action fail on their own), but the run must not book
// it as done: a kubelet whose start was skipped is still stopped, and
// cleanup starts it.
var errSkipped = errors.New("skipped by the participant")

// byOther has the actor do an API action and records it from the API
// server's audit log: the action's request and times are the server's.
func (r *Run) byOther(ctx context.Context, a asker, kind evidence.ActionKind, target, command string, x expectation) error {
	since := time.Now().Add(-auditSlackSend)
	if _, err := r.Rec.ReadAudit(ctx); err != nil {
		return err
	}
	skipped, err := a.ask(ctx, r, kind, target, command)
	if err != nil {
		return fmt.Errorf("%s of %s: %w", kind, target, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if skipped != nil {
		go func() {
			select {
			case <-skipped:
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	if within, cause := a.showsWithin(string(kind)+" of "+target+" in the API server's audit log",
		fmt.Sprintf("a request the script's kubectl had answered is in the log at once; it is read every %s", auditEvery)); within > 0 {
		var c context.CancelFunc
		wctx, c = context.WithTimeoutCause(wctx, within, cause)
		defer c()
	}
	seen := map[string]bool{}
	for {
		e, err := r.Rec.WaitAudit(wctx, fmt.Sprintf("%s %s/%s", strings.Join(x.verbs, " or "), x.resource, target), auditEvery, func(e evidence.AuditEvent) bool {
			return !seen[e.AuditID] && x.matches(e, target, since)
		})
		if err != nil {
			if skipped != nil && ctx.Err() == nil && wctx.Err() != nil {
				r.Rec.Notef("the participant skipped %s of %s", kind, target)
				r.Log.Warnf("skipped: %s of %s (the claims that need it will fail)", kind, target)
				return errSkipped
			}
			return fmt.Errorf("%s of %s was not seen in the API server's audit log: %w", kind, target, err)
		}
		seen[e.AuditID] = true
		msg := x.check(e)
		if e.DryRun {
			msg = fmt.Sprintf("saw %s as a server-side dry run, which changes nothing; this step wants the real request", describeRequest(e))
		}
		if msg != "" {
			if !e.Succeeded() {
				msg = fmt.Sprintf("saw %s answered %d", describeRequest(e), e.Code)
			}
			if a.wrong(r, msg) {
				continue
			}
			return fmt.Errorf("%s of %s: %s", kind, target, msg)
		}
		if !e.Succeeded() {
			if a.wrong(r, fmt.Sprintf("saw %s answered %d", describeRequest(e), e.Code)) {
				continue
			}
			return fmt.Errorf("%s of %s: the API server answered %d", kind, target, e.Code)
		}
		r.recordFromAudit(kind, target, command, e, x.path)
		a.done(r, describeRequest(e))
		return nil
	}
}

// auditSlackSend allows for the request being stamped a little before termlab asked.
const auditSlackSend = 50 * time.Millisecond

// describeRequest is "DELETE pods/held with gracePeriodSeconds 30 (kubectl/v1.37.2)".
func describeRequest(e evidence.AuditEvent) string {
	s := strings.ToUpper(e.Verb) + " " + e.Object()
	if e.Verb == "delete" && e.Resource == "pods" {
		if e.GracePeriodSeconds != nil {
			s += fmt.Sprintf(" with gracePeriodSeconds %d", *e.GracePeriodSeconds)
		} else {
			s += " with no gracePeriodSeconds (the pod's own applies)"
		}
	}
	if len(e.Patch) > 0 {
		s += " " + string(e.Patch)
	}
	if e.Resource == "nodes" && e.Taints != nil {
		s += fmt.Sprintf(" (taints now %v)", e.Taints)
	}
	if agent, _, _ := strings.Cut(e.UserAgent, " "); agent != "" {
		s += " (" + agent + ")"
	}
	return s
}

// recordFromAudit records the action as the API server received it.
func (r *Run) recordFromAudit(kind evidence.ActionKind, target, command string, e evidence.AuditEvent, path string) {
	switch {
	case path != "":
	case e.Resource == "pods":
		path = r.podsPath(target)
	case e.Resource == "namespaces":
		path = "/api/v1/namespaces/" + target
	default:
		path = "/api/v1/nodes/" + target
	}
	body := map[string]any{}
	if e.GracePeriodSeconds != nil {
		body["gracePeriodSeconds"] = *e.GracePeriodSeconds
	}
	if e.PropagationPolicy != "" {
		body["propagationPolicy"] = e.PropagationPolicy
	}
	if len(e.Patch) > 0 {
		body["patch"] = json.RawMessage(e.Patch)
	}
	req, _ := json.Marshal(map[string]any{
		"verb": map[string]string{"create": "POST", "delete": "DELETE", "patch": "PATCH", "update": "PUT"}[e.Verb],
		"path": path, "body": body, "from": "audit log", "auditID": e.AuditID, "user": e.User, "userAgent": e.UserAgent,
	})
	a := r.Rec.Recorded(evidence.Action{Kind: kind, Target: target, Request: req, Equivalent: command, StartedAt: e.ReceivedAt, FinishedAt: e.CompletedAt})
	r.emit(Event{Kind: ActionSent, Step: a.Step, Action: &a})
}

// Expectations of the API actions.
func deleteExpect(force bool) expectation {
	return expectation{verbs: []string{"delete"}, resource: "pods", check: func(e evidence.AuditEvent) string {
		zero := e.GracePeriodSeconds != nil && *e.GracePeriodSeconds == 0
		switch {
		case force && !zero:
			return fmt.Sprintf("saw %s; this step wants gracePeriodSeconds 0 (--force --grace-period=0)", describeRequest(e))
		case !force && zero:
			return fmt.Sprintf("saw %s; this step wants an ordinary delete (no --force, no --grace-period)", describeRequest(e))
		}
		return ""
	}}
}

var deleteNamespaceExpect = expectation{verbs: []string{"delete"}, resource: "namespaces", check: func(evidence.AuditEvent) string { return "" }}

var removeFinalizersExpect = expectation{verbs: []string{"patch", "update"}, resource: "pods", check: func(e evidence.AuditEvent) string {
	if strings.Contains(string(e.Patch), `"finalizers":null`) || strings.Contains(string(e.Patch), `"finalizers":[]`) {
		return ""
	}
	return fmt.Sprintf("saw %s; this step wants the finalizers removed ({\"metadata\":{\"finalizers\":null}})", describeRequest(e))
}}

func taintExpect(key, effect string, present bool) expectation {
	return expectation{verbs: []string{"patch", "update"}, resource: "nodes", check: func(e evidence.AuditEvent) string {
		has := false
		for _, t := range e.Taints {
			has = has || t == key+":"+effect
		}
		if has == present {
			return ""
		}
		if present {
			return fmt.Sprintf("saw %s; the node's taints are now %v, without %s:%s", describeRequest(e), e.Taints, key, effect)
		}
		return fmt.Sprintf("saw %s; the node still has taint %s:%s", describeRequest(e), key, effect)
	}}
}

// unitChange is an action on a node that a systemd unit's state shows: the
// kubelet stopped or started, a process that holds a mount started or ended.
type unitChange struct {
	kind evidence.ActionKind // the action's kind: stop-kubelet, hold-mount …
	unit string              // the unit, as systemctl names it
	// active is the state the action leads to.
	active bool
	// what names the unit in the run's words ("the kubelet").
	what string
}

// byOtherOnNode has the actor make the change on node and waits until
// systemd on the node says so; the action is recorded at systemd's moment.
func (r *Run) byOtherOnNode(ctx context.Context, a asker, c unitChange, node cluster.Node, command string) error {
	kind := c.kind
	lastBefore := time.Now().UTC() // the unit's state is known up to here
	skipped, err := a.ask(ctx, r, kind, node.String(), command)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", kind, node, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if within, cause := a.showsWithin(string(kind)+" on "+node.String()+" seen by systemctl on the node",
		fmt.Sprintf("systemctl stop and start return once the unit changed; the node is asked every %s", nodeEvery)); within > 0 {
		var cc context.CancelFunc
		wctx, cc = context.WithTimeoutCause(wctx, within, cause)
		defer cc()
	}
	for {
		// Give up only after a look that began once the bound had run out.
		ended := wctx.Err() != nil
		sctx, scancel := wctx, context.CancelFunc(func() {})
		if ended && ctx.Err() == nil {
			sctx, scancel = context.WithTimeout(ctx, nodeLastLook)
		}
		state, err := nodeunit.State(sctx, node, c.unit)
		scancel()
		at := time.Now().UTC()
		if err == nil && (state == "active") == c.active {
			seen := map[string]any{"node": node.String(), "seen": "systemctl is-active " + c.unit + ": " + state, "from": "the node"}
			// Between two looks the change is known only to their interval
			// (seconds, on a loaded machine); systemd knows its moment.
			from, to := lastBefore, at
			if changed, ok := r.unitChangedAt(ctx, node, c.unit, c.active, lastBefore, at); ok {
				from, to = changed, changed
				seen["systemd"] = fmt.Sprintf("the unit entered %s at %s (node clock); termlab's looks bracketed it between %s and %s", state, changed.Format(time.RFC3339Nano), lastBefore.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
			}
			req, _ := json.Marshal(seen)
			act := r.Rec.Recorded(evidence.Action{Kind: kind, Target: node.String(), Request: req, Equivalent: command, StartedAt: from, FinishedAt: to})
			r.emit(Event{Kind: ActionSent, Step: act.Step, Action: &act})
			a.done(r, c.what+" on "+node.String()+" is "+state)
			return nil
		}
		lastBefore = at
		// A skip and the bound's end are read in a fixed order, not left to
		// select: a skip typed as the bound ran out is a skip.
		if isClosed(skipped) {
			r.Rec.Notef("the participant skipped %s on %s", kind, node)
			r.Log.Warnf("skipped: %s on %s (the claims that need it will fail)", kind, node)
			return errSkipped
		}
		if ended {
			return fmt.Errorf("%s on %s was not seen on the node (%s %s): %w", kind, node, c.unit, state, context.Cause(wctx))
		}
		select {
		case <-wctx.Done():
		case <-skipped:
		case <-time.After(nodeEvery):
		}
	}
}

// nodeLastLook bounds the look at the node after the wait's bound ran out.
const nodeLastLook = 5 * time.Second

// isClosed reports whether ch is closed (nil: never).
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// scriptActor runs scripts/<lab>.sh <kind> <target> for each action.
type scriptActor struct {
	path string
	env  []string
	log  io.Writer // script.log in the run folder
}

func (s *scriptActor) ask(ctx context.Context, r *Run, kind evidence.ActionKind, target, command string) (<-chan struct{}, error) {
	r.Infof("script: %s %s %s", filepath.Base(s.path), kind, target)
	fmt.Fprintf(s.log, "### %s %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), filepath.Base(s.path), kind, target)
	cmd := osexec.CommandContext(ctx, "bash", s.path, string(kind), target)
	cmd.Env = s.env
	var out strings.Builder
	w := io.MultiWriter(s.log, &out)
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if line != "" {
			r.Infof("  | %s", line)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", s.path, kind, target, err)
	}
	return nil, nil
}

func (s *scriptActor) wrong(r *Run, msg string) bool {
	r.Log.Warnf("the script did the wrong thing: %s", msg)
	return false
}

func (s *scriptActor) done(r *Run, what string) { r.Infof("seen: %s", what) }

// showsWithin: a script's step has done its action when it returns.
func (s *scriptActor) showsWithin(what, why string) (time.Duration, error) {
	return scriptShows, &BoundError{Bound: Bound{What: "the script's " + what, Allow: scriptShows, Why: why}, After: "the script's return"}
}

// youActor shows a person each command and reads "skip" from their terminal.
type youActor struct {
	out     io.Writer
	mu      sync.Mutex
	current chan struct{} // the step waiting for its action; closed on "skip"
}

func newYouActor(in io.Reader, out io.Writer) *youActor {
	y := &youActor{out: out}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l == "skip" || l == "s" {
				y.mu.Lock()
				if y.current != nil {
					close(y.current)
					y.current = nil
				}
				y.mu.Unlock()
			}
		}
	}()
	return y
}

func (y *youActor) ask(ctx context.Context, r *Run, kind evidence.ActionKind, target, command string) (<-chan struct{}, error) {
	skipped := make(chan struct{})
	y.mu.Lock()
	y.current = skipped
	y.mu.Unlock()
	fmt.Fprintf(y.out, "\n>>> Your turn (%s %s). In another terminal, type:\n\n    %s\n\n    (termlab waits until the API server's audit log or the node shows it; type skip and Enter here to give up on this step)\n", kind, target, command)
	return skipped, nil
}

func (y *youActor) wrong(r *Run, msg string) bool {
	fmt.Fprintf(y.out, "\n!!! Not this step's command: %s. Try again.\n", msg)
	r.Rec.Notef("a wrong command: %s", msg)
	return true
}

func (y *youActor) showsWithin(string, string) (time.Duration, error) { return 0, nil }

func (y *youActor) done(r *Run, what string) {
	y.mu.Lock()
	y.current = nil
	y.mu.Unlock()
	fmt.Fprintf(y.out, "ok: seen %s\n", what)
}

// newActor makes the actor of Options.By for the lab.
func (r *Run) newActor(def Definition) (actor, func(), error) {
	switch r.opts.By {
	case ByTermlab:
		return byTermlab, func() {}, nil
	case ByYou:
		in, out := r.opts.In, r.opts.Out
		if in == nil {
			in = os.Stdin
		}
		if out == nil {
			out = os.Stdout
		}
		path := "PATH  # kubectl: none could be taken from the control-plane node"
		if kubectl, err := Kubectl(context.Background(), r.Env.ControlPlane); err == nil {
			path = fmt.Sprintf("PATH=%s:$PATH   # a kubectl of the cluster's version", filepath.Dir(kubectl))
		}
		fmt.Fprintf(out, "\n%s by you: namespace %s. In another terminal:\n\n    export KUBECONFIG=%s\n    export %s\n\n", def.Title(), r.Namespace, r.Env.KubeconfigPath, path)
		return someoneElse{newYouActor(in, out)}, func() {}, nil
	case ByScript:
		path := ScriptPath(r.opts.RepoRoot, def.Name)
		if _, err := os.Stat(path); err != nil {
			return nil, nil, fmt.Errorf("%s has no script: %w", def.Title(), err)
		}
		env, err := r.scriptEnv(def.Uses.Worker)
		if err != nil {
			return nil, nil, err
		}
		f, err := os.OpenFile(filepath.Join(r.Dir, "script.log"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, evidence.PrivateFile)
		if err != nil {
			return nil, nil, err
		}
		return someoneElse{&scriptActor{path: path, env: env, log: f}}, func() { f.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unknown -by=%q", r.opts.By)
}

// scriptEnv is the script's environment: the run's namespace and worker,
// the cluster's kubeconfig, and a kubectl of the cluster's own version first
// on PATH (Kubectl).
func (r *Run) scriptEnv(worker int) ([]string, error) {
	kubectl, err := Kubectl(context.Background(), r.Env.ControlPlane)
	if err != nil {
		return nil, err
	}
	node := ""
	if worker < len(r.Env.Workers) {
		node = r.Env.Workers[worker].String()
	}
	env := append(os.Environ(),
		"NS="+r.Namespace, "NODE="+node, "KUBECONFIG="+r.Env.KubeconfigPath, "IMAGE="+r.Env.WorkloadImage,
		"PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	return env, nil
}

var kubectlOnce sync.Mutex

// Kubectl returns a kubectl of the cluster's own version, taken once from
// the control-plane node (every kind node image carries /usr/bin/kubectl),
// so a fresh machine needs none: ~/.cache/termlab/kubectl/<node image id>/kubectl.
func Kubectl(ctx context.Context, cp cluster.Node) (string, error) {
	path, err := kubectlFromNode(ctx, cp)
	if err == nil {
		return path, nil
	}
	// A cluster that is not termlab's: the machine's own kubectl, if any.
	if own, lerr := osexec.LookPath("kubectl"); lerr == nil {
		return own, nil
	}
	return "", fmt.Errorf("%w; and there is no kubectl on PATH", err)
}

func kubectlFromNode(ctx context.Context, cp cluster.Node) (string, error) {
	if cp == nil || !cluster.HasAccess(cp) {
		return "", errors.New("no control-plane node to take kubectl from")
	}
	kubectlOnce.Lock()
	defer kubectlOnce.Unlock()
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	var ver strings.Builder
	vc := cp.CommandContext(ctx, "cat", "/kind/version")
	vc.SetStdout(&ver)
	if err := vc.Run(); err != nil {
		return "", fmt.Errorf("reading the node's Kubernetes version: %w", err)
	}
	dir := filepath.Join(cache, "termlab", "kubectl", strings.TrimSpace(ver.String()))
	path := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "kubectl-*")
	if err != nil {
		return "", err
	}
	cmd := cp.CommandContext(ctx, "cat", "/usr/bin/kubectl")
	cmd.SetStdout(tmp)
	err = cmd.Run()
	tmp.Close()
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("taking kubectl from %s: %w", cp, err)
	}
	return path, nil
}

// unitChangedAt is systemd's time of the unit's change, when it lies
// between termlab's two looks (give or take the node clock's second of
// slack): a time outside them is an earlier change, not this one.
func (r *Run) unitChangedAt(ctx context.Context, node cluster.Node, unit string, active bool, after, before time.Time) (time.Time, bool) {
	const slack = time.Second
	t, err := nodeunit.ChangedAt(ctx, node, unit, active)
	if err != nil || t.Before(after.Add(-slack)) || t.After(before.Add(slack)) {
		return time.Time{}, false
	}
	return t, true
}
