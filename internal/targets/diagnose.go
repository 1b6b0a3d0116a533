package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// Diagnosis is one diagnose run: what to diagnose, where its report folder
// goes, and how long the node pods' removal may take after Ctrl-C.
type Diagnosis struct {
	// Namespace, and Pod ("" to diagnose the namespace itself).
	Namespace, Pod string
	// ResultsDir gets the report folder under diagnose/.
	ResultsDir string
	// AfterInterrupt bounds the wait for the node pods' removal once ctx is
	// cancelled (Ctrl-C): the deletes are sent at once either way. mage ends
	// a target 5 s after Ctrl-C; the binary can wait longer.
	AfterInterrupt time.Duration
	// AllNodes: a gone pod whose node no event names is searched for on
	// every node (-allnodes, --all-nodes).
	AllNodes bool
	// Watch, when > 0: after the diagnosis, look again every WatchEvery
	// and say what changed (Say) until the object is gone or Watch is up.
	Watch time.Duration
	Say   func(string)
	// Decided, when set, gets the diagnosis as soon as it is written,
	// before any watch: the answer is printed at once, not after it.
	Decided func(diagnose.Result)
}

// DefaultWatch is how long -watch watches at most.
const DefaultWatch = 10 * time.Minute

// WatchEvery is how often --watch looks again.
const WatchEvery = 5 * time.Second

// Diagnose runs d on what src reads and always runs cleanup (it removes the
// node pods), with a context of its own: ctx may be cancelled already.
func Diagnose(ctx context.Context, log *progress.Logger, src diagnose.Source, cleanup func(context.Context) error, d Diagnosis) (res diagnose.Result, err error) {
	defer func() { err = errors.Join(err, cleanUp(ctx, cleanup, d.AfterInterrupt)) }()
	src.SearchAllNodes = d.AllNodes
	look := func(ctx context.Context) (diagnose.Look, error) {
		return diagnose.PodLook(ctx, src, d.Namespace, d.Pod)
	}
	if d.Pod != "" {
		res, err = diagnose.Run(ctx, src, d.Namespace, d.Pod, d.ResultsDir)
	} else {
		look = func(ctx context.Context) (diagnose.Look, error) { return diagnose.NamespaceLook(ctx, src, d.Namespace) }
		done := log.Step("diagnosing namespace " + d.Namespace)
		res, err = diagnose.RunNamespace(ctx, src, d.Namespace, d.ResultsDir)
		done(err)
	}
	if err != nil {
		return res, err
	}
	if d.Decided != nil {
		d.Decided(res)
	}
	if d.Watch <= 0 {
		return res, nil
	}
	say := d.Say
	if say == nil {
		say = func(s string) { log.Infof("%s", s) }
	}
	say(fmt.Sprintf("watching: looking again every %s for up to %s (Ctrl-C ends it)", WatchEvery, d.Watch))
	wctx, cancel := context.WithTimeout(ctx, d.Watch)
	defer cancel()
	last, werr := diagnose.Watch(wctx, WatchEvery, look, say)
	res.Watched = &last
	if !last.At.IsZero() {
		if err := diagnose.RecordWatch(res.Dir, last); err != nil {
			return res, errors.Join(werr, err)
		}
	}
	if werr != nil && ctx.Err() == nil && last.Exists {
		say(fmt.Sprintf("still there after %s: %s", d.Watch, strings.Join(last.Held, " | ")))
		return res, nil
	}
	return res, werr
}

// DiagnoseMage is the mage target diagnose: -pod=<ns>/<name> or
// -namespace=<ns>, [-kubeconfig=<file>] [-nodeaccess]; the report folder goes
// under the checkout's results/.
func DiagnoseMage(ctx context.Context, w io.Writer, pod, namespace, kubeconfig *string, nodeAccess, allNodes, watch *bool) error {
	ctx, stop := withHangup(ctx)
	defer stop()
	var d Diagnosis
	d.AllNodes = allNodes != nil && *allNodes
	if watch != nil && *watch {
		d.Watch = DefaultWatch
	}
	switch {
	case pod != nil && namespace != nil:
		return errors.New("diagnose takes -pod=<namespace>/<name> or -namespace=<namespace>, not both")
	case pod != nil:
		ns, name, err := diagnose.ParsePod(*pod)
		if err != nil {
			return err
		}
		d.Namespace, d.Pod = ns, name
	case namespace != nil && *namespace != "":
		d.Namespace = *namespace
	default:
		return errors.New("diagnose needs -pod=<namespace>/<name> or -namespace=<namespace>")
	}
	root, err := project.Root()
	if err != nil {
		return err
	}
	log := progress.Default()
	src, cleanup, err := stack.DiagnoseSource(ctx, log, deref(kubeconfig), nodeAccess)
	if err != nil {
		return err
	}
	// After Ctrl-C mage ends the target within 5 s: the wait for the node
	// pods' deletes is cut to fit.
	d.ResultsDir, d.AfterInterrupt = project.ResultsDir(root), 3*time.Second
	d.Decided = func(res diagnose.Result) { // at once, before a -watch
		fmt.Fprintf(w, "%s\n\n%s (%s)\n", res.Summary.Answer, filepath.Join(res.Dir, diagnose.MarkdownFile), res.Took.Round(10*time.Millisecond))
	}
	res, err := Diagnose(ctx, log, src, cleanup, d)
	if err != nil {
		return err
	}
	// The binary's exit codes: 1 held, 2 could not decide.
	if code, why := res.Exit(); code != diagnose.ExitClear {
		return &diagnose.ExitError{Code: code, Why: why}
	}
	return nil
}

// DiagnoseAll is a whole diagnosis (`diagnose -A`, or `-n <ns>` with no
// object): every pod and namespace in scope stuck deleting, each diagnosed
// into its own folder, and the whole in one more; cleanup (the node pods)
// always runs, as for Diagnose.
func DiagnoseAll(ctx context.Context, log *progress.Logger, src diagnose.Source, cleanup func(context.Context) error, scope diagnose.Scope, resultsDir string, afterInterrupt time.Duration) (s diagnose.AllSummary, dir string, err error) {
	defer func() { err = errors.Join(err, cleanUp(ctx, cleanup, afterInterrupt)) }()
	done := log.Step("finding the pods and namespaces stuck deleting in " + scope.String())
	s, dir, err = diagnose.RunAll(ctx, src, scope, resultsDir, func(i, n int, d diagnose.Deleting) {
		if i == 1 {
			done(nil)
		}
		log.Infof("diagnosing %d of %d: %s", i, n, d)
	})
	if len(s.Rows) == 0 {
		done(err)
	}
	return s, dir, err
}

// cleanUp runs cleanup (the node pods' removal) with a context of its own:
// 2 min, or afterInterrupt once ctx was cancelled (Ctrl-C).
func cleanUp(ctx context.Context, cleanup func(context.Context) error, afterInterrupt time.Duration) error {
	wait := 2 * time.Minute
	if ctx.Err() != nil && afterInterrupt > 0 {
		wait = afterInterrupt
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	if err := cleanup(cctx); err != nil {
		return fmt.Errorf("removing the node pods: %w", err)
	}
	return nil
}
