// Package lab runs one lab: it gives the run an id, a namespace and a
// results folder, repairs what earlier killed runs left behind, records the
// run with internal/evidence, runs the lab's steps, cleans up on every exit
// path (error, failed claim, timeout, Ctrl-C, SIGTERM), decides the claims
// and writes the reports.
package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/heapprof"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/version"
)

// Labels on every object a run creates.
const (
	RunIDLabel = "termlab.dev/run-id"
	LabLabel   = "termlab.dev/lab"
	// KeepLabel marks a namespace kept for inspection (Options.Keep): later
	// runs leave it alone instead of repairing it.
	KeepLabel = "termlab.dev/keep"
)

// Options tune a run; the zero value is the default.
type Options struct {
	// ResultsDir is where run folders go (default: results/ in the repository).
	ResultsDir string
	// RepoRoot is the repository, for copying the kind config and kwok stages
	// into the run folder (default: found from the working directory).
	RepoRoot string
	// Keep leaves the run's namespace and pods (finalizers included) for
	// inspection. A stopped kubelet is restarted all the same.
	Keep bool
	// Timeout bounds the lab's steps (default 10 minutes).
	Timeout time.Duration
	// Log receives the progress lines (default progress.Default()).
	Log *progress.Logger
	// Events, if set, receives the run's structured events (see Event), in
	// order, from the goroutine that runs the lab; it must not block long.
	Events func(Event)
	// By says who does the lab's actions while its steps run: termlab
	// (ByTermlab, the default), scripts/<lab>.sh (ByScript) or a person at
	// In/Out (ByYou, default the terminal). termlab still creates the pods,
	// observes and cleans up; the actions are then recorded from the API
	// server's audit log and the node (by.go).
	By  string
	In  io.Reader
	Out io.Writer
	// NoWait refuses the run at once, instead of waiting, while another
	// termlab holds the cluster's run lock.
	NoWait bool
}

// Definition is one lab: everything the targets, the workshop, its guide,
// the README and the tests need to know about it. Every lab registers its
// Definition in labs/registry.go; nothing else lists labs.
type Definition struct {
	// Name is the lab's short name, e.g. "finalizer" (namespace
	// termlab-finalizer-<run id>, target lab:finalizer, folder labs/finalizer).
	Name string
	// Question is what the lab asks, shown at the top of its report.
	Question string
	// Summary is one line on what the lab shows, for tables of labs.
	Summary string
	// Predict is what a workshop asks the room to predict before the lab
	// runs (WORKSHOP.md's trainer notes; the answer is the reference run's).
	Predict string
	// Uses says which nodes the lab uses and what it does to them.
	Uses Uses
	// Manifests are the pod manifests (files of manifests/pods) the lab uses.
	Manifests []string
	// ByHand is the experiment as a person would type it, step by step.
	ByHand []HandStep
	// Steps run the experiment. They return an error only when the run
	// cannot go on; what they observed is decided by Claims.
	Steps func(ctx context.Context, r *Run) error
	// StepsBound, if set, is the lab's own bound on all its steps, when it
	// grows with the run (lab:scale's with -pods): it replaces
	// Options.Timeout where it is longer.
	StepsBound func() Bound
	// Claims decides the lab's claims from the record.
	Claims func(rec *evidence.Record) []claims.Claim
	// Report, if set, renders the lab's own sections of report.md from the
	// decided record (pure, like Claims).
	Report func(rec *evidence.Record, decided []claims.Claim) []report.Section
	// Answer, if set, answers Question with this run's numbers, from the
	// decided claims' observed values (pure); a failed claim must be said.
	// It opens report.md.
	Answer func(rec *evidence.Record, decided []claims.Claim) string
	// Moments, if set, are what the lab knows happened besides its actions
	// (lab:scale: the namespace gone), for the picture (pure).
	Moments func(rec *evidence.Record) []report.Marker
}

// Title is "lab:<name>", also its mage target.
func (d Definition) Title() string { return "lab:" + d.Name }

// ReportRun is what the reports render for a run of the lab: the summary,
// the record, and the lab's own answer and sections decided from them.
func (d Definition) ReportRun(s report.Summary, rec *evidence.Record, decided []claims.Claim) report.Run {
	run := report.Run{Summary: s, Record: rec, Title: d.Title(), Question: d.Question}
	if d.Report != nil {
		run.Sections = d.Report(rec, decided)
	}
	if d.Answer != nil {
		run.Answer = d.Answer(rec, decided)
		run.Summary.Answer = run.Answer
	}
	if d.Moments != nil {
		run.Moments = d.Moments(rec)
	}
	if a := AuditSection(rec); a != nil {
		run.Sections = append(run.Sections, *a)
	}
	return run
}

// Uses says what a lab needs of the cluster and does to it.
type Uses struct {
	// Worker is the real worker (index in name order) the lab's real pods run on.
	Worker int
	// FakeNode: the lab also runs pods on kwok fake nodes.
	FakeNode bool
	// FakeNodeOptional: the fake-node part is a part, not the lab: on a
	// cluster without kwok the lab runs the rest, and that part's claims
	// are not checked (the run is partial) instead of the lab refused.
	FakeNodeOptional bool
	// NeedsNodeAccess: the lab's steps read the nodes (the workloads' own
	// logs, kube-proxy's rules) to go on, not only to decide claims: through
	// a kubeconfig it runs only with -nodeaccess.
	NeedsNodeAccess bool
	// EndpointSlices: the recorder also watches the run's EndpointSlices.
	EndpointSlices bool
	// ManyPods: the lab runs thousands of pods; the recorder keeps their
	// events in events.jsonl and audit.jsonl only (recorder.Config.EventsOnDisk), so the
	// run's memory does not grow with them.
	ManyPods bool
	// Namespaces: the lab makes namespaces and cluster-scoped objects of its
	// own, named and labelled with the run's id; the recorder watches those
	// namespaces and keeps the audit log's requests on anything named with
	// the id. Repair removes what a killed run left of them (change_namespace.go).
	Namespaces bool
	// Changes are the changes the lab makes to the cluster besides its
	// namespace, one value of each kind (change.go), e.g.
	// lab.KubeletStop{DownAtMost: …}: canRun asks each one's guard,
	// cleanup and an interrupt its undo, and the run refuses to make a
	// change the lab did not declare.
	Changes []Change
}

// ToleratesCordon lets a lab's pod onto the node named for faults on a
// cluster termlab did not make, which must be cordoned (the fault node
// guard): the scheduler's NodeUnschedulable filter lets a pod that
// tolerates this taint onto a cordoned node, as it does DaemonSet pods.
var ToleratesCordon = corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// HandStep is one step of a lab as a person would do it by hand. Commands
// may use {ns} (the run's namespace), {pod}, {node} (the lab's worker) and
// {kubeconfig}; Fill replaces them.
type HandStep struct {
	Title string
	// Pod is the pod the step is about ("" for none).
	Pod string
	// Do are the commands that change something; See those that show the result.
	Do, See []string
}

// Fill returns the command with the placeholders replaced.
func Fill(cmd, ns, pod, node string) string {
	return strings.NewReplacer("{ns}", ns, "{pod}", pod, "{node}", node).Replace(cmd)
}

// cleanupTimeout bounds cleanup, which runs with its own context so that it
// also runs after the lab's context was cancelled.
const cleanupTimeout = 2 * time.Minute

// repairTimeout bounds the repair of leftovers before a run.
const repairTimeout = 3 * time.Minute

// Execute runs the lab on the cluster and returns its summary. The error is
// non-nil when the run could not be completed or its evidence is not
// trustworthy; a failed claim shows as Summary.Verdict "fail", not as an
// error. Either way the results folder is written.
//
// A run goes through named phases, as kind's create does (phases.go):
// begin, set up, the lab's steps, then finish and decide, which run on
// every exit path.
func Execute(parent context.Context, env *cluster.Env, def Definition, opts Options) (*report.Summary, error) {
	opts.defaults()
	if env == nil || env.Client == nil {
		return nil, errors.New("the lab needs a cluster: Env has no API client")
	}
	if env.RESTConfig == nil {
		return nil, errors.New("the lab needs a cluster: Env has no REST config for the run lock")
	}
	if err := canRun(env, def); err != nil {
		return nil, err
	}
	env = withFaultNode(env, def)
	if def.Uses.ManyPods {
		defer memoryGuard(opts.Log)()
	}
	// SIGHUP too: a dropped SSH session must clean up like Ctrl-C.
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stopSignals()
	x := &execution{def: def, opts: opts, log: opts.Log, closeActor: func() {}}
	defer x.exit()
	err := runPhases(ctx, x.phases(env))
	if x.summary == nil { // not set up: begin or set up removed what it made
		return nil, err
	}
	return x.summary, x.err
}

// heapAt logs the heap's figures and writes a profile at a point of the
// run, when TERMLAB_HEAPPROFILE_DIR asks for it.
func (x *execution) heapAt(point string) {
	if line := heapprof.At(point); line != "" {
		x.log.Infof("%s", line)
	}
}

// execution is one run of a lab on its way through Execute's phases.
type execution struct {
	def     Definition
	opts    Options
	log     *progress.Logger
	r       *Run
	lock    *runlock.Lock
	started time.Time
	// repairs are what setUp repaired of earlier runs.
	repairs []string
	// actor does the actions (termlab, or -by's; nil when -by could not be prepared); closeActor ends it.
	actor      actor
	closeActor func()
	// errs are the run's errors: any one fails the run.
	errs []string
	// exits run when Execute returns, the last first (atExit).
	exits []func()
	// summary and err are what decide made of the run (nil summary: the
	// run was not set up).
	summary *report.Summary
	err     error
}

// fail books a run error (nil is none).
func (x *execution) fail(what string, err error) {
	if err != nil {
		x.errs = append(x.errs, what+": "+err.Error())
		x.log.Warnf("%s: %v", what, err)
	}
}

// begin names the run, takes the cluster's run lock and makes the run
// folder. The run lock is a Lease in the cluster: a termlab on another
// machine waits for this run, and this run's repair touches only what runs
// no longer holding it left.
func (x *execution) begin(ctx context.Context, env *cluster.Env) error {
	def, log := x.def, x.log
	id := NewRunID(time.Now())
	lock, err := runlock.Take(ctx, log, env.RESTConfig, runlock.Identity(def.Title()+" run "+id), x.opts.NoWait)
	if err != nil {
		return err
	}
	r := &Run{
		ID: id, Lab: def.Name, Namespace: "termlab-" + def.Name + "-" + id,
		Env: env, Log: log, opts: x.opts, lockHolder: lock.Holder(), changes: runChanges(def.Uses),
	}
	r.Dir = filepath.Join(x.opts.ResultsDir, def.Name, id)
	if err := os.MkdirAll(r.Dir, evidence.PrivateDir); err != nil {
		lock.Release()
		return fmt.Errorf("creating the run folder: %w", err)
	}
	log.Infof("%s run %s: results in %s", def.Title(), id, r.Dir)
	x.r, x.lock, x.started = r, lock, time.Now().UTC()
	x.atExit(lock.Release)
	// On Ctrl-C, SIGTERM or SIGHUP the kubelets come back at once, not after the
	// steps unwind: mage exits five seconds after Ctrl-C.
	stop := context.AfterFunc(ctx, func() { x.restoreAfterInterrupt(ctx) })
	x.atExit(func() { stop() })
	x.atExit(func() { x.closeActor() }) // set up prepares the actor
	return nil
}

// restoreAfterInterrupt undoes what the run changed on its nodes (each
// node-side change's undo), and closes the node pods.
func (x *execution) restoreAfterInterrupt(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, c := range x.r.changes {
		if !c.NodeSide() {
			continue
		}
		if err := c.Undo(rctx, x.r); err != nil {
			x.log.Warnf("after the interrupt, undoing the change that %s: %v", c.Name(), err)
		}
	}
	// The node pods (privileged, the host's root mounted) go now, not after
	// the cleanup that an exiting mage may never finish.
	if shut := x.r.Env.ShutNodeAccess; shut != nil {
		if err := shut(rctx); err != nil {
			x.log.Warnf("removing the node pods after the interrupt: %v", err)
		}
	}
}

// setUp repairs what earlier runs left, creates the run's namespace, starts
// the recorder and its audit log, probes the clocks, copies the inputs and
// prepares the actor. Its error ends the run before any step (nothing is
// left: the namespace is deleted again).
func (x *execution) setUp(ctx context.Context) error {
	r, env, def, id := x.r, x.r.Env, x.def, x.r.ID
	rctx, cancelRepair := context.WithTimeout(ctx, repairTimeout)
	repairs, err := RepairLeftovers(rctx, env, x.log, "")
	cancelRepair()
	x.repairs = repairs
	x.fail("repairing leftovers of earlier runs", err)

	if err := r.createNamespace(ctx); err != nil {
		return err
	}
	rec, err := recorder.Start(ctx, recorder.Config{
		Client: recorderClient(env), Lab: def.Name, RunID: id, Namespace: r.Namespace,
		PodSelector: RunIDLabel + "=" + id, Nodes: workerNames(env), Dir: r.Dir, Versions: versionsMap(env),
		NodeAccess: nodeAccess(env), NoFakeNodes: len(env.FakeNodes) == 0, EndpointSlices: def.Uses.EndpointSlices,
		NamespaceSelector: namespaceSelector(def, id), Controllers: controllersOf(def, env),
		EventsOnDisk: def.Uses.ManyPods,
	})
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		x.fail("cleaning up", r.deleteNamespace(cctx))
		return fmt.Errorf("starting the recorder: %w", err)
	}
	r.Rec = rec
	x.fail("following the API server's audit log", rec.StartAudit(ctx, env.ControlPlane, append(workerNames(env), env.FakeNodes...)))
	r.probeClocks(ctx)
	r.emit(Event{Kind: RunStarted})
	for _, rep := range repairs {
		rec.Notef("before the run: %s", rep)
	}
	x.fail("copying the inputs", r.copyInputs(def))
	act, closeActor, err := r.newActor(def)
	if err != nil {
		x.fail("preparing -by="+x.opts.By, err)
		return nil
	}
	x.actor, x.closeActor = act, closeActor
	if x.opts.By != ByTermlab {
		rec.Notef("the lab's actions were done by %s and are recorded from the API server's audit log and the node", map[string]string{ByScript: "scripts/" + def.Name + ".sh", ByYou: "a person at the terminal"}[x.opts.By])
	}
	return nil
}

// runSteps runs the lab's steps, bounded by Options.Timeout or the lab's
// own StepsBound, whichever is longer; a panic is a run error like any
// other, so finish still runs. Its error is booked as the run's too.
func (x *execution) runSteps(ctx context.Context) (err error) {
	timeout := x.opts.Timeout
	if x.def.StepsBound != nil {
		if b := x.def.StepsBound(); b.Allow > timeout {
			timeout = b.Allow
			x.r.Log.Infof("the steps are bounded by %s: %s (%s)", b.Allow.Round(time.Second), b.What, b.Why)
		}
	}
	stepCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A lost run lock stops the steps at once: another termlab may be
	// repairing this run's objects (restarting its kubelet, deleting its
	// namespace) while they would go on stopping kubelets and tainting.
	stepCtx, stopForLock := context.WithCancelCause(stepCtx)
	defer stopForLock(nil)
	go func() {
		select {
		case <-x.lock.Gone():
			x.log.Warnf("the cluster's run lock was lost: stopping the lab's steps now (%v)", x.lock.Lost())
			stopForLock(errLockLost)
		case <-stepCtx.Done():
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
			x.fail("the lab panicked", err)
		}
	}()
	x.r.setActor(x.actor)
	defer x.r.setActor(byTermlab)
	if x.actor == nil { // -by's preparation failed: nobody to do the actions
		err := fmt.Errorf("-by=%s: no one to do the actions", x.opts.By)
		x.fail("running the steps", err)
		return err
	}
	if err := x.def.Steps(stepCtx, x.r); err != nil {
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("interrupted: %w", err)
		case errors.Is(context.Cause(stepCtx), errLockLost):
			err = fmt.Errorf("stopped, the run lock lost: %w", err)
		}
		x.fail("running the steps", err)
		return err
	}
	return nil
}

// errLockLost ends the steps of a run whose lock was lost.
var errLockLost = errors.New("the cluster's run lock was lost")

// finish is the list that always runs after the steps, each with its own
// bound past an interrupt: cleanup, the evidence sources stopped, the lock's
// health, nodes Ready again, and no credential left in the run folder.
// A run that was not set up has nothing to finish (setUp removed what it
// made). Its failures are the run's, booked: it returns none.
func (x *execution) finish(ctx context.Context) error {
	if !x.wasSetUp() {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	r := x.r
	x.fail("cleaning up", r.cleanup(cctx))
	x.fail("reading the API server's audit log", r.Rec.StopAudit(cctx))
	for _, l := range x.lock.Lapses() {
		r.Rec.Notef("the cluster's run lock lapsed from %s to %s (its renewals failed: %s) and was taken back: the Lease still named this run, so no other termlab ran in between",
			l.From.UTC().Format(time.RFC3339Nano), l.To.UTC().Format(time.RFC3339Nano), l.Why)
	}
	x.fail("stopping the recorder", r.Rec.Stop())
	x.fail("holding the cluster's run lock", x.lock.Lost())
	if len(x.errs) > 0 {
		// Errors from every side at once (API, docker exec, the lock) have
		// one cause when the engine under the nodes went away: it comes first.
		if down := cluster.EngineDown(cctx, r.Env); down != "" {
			x.fail("the cluster's nodes", fmt.Errorf("%s; %s", down, engineDownHelp()))
			last := len(x.errs) - 1
			x.errs = append([]string{x.errs[last]}, x.errs[:last]...)
		}
	}
	if ctx.Err() == nil {
		// Interrupted, there is no time for this: the next run's repair waits.
		x.fail("after cleanup", r.waitRestartedNodesReady(cctx))
	}
	x.fail("checking the run folder for credentials", removeLeaks(r.Dir))
	return nil
}

// controllersOf names the controllers the lab's evidence rests on beyond
// the control plane: kwok's, when the lab runs pods on fake nodes.
func controllersOf(def Definition, env *cluster.Env) *recorder.ControllerPods {
	if !def.Uses.FakeNode || len(env.FakeNodes) == 0 {
		return nil
	}
	return &recorder.ControllerPods{Namespace: kwok.Namespace, Selector: kwok.ControllerLabel}
}

// kwokServed fails a run with fake nodes whose kwok controller was not
// serving at some time of it (controllers.jsonl): the fake nodes' pods were
// not played meanwhile, so no claim on them can be trusted, whatever it says.
func kwokServed(record *evidence.Record) error {
	outages := record.ControllerOutages(record.StartedAt, record.EndedAt)
	if len(outages) == 0 {
		return nil
	}
	var what []string
	for _, o := range outages {
		what = append(what, o.String())
	}
	return fmt.Errorf("kwok's controller (%s in %s) was not serving the fake nodes %s; their pods were not played meanwhile, so this run cannot pass (%s)",
		kwok.ControllerLabel, kwok.Namespace, strings.Join(what, "; "), evidence.ControllersFile)
}

// manyPodsMemory is the Go runtime's soft memory limit during a run of
// thousands of pods. It is a guard, not what keeps the run small: that is the
// record on disk (Uses.ManyPods). With it the collector runs before the heap
// doubles its live part. The limit counts the runtime's memory, not the
// binary's own pages: at 5,000 pods the process had 121 MiB resident with
// a 21 MiB live heap and a 43 MiB heap goal (gctrace), so about 78 MiB of
// it was the binary and the runtime's overhead. 256 MiB less those is
// 178; at 200 MiB a 20,000-pod run peaked at 257 MiB.
const manyPodsMemory = 176 << 20

// memoryGuard sets manyPodsMemory as the runtime's memory limit, unless the
// user set GOMEMLIMIT, and returns what puts the old limit back.
func memoryGuard(log *progress.Logger) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(manyPodsMemory)
	log.Infof("the Go runtime's memory limit is %d MiB for this run (a guard; GOMEMLIMIT overrides it)", manyPodsMemory>>20)
	return func() { debug.SetMemoryLimit(old) }
}

// decide settles the verdict before anything is written: the claims, every
// run error, and no credential in the reports. summary.json then says what
// Execute returns.
func (x *execution) decide() (*report.Summary, error) {
	r, def, log := x.r, x.def, x.log
	record := r.Rec.HandOver()
	if def.Uses.ManyPods {
		// Each claim and picture reads events.jsonl back: seconds per pass
		// at tens of thousands of pods.
		log.Infof("deciding the claims and writing the reports from the run folder (%d pod events, %d audit events)", record.PodEventCount(), record.AuditCount())
		defer log.Ticker("deciding the claims and writing the reports", 10*time.Second)()
	}
	if o, ok := record.APIServerOffset(); ok {
		record.Clocks = append(record.Clocks, o)
	}
	x.heapAt("record")
	decided := def.Claims(record)
	x.heapAt("claims")
	if controllersOf(def, r.Env) != nil {
		x.fail("kwok's controller", kwokServed(record))
	}
	s := report.Summary{
		Lab: def.Name, RunID: r.ID, Verdict: claims.Overall(decided),
		StartedAt: x.started, FinishedAt: time.Now().UTC(), Versions: record.Versions,
		Namespace: r.Namespace, Claims: decided, Steps: record.Steps, Repairs: x.repairs, Dir: r.Dir,
		Clocks: record.Clocks, Termlab: new(version.Get()),
	}
	run := def.ReportRun(s, record, decided)
	files, err := report.Render(run)
	x.fail("rendering the reports", err)
	x.heapAt("reports")
	// The reports quote the record; a credential that reached it must not
	// reach them. Such a file is left out, never written.
	var kept []report.File
	for _, f := range files {
		if leaks := credscan.Bytes(f.Name, f.Content); len(leaks) > 0 {
			x.fail("rendering the reports", fmt.Errorf("%s would hold a credential (%v): not written", f.Name, leaks))
			continue
		}
		kept = append(kept, f)
	}
	if len(x.errs) > 0 {
		s.Verdict = claims.Fail
		s.Errors = append(s.Errors, x.errs...)
		run.Summary = s
		if kept, err = renderKept(run, kept); err != nil {
			x.fail("rendering the reports", err)
		}
	}
	if err := report.WriteFiles(r.Dir, kept); err != nil {
		// The run is not what the claims say: its folder has no summary.
		x.errs = append(x.errs, "writing the reports: "+err.Error())
		log.Warnf("writing the reports: %v", err)
		s.Verdict = claims.Fail
		s.Errors = append(s.Errors, "writing the reports: "+err.Error())
	} else if err := pointLatest(filepath.Join(x.opts.ResultsDir, def.Name), r.ID); err != nil {
		// Only a run whose reports are all written becomes latest.
		log.Warnf("could not update %s/latest: %v", def.Name, err)
	}
	for i := range s.Claims {
		r.emit(Event{Kind: ClaimDecided, Claim: &s.Claims[i]})
	}
	printVerdicts(log, def, &s)
	r.emit(Event{Kind: RunFinished, Verdict: s.Verdict, Err: strings.Join(x.errs, "; ")})
	if len(x.errs) > 0 {
		return &s, fmt.Errorf("%s run %s: %s", def.Title(), r.ID, strings.Join(x.errs, "; "))
	}
	return &s, nil
}

// renderKept renders the run again (its summary now carries the errors) and
// keeps the files that were kept before.
func renderKept(run report.Run, kept []report.File) ([]report.File, error) {
	files, err := report.Render(run)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, f := range kept {
		keep[f.Name] = true
	}
	var out []report.File
	for _, f := range files {
		if keep[f.Name] {
			out = append(out, f)
		}
	}
	return out, nil
}

// removeLeaks deletes every file of the run folder that holds something
// credential-like: such a file is never kept. The error names them.
func removeLeaks(dir string) error {
	leaks, err := credscan.Dir(dir)
	if err != nil {
		return err
	}
	if len(leaks) == 0 {
		return nil
	}
	for _, l := range leaks {
		_ = os.Remove(filepath.Join(dir, l.File))
	}
	return fmt.Errorf("removed %d file(s) that held credentials: %v", len(leaks), leaks)
}

func (o *Options) defaults() {
	if o.Log == nil {
		o.Log = progress.Default()
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.RepoRoot == "" {
		if root, err := project.Root(); err == nil {
			o.RepoRoot = root
		}
	}
	if o.ResultsDir == "" {
		o.ResultsDir = "results"
		if o.RepoRoot != "" {
			o.ResultsDir = filepath.Join(o.RepoRoot, "results")
		}
	}
}

func printVerdicts(log *progress.Logger, def Definition, s *report.Summary) {
	for _, c := range s.Claims {
		switch {
		case c.Passed():
			log.Infof("  pass  %s", c.ID)
		case c.Verdict == claims.NotChecked:
			log.Infof("  not checked  %s: %s", c.ID, c.Reason)
		default:
			log.Infof("  FAIL  %s: %s", c.ID, c.Reason)
		}
	}
	skipped := ""
	if n := claims.CountNotChecked(s.Claims); n > 0 {
		skipped = fmt.Sprintf(", %d not checked", n)
	}
	log.Infof("%s run %s: %s (%d claims%s) — %s", def.Title(), s.RunID, s.Verdict, len(s.Claims), skipped, filepath.Join(s.Dir, report.MarkdownFile))
}

// versionsMap turns cluster.Versions into the summary's map, by its JSON names.
func versionsMap(env *cluster.Env) map[string]string {
	b, _ := json.Marshal(env.Versions)
	m := map[string]string{}
	_ = json.Unmarshal(b, &m)
	m["workload_image"] = env.WorkloadImage
	return m
}

// nodeAccess is how the run reaches the nodes, as the record says it.
func nodeAccess(env *cluster.Env) string {
	if env.NodeAccess == "" {
		return evidence.NodeAccessDocker
	}
	return env.NodeAccess
}

// canRun refuses a lab the cluster cannot carry, before anything is made:
// fake nodes where kwok does not run, a change its guard refuses here (a
// kubelet stopped where termlab could not be sure to start it again in
// time, a change another tenant would feel without the flag that names it).
func canRun(env *cluster.Env, def Definition) error {
	if def.Uses.FakeNode && !def.Uses.FakeNodeOptional && len(env.FakeNodes) == 0 {
		return errors.New("the lab runs pods on kwok fake nodes, and this cluster has none (termlab installs kwok only on its own cluster: " + invocation.Command("cluster:up") + ")")
	}
	if def.Uses.NeedsNodeAccess && nodeAccess(env) == evidence.NodeAccessNone {
		return errors.New("the lab's steps read the nodes (the workloads' logs through crictl, kube-proxy's rules): on a cluster reached through a kubeconfig it runs only with " + invocation.Flag("-nodeaccess"))
	}
	for _, c := range def.Uses.Changes {
		if err := c.Guard(env); err != nil {
			return err
		}
	}
	if len(env.Workers) <= def.Uses.Worker {
		return fmt.Errorf("the lab needs %d schedulable, Ready worker node(s) without the control-plane role; the cluster has %d", def.Uses.Worker+1, len(env.Workers))
	}
	return nil
}

// withFaultNode puts the node named for faults where the lab's kubelet
// stop goes (Uses.Worker), on a copy of env.
func withFaultNode(env *cluster.Env, def Definition) *cluster.Env {
	if env.FaultNode == "" || !def.Uses.FaultsANode() {
		return env
	}
	c := *env
	c.Workers = nil
	var rest []cluster.Node
	var fault cluster.Node
	for _, w := range env.Workers {
		if w.String() == env.FaultNode {
			fault = w
		} else {
			rest = append(rest, w)
		}
	}
	if fault == nil {
		return env
	}
	i := min(def.Uses.Worker, len(rest))
	c.Workers = append(append(append(c.Workers, rest[:i]...), fault), rest[i:]...)
	return &c
}

func workerNames(env *cluster.Env) []string {
	var out []string
	for _, w := range env.Workers {
		out = append(out, w.String())
	}
	return out
}

// ExecuteAll runs the labs one after the other and returns an error naming
// every lab that failed a claim or could not run. An interrupt stops the
// sequence (the interrupted lab still cleans up and writes its folder).
func ExecuteAll(ctx context.Context, env *cluster.Env, opts Options, defs ...Definition) ([]*report.Summary, error) {
	var sums []*report.Summary
	var failed []string
	partial := &PartialError{}
	for _, def := range defs {
		// Of several labs, one this cluster cannot carry is skipped and said
		// (lab:all through a kubeconfig); asked for alone, it is an error.
		if err := canRun(env, def); err != nil && len(defs) > 1 {
			// A skipped lab leaves its claims unchecked: the whole is partial, never a pass.
			opts.defaults()
			opts.Log.Warnf("%s skipped: %v", def.Title(), err)
			partial.Runs = append(partial.Runs, fmt.Sprintf("%s: skipped: %v", def.Title(), err))
			continue
		}
		s, err := Execute(ctx, env, def, opts)
		if s != nil {
			sums = append(sums, s)
		}
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", def.Title(), err))
		case s.Partial():
			partial.Runs = append(partial.Runs, fmt.Sprintf("%s: %d of %d claims not checked, see %s", def.Title(), claims.CountNotChecked(s.Claims), len(s.Claims), filepath.Join(s.Dir, report.MarkdownFile)))
		case !s.Passed():
			failed = append(failed, fmt.Sprintf("%s: claims failed, see %s", def.Title(), filepath.Join(s.Dir, report.MarkdownFile)))
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case len(failed) > 0:
		return sums, errors.New(strings.Join(append(failed, partial.Runs...), "\n"))
	case len(partial.Runs) > 0:
		return sums, partial
	}
	return sums, nil
}

// ExitPartial is the exit code of a lab target (mage's or the termlab
// binary's) whose runs failed no claim but left some not checked. A CI that
// wants every claim proven treats it as a failure; one that runs labs on a
// cluster without node access may accept it.
const ExitPartial = 4

// PartialError is what ExecuteAll returns when no run failed and at least
// one was partial. mage and the termlab binary exit with ExitStatus.
type PartialError struct {
	// Runs names each partial run and its report.
	Runs []string
}

func (e *PartialError) Error() string {
	return "partial: no claim failed, but some were not checked or labs skipped (exit " + fmt.Sprint(ExitPartial) + "):\n" + strings.Join(e.Runs, "\n")
}

// ExitStatus is the process's exit code; mage reads it from the error a target returns.
func (e *PartialError) ExitStatus() int { return ExitPartial }

// recorderClient is the recorder's own connection, so that its watches keep
// up with thousands of pods (the API server closes a watch whose client
// falls behind: a gap): protobuf, which the API server encodes and client-go
// decodes several times faster than JSON (go test -bench=Recorder
// ./internal/recorder/); HTTP/1.1, so each watch has a TCP connection of its
// own instead of sharing one HTTP/2 connection with the lab's requests; no
// client-side rate limit worth the name between its LISTs. Without a REST
// config (tests) it is env.Client.
func recorderClient(env *cluster.Env) kubernetes.Interface {
	if env.RESTConfig == nil {
		return env.Client
	}
	cfg := rest.CopyConfig(env.RESTConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 200, 400
	cfg.NextProtos = []string{"http/1.1"}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return env.Client
	}
	return c
}

// probeClocks measures each worker's clock against the host's (the
// crictl and workload-log times the claims subtract from termlab's own come
// from there). Without node access there is nothing to ask; a failed probe
// is a note, not a failed run: the offset is then simply unknown.
func (r *Run) probeClocks(ctx context.Context) {
	if nodeAccess(r.Env) == evidence.NodeAccessNone {
		return
	}
	for _, w := range r.Env.Workers {
		if _, err := r.Rec.ProbeClock(ctx, w); err != nil {
			r.Rec.Notef("the clock of %s was not measured: %v", w, err)
		}
	}
}
