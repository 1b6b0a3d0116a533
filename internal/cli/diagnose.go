package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/internal/targets"
)

// Output formats of diagnose.
const (
	outputText = "text"
	outputJSON = "json"
)

// afterInterrupt is how long the node pods' removal may take after Ctrl-C:
// the binary, unlike mage, is not ended 5 s after it (a second Ctrl-C does).
const afterInterrupt = 30 * time.Second

// diagnoseRequest is a diagnose invocation, parsed; nothing is read yet.
type diagnoseRequest struct {
	target
	Flags      *genericclioptions.ConfigFlags
	Output     string
	NodeAccess bool
	// EvidenceDir is --evidence-dir as given ("" for the default).
	EvidenceDir string
	AllNodes    bool
	// Watch and WatchTimeout are --watch and --watch-timeout.
	Watch        bool
	WatchTimeout time.Duration
	// allNamespaces is -A, read into target.All.
	allNamespaces bool
	// OlderThan is --older-than: what a whole diagnosis leaves out as too young.
	OlderThan time.Duration
}

// target is what to diagnose: a pod (Pod set), a namespace, or with All
// everything stuck deleting: in every namespace (-A, Namespace ""), or in
// Namespace (no object given).
type target struct {
	Namespace, Pod string
	All            bool
}

func (a *app) diagnoseCommand() *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	var req diagnoseRequest
	cmd := &cobra.Command{
		Use:     "diagnose [pod/<name> | ns/<name> | pod <name> | namespace <name> | <name> | -A] [-n <namespace>] [--older-than 1m] [-o text|json] [--node-access] [--evidence-dir <dir>]",
		Short:   "Says, read-only, why a pod or namespace is still there",
		GroupID: groupAnywhere,
		Long: `diagnose reads a pod (or a namespace) and what holds it: deletion request and
grace deadline, finalizers and whether a controller could remove them, the
node, its lease and kubelet, the containers on the node, volumes, and a
server-side dry run of removing the finalizers. It changes nothing. The answer,
each finding and the advice go to stdout (-o json: the report's summary.json),
progress to stderr; the report folder (report.md, summary.json, the raw
evidence) is written under <evidence-dir>/diagnose/: results/ of the termlab
checkout it runs in, else $XDG_STATE_HOME/termlab (~/.local/state/termlab).

It takes kubectl's flags (--kubeconfig, --context, -n …). A pod's namespace
is -n, else the kubeconfig context's, as kubectl does. Node checks (kubelet,
containers on the node) say "not checked" unless --node-access, which starts a
short-lived privileged pod on each node asked about, removed before it returns
(also after Ctrl-C).

With no object it looks at everything stuck deleting in the namespace (-n,
else the context's), with -A in every namespace: each pod and namespace whose
deletionTimestamp is older than --older-than (a pod's is the end of its grace
period) is diagnosed into its own report folder, and one line each says what
holds it, who can release it and the safest step; pods of a namespace being
deleted are in their namespace's report. Its exit code is the worst found.
It lists in pages of 500, and makes 5 API requests per pod and about 45 per
namespace (a LIST per resource type), at most 50 per second: 1,000 stuck
pods take about 100 s (summary.json counts the requests).

` + exitCodeText,
		Example: `  kubectl termlab diagnose -A
  kubectl termlab diagnose pod/web-0 -n shop
  kubectl termlab diagnose ns/shop -o json
  kubectl termlab diagnose web-0 --node-access
  termlab diagnose pod web-0 -n shop --kubeconfig ~/.kube/other`,
		// Everything is checked here, before anything is read: a refusal is
		// a usage error (exit 3).
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if req.Output != outputText && req.Output != outputJSON {
				return fmt.Errorf("-o %q: want text or json", req.Output)
			}
			if req.allNamespaces {
				if len(args) > 0 || req.Watch {
					return fmt.Errorf("-A diagnoses every pod and namespace stuck deleting: give no object (got %q) and no --watch", strings.Join(args, " "))
				}
				req.target, req.Flags = target{All: true}, flags
				return nil
			}
			namespace := func() (string, error) {
				ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
				if clientcmd.IsEmptyConfig(err) {
					// No kubeconfig at all: kubectl's default, and the
					// run says what is missing when it reads the cluster.
					return "default", nil
				}
				return ns, err
			}
			if len(args) == 0 {
				// As `kubectl get pods`: no object, the namespace's.
				if req.Watch {
					return errors.New("--watch follows one object: name it (pod/<name> or ns/<name>)")
				}
				ns, err := namespace()
				if err != nil {
					return fmt.Errorf("finding the namespace to look in (give -n <namespace> or -A): %w", err)
				}
				if ns == "" {
					ns = "default"
				}
				req.target, req.Flags = target{All: true, Namespace: ns}, flags
				return nil
			}
			t, err := parseTarget(args, namespace)
			if err != nil {
				return err
			}
			req.target, req.Flags = t, flags
			return nil
		},
		ValidArgsFunction: completeTarget(flags),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if code := a.diagnose(cmd.Context(), a, req); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	flags.AddFlags(cmd.Flags())
	if f := cmd.Flags().Lookup("request-timeout"); f != nil {
		// Zero is not "no timeout" here: a diagnosis should name the request that hung.
		f.Usage = fmt.Sprintf("how long each request to the API server may take (e.g. 5s, 2m); 0 means diagnose's default, %s", stack.DefaultRequestTimeout)
	}
	cmd.Flags().BoolVarP(&req.allNamespaces, "all-namespaces", "A", false, "diagnose every pod and namespace stuck deleting (a deletionTimestamp older than --older-than), in every namespace: one line each with its cause, who can release it and the safest step; a report folder each. With no object and no -A: the same in the namespace (-n, else the context's)")
	cmd.Flags().DurationVar(&req.OlderThan, "older-than", diagnose.DefaultOlderThan, "with -A or no object: leave out what has been deleting for less (its deletionTimestamp younger; a pod's is the end of its grace period)")
	cmd.Flags().StringVarP(&req.Output, "output", "o", outputText, "text (the answer, findings and advice) or json (the report's summary.json, nothing else on stdout)")
	cmd.Flags().BoolVar(&req.NodeAccess, "node-access", false, "start a short-lived privileged pod on each node asked about, to check the kubelet and the containers there (removed before it returns)")
	cmd.Flags().BoolVar(&req.AllNodes, "all-nodes", false, "a pod that is gone and whose node no event names: search every node for its containers (one node pod each with --node-access)")
	cmd.Flags().BoolVar(&req.Watch, "watch", false, "after the diagnosis, look again every 5 s and say what changed (a finalizer removed, the object gone) until it is gone or --watch-timeout")
	cmd.Flags().DurationVar(&req.WatchTimeout, "watch-timeout", 10*time.Minute, "how long --watch watches at most")
	cmd.Flags().StringVar(&req.EvidenceDir, "evidence-dir", "", "the report folder goes under <evidence-dir>/diagnose/ (default: results/ of the termlab checkout, else $XDG_STATE_HOME/termlab)")
	return cmd
}

// Resource names diagnose takes, as kubectl spells them.
var (
	podNames       = map[string]bool{"pod": true, "pods": true, "po": true}
	namespaceNames = map[string]bool{"namespace": true, "namespaces": true, "ns": true}
)

// accepted is what parseTarget takes, for its errors.
const accepted = "want pod/<name>, ns/<name>, pod <name>, namespace <name> or <name> (a pod)"

// parseTarget reads diagnose's arguments as kubectl reads `kubectl get`'s:
// pod/<name>, ns/<name>, "pod <name>", "namespace <name>", or a bare <name>
// meaning a pod. A pod's namespace comes from namespace() (-n, else the
// kubeconfig context's); a namespace needs none.
func parseTarget(args []string, namespace func() (string, error)) (target, error) {
	var kind, name string
	switch len(args) {
	case 0:
		return target{}, errors.New("diagnose needs what to diagnose: " + accepted)
	case 1:
		if k, n, ok := strings.Cut(args[0], "/"); ok {
			kind, name = k, n
		} else {
			kind, name = "pod", args[0]
		}
	case 2:
		if strings.Contains(args[0], "/") {
			return target{}, fmt.Errorf("diagnose takes one object, got %q and %q: %s", args[0], args[1], accepted)
		}
		kind, name = args[0], args[1]
	default:
		return target{}, fmt.Errorf("diagnose takes one object, got %d arguments: %s", len(args), accepted)
	}
	kind = strings.ToLower(kind)
	if name == "" || strings.Contains(name, "/") {
		return target{}, fmt.Errorf("%q: %s", strings.Join(args, " "), accepted)
	}
	switch {
	case namespaceNames[kind]:
		return target{Namespace: name}, nil
	case podNames[kind]:
		ns, err := namespace()
		if err != nil {
			return target{}, fmt.Errorf("finding the namespace of pod %s (give -n <namespace>): %w", name, err)
		}
		if ns == "" {
			ns = "default"
		}
		return target{Namespace: ns, Pod: name}, nil
	}
	return target{}, fmt.Errorf("diagnose reads pods and namespaces, not %q: %s", kind, accepted)
}

// runDiagnose reads the cluster kubectl's flags name, runs the diagnosis,
// prints it and returns the exit code (diagnose.Outcome of its findings).
func runDiagnose(ctx context.Context, a *app, req diagnoseRequest) int {
	log := progress.Default()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(a.stderr, "%s: %s\n", a.display, fmt.Sprintf(format, args...))
		return diagnose.ExitUndecided
	}
	resultsDir, err := evidenceRoot(req.EvidenceDir)
	if err != nil {
		return fail("%v", err)
	}
	if why := noKubeconfig(req.Flags); why != "" {
		return fail("%s", why)
	}
	cfg, err := req.Flags.ToRESTConfig()
	if err != nil {
		return fail("reading the kubeconfig (--kubeconfig, --context, or KUBECONFIG): %v", err)
	}
	desc := describe(req.Flags, cfg.Host)
	src, cleanup, err := stack.DiagnoseSourceFromConfig(ctx, log, stack.ConfigSource{
		Config: cfg, Desc: desc, NodeAccess: req.NodeAccess, NodeAccessFlag: "--node-access",
	})
	if err != nil {
		return fail("%v", err)
	}
	if req.All {
		return runDiagnoseAll(ctx, a, req, src, cleanup, resultsDir, desc)
	}
	d := targets.Diagnosis{
		Namespace: req.Namespace, Pod: req.Pod, ResultsDir: resultsDir, AfterInterrupt: afterInterrupt,
		AllNodes: req.AllNodes, Say: func(s string) { fmt.Fprintln(a.stderr, s) },
	}
	if req.Output != outputJSON {
		// The answer at once; a --watch then says each change as it comes.
		d.Decided = func(res diagnose.Result) {
			fmt.Fprintf(a.stderr, "evidence: %s\n", res.Dir)
			printText(a.stdout, res.Summary.Report)
		}
	}
	if req.Watch {
		d.Watch = req.WatchTimeout
	}
	res, err := targets.Diagnose(ctx, log, src, cleanup, d)
	if err != nil {
		return a.runFailed(ctx, err, desc)
	}
	if req.Output == outputJSON {
		// Exactly what the run wrote, once it ended (with a --watch, its
		// last look too): one schema for the file and the pipe, and the
		// same look as the exit code.
		fmt.Fprintf(a.stderr, "evidence: %s\n", res.Dir)
		b, err := os.ReadFile(filepath.Join(res.Dir, diagnose.SummaryFile))
		if err != nil {
			return fail("reading the summary the diagnosis wrote: %v", err)
		}
		if _, err := a.stdout.Write(b); err != nil {
			return fail("writing the summary: %v", err)
		}
	}
	code, why := res.Exit()
	fmt.Fprintf(a.stderr, "exit %d: %s\n", code, why)
	return code
}

// noKubeconfig says why no cluster is named at all: no kubeconfig file
// exists where kubectl looks, no --server, and not inside a pod. kubectl's
// loader would then ask http://localhost:8080, whose refusal hides that
// nothing was configured. "" when a cluster is named.
func noKubeconfig(f *genericclioptions.ConfigFlags) string {
	if f.APIServer != nil && *f.APIServer != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return ""
	}
	raw, err := f.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return "" // a kubeconfig exists: its own errors say more
	}
	searched := f.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence()
	if f.KubeConfig != nil && *f.KubeConfig != "" {
		searched = []string{*f.KubeConfig}
	}
	return fmt.Sprintf("no kubeconfig names a cluster: looked in %s. Give --kubeconfig <file>, set KUBECONFIG, or create ~/.kube/config (kind and most clusters write one)", strings.Join(searched, ", "))
}

// runFailed says why a diagnosis (one object's or -A's) ended without an
// answer, and its exit code: Ctrl-C (the node pods are gone, nothing else to
// say), else which cluster was asked, half the answer to "could not read".
func (a *app) runFailed(ctx context.Context, err error, desc string) int {
	if ctx.Err() != nil {
		fmt.Fprintf(a.stderr, "%s: interrupted: %v\n", a.display, err)
		return diagnose.ExitInterrupted
	}
	fmt.Fprintf(a.stderr, "%s: %v\n(the cluster asked: %s; choose another with --kubeconfig or --context)\n", a.display, err, desc)
	return diagnose.ExitUndecided
}

// runDiagnoseAll is -A: every object being deleted, a line each (-o json:
// the -A folder's summary.json), and the worst exit code.
func runDiagnoseAll(ctx context.Context, a *app, req diagnoseRequest, src diagnose.Source, cleanup func(context.Context) error, resultsDir, desc string) int {
	scope := diagnose.Scope{Namespace: req.Namespace, OlderThan: req.OlderThan}
	s, dir, err := targets.DiagnoseAll(ctx, progress.Default(), src, cleanup, scope, resultsDir, afterInterrupt)
	if err != nil {
		return a.runFailed(ctx, err, desc)
	}
	fmt.Fprintf(a.stderr, "evidence: %s\n", dir)
	if req.Output == outputJSON {
		b, err := os.ReadFile(filepath.Join(dir, diagnose.SummaryFile))
		if err != nil {
			fmt.Fprintf(a.stderr, "%s: reading the summary -A wrote: %v\n", a.display, err)
			return diagnose.ExitUndecided
		}
		_, _ = a.stdout.Write(b)
	} else {
		printAll(a.stdout, s)
	}
	code, why := s.Exit()
	fmt.Fprintf(a.stderr, "exit %d: %s\n", code, why)
	return code
}

// printAll is a whole diagnosis' text: one line per object, its age (since
// its deletionTimestamp), exit code, cause, who can release it and the
// safest step; then what was left out and the requests made.
func printAll(w io.Writer, s diagnose.AllSummary) {
	if len(s.Rows) == 0 {
		fmt.Fprintf(w, "Nothing is stuck deleting in %s%s.\n", scopeOf(s), s.LeftOut())
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OBJECT\tAGE\tEXIT\tWHAT HOLDS IT\tWHO CAN RELEASE IT\tSAFEST STEP")
	for _, r := range s.Rows {
		cause := strings.TrimPrefix(r.Why, "held; blocking: ")
		if r.Error != "" {
			cause = "could not be diagnosed: " + r.Error
		}
		who := strings.Join(r.WhoCanRelease, "; ")
		if who == "" {
			who = "-"
		}
		step := r.SafestStep
		if step == "" {
			step = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", r.String(), s.At.Sub(r.DeletionTimestamp).Round(time.Second), r.Code, cause, who, step)
	}
	_ = tw.Flush()
	if s.SkippedPods > 0 {
		fmt.Fprintf(w, "(%d pods of namespaces being deleted: in their namespace's report.)\n", s.SkippedPods)
	}
	if s.Younger > 0 {
		fmt.Fprintf(w, "(%d deleting for less than %gs: left out, see --older-than.)\n", s.Younger, s.OlderThanSeconds)
	}
}

// scopeOf says where a whole diagnosis looked.
func scopeOf(s diagnose.AllSummary) string {
	if s.Namespace == "" {
		return "any namespace"
	}
	return "namespace " + s.Namespace
}

// printText is -o text: the answer, each finding (level, id, text), the advice.
func printText(w io.Writer, r diagnose.Report) {
	fmt.Fprintf(w, "%s\n", r.Answer)
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "\nFindings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-11s %s: %s\n", f.Level, f.ID, f.Text)
		}
	}
	if len(r.Advice) > 0 {
		fmt.Fprintln(w, "\nWhat to do, and its risk:")
		for _, s := range r.Advice {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}

// evidenceRoot is the folder whose diagnose/ gets the report folder:
// --evidence-dir, else results/ of the termlab checkout it runs in, else
// $XDG_STATE_HOME/termlab (default ~/.local/state/termlab).
func evidenceRoot(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if root, err := project.Root(); err == nil {
		return project.ResultsDir(root), nil
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no folder for the report (no XDG_STATE_HOME and no home directory): give --evidence-dir: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "termlab"), nil
}

// describe names the cluster for messages: the context and kubeconfig kubectl's flags chose.
func describe(f *genericclioptions.ConfigFlags, host string) string {
	loader := f.ToRawKubeConfigLoader()
	context := ""
	if f.Context != nil {
		context = *f.Context
	}
	if raw, err := loader.RawConfig(); err == nil && context == "" {
		context = raw.CurrentContext
	}
	files := strings.Join(loader.ConfigAccess().GetLoadingPrecedence(), string(os.PathListSeparator))
	if f.KubeConfig != nil && *f.KubeConfig != "" {
		files = *f.KubeConfig
	}
	return fmt.Sprintf("%s (context %q of %s)", host, context, files)
}
