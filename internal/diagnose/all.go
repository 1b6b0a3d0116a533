package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/version"
)

// Kinds of object `diagnose -A` looks at.
const (
	KindPod       = "pod"
	KindNamespace = "namespace"
)

// Deleting is one object whose deletion was requested and that is still
// there: what a whole diagnosis (-A, -n) diagnoses.
type Deleting struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// DeletionTimestamp is the object's: a namespace's is when its deletion
	// was requested, a pod's the end of its grace period.
	DeletionTimestamp time.Time `json:"deletion_timestamp"`
}

func (d Deleting) String() string {
	if d.Kind == KindNamespace {
		return "namespace/" + d.Name
	}
	return "pod/" + d.Namespace + "/" + d.Name
}

// DefaultOlderThan is how old a deletionTimestamp must be before a whole
// diagnosis looks at its object: a pod within its grace period, or a
// namespace whose controller is still emptying it, is not stuck yet; a
// minute is past the default 30 s grace period and the namespace
// controller's first passes.
const DefaultOlderThan = time.Minute

// Scope is what a whole diagnosis looks at.
type Scope struct {
	// Namespace is the one namespace looked in (itself, if being deleted,
	// and its pods); "" for every namespace (-A).
	Namespace string
	// OlderThan leaves out objects whose deletionTimestamp is younger.
	OlderThan time.Duration
}

func (s Scope) String() string {
	where := "every namespace"
	if s.Namespace != "" {
		where = "namespace " + s.Namespace
	}
	return fmt.Sprintf("%s, deletionTimestamp older than %s", where, s.OlderThan)
}

// Found is what FindDeleting found.
type Found struct {
	// Objects are namespaces first, then pods, each oldest deletionTimestamp first.
	Objects []Deleting
	// SkippedPods are pods of namespaces being deleted: their namespace's
	// diagnosis diagnoses them.
	SkippedPods int
	// Younger are objects being deleted whose deletionTimestamp is younger
	// than the scope's OlderThan: not looked at.
	Younger int
}

// FindDeleting lists the namespaces and pods in scope that have a
// deletionTimestamp older than scope.OlderThan at now, in pages of
// listPage (a cluster of 100,000 pods is not one answer). A pod of a
// namespace that is itself being deleted is left out (its namespace's
// diagnosis diagnoses it).
func FindDeleting(ctx context.Context, client kubernetes.Interface, scope Scope, now time.Time) (Found, error) {
	var f Found
	old := func(t *metav1.Time) bool { return now.Sub(t.Time) >= scope.OlderThan }
	nsGoing := map[string]bool{}
	addNamespace := func(ns corev1.Namespace) {
		if ns.DeletionTimestamp == nil {
			return
		}
		nsGoing[ns.Name] = true
		if !old(ns.DeletionTimestamp) {
			f.Younger++
			return
		}
		f.Objects = append(f.Objects, Deleting{Kind: KindNamespace, Name: ns.Name, DeletionTimestamp: ns.DeletionTimestamp.UTC()})
	}
	if scope.Namespace != "" {
		ns, err := client.CoreV1().Namespaces().Get(ctx, scope.Namespace, metav1.GetOptions{})
		if err != nil {
			return f, fmt.Errorf("reading namespace %s: %w", scope.Namespace, err)
		}
		addNamespace(*ns)
	} else {
		err := eachPage(ctx, func(opts metav1.ListOptions) (string, error) {
			list, err := client.CoreV1().Namespaces().List(ctx, opts)
			if err != nil {
				return "", fmt.Errorf("listing namespaces: %w", err)
			}
			for _, ns := range list.Items {
				addNamespace(ns)
			}
			return list.Continue, nil
		})
		if err != nil {
			return f, err
		}
	}
	namespaces := len(f.Objects)
	err := eachPage(ctx, func(opts metav1.ListOptions) (string, error) {
		list, err := client.CoreV1().Pods(scope.Namespace).List(ctx, opts)
		if err != nil {
			if scope.Namespace == "" {
				return "", fmt.Errorf("listing pods in every namespace: %w", err)
			}
			return "", fmt.Errorf("listing pods in namespace %s: %w", scope.Namespace, err)
		}
		for _, p := range list.Items {
			switch {
			case p.DeletionTimestamp == nil:
			case nsGoing[p.Namespace]:
				f.SkippedPods++
			case !old(p.DeletionTimestamp):
				f.Younger++
			default:
				f.Objects = append(f.Objects, Deleting{Kind: KindPod, Namespace: p.Namespace, Name: p.Name, DeletionTimestamp: p.DeletionTimestamp.UTC()})
			}
		}
		return list.Continue, nil
	})
	if err != nil {
		return f, err
	}
	oldestFirst := func(s []Deleting) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].DeletionTimestamp.Before(s[j].DeletionTimestamp) })
	}
	oldestFirst(f.Objects[:namespaces])
	oldestFirst(f.Objects[namespaces:])
	return f, nil
}

// eachPage calls list with listPage-sized pages until it returns no
// continue token.
func eachPage(ctx context.Context, list func(metav1.ListOptions) (string, error)) error {
	opts := metav1.ListOptions{Limit: listPage}
	for {
		next, err := list(opts)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		opts.Continue = next
	}
}

// AllRow is one object's line in a whole diagnosis: its exit code (as its
// own diagnosis would exit), why, its answer, the safest step its advice
// offers and who can take it, and its report folder.
type AllRow struct {
	Deleting
	Code   int    `json:"exit_code"`
	Why    string `json:"why"`
	Answer string `json:"answer"`
	// SafestStep is the first advice step of the lowest risk (absent when
	// the advice has only notes).
	SafestStep string `json:"safest_step,omitempty"`
	// WhoCanRelease names who can end what holds it, one per cause.
	WhoCanRelease []string `json:"who_can_release,omitempty"`
	// Dir is its report folder, relative to the whole diagnosis' parent.
	Dir string `json:"dir,omitempty"`
	// Error says why it could not be diagnosed (Code is then ExitUndecided).
	Error string `json:"error,omitempty"`
	// Requests is how many API requests its diagnosis made (absent when not counted).
	Requests int `json:"api_requests,omitempty"`
}

// AllSchemaVersion is the version of AllSummary's JSON: a field's name and
// meaning never change within it; fields may be added.
const AllSchemaVersion = 1

// AllSummary is the summary.json of a whole diagnosis (-A, -n).
type AllSummary struct {
	SchemaVersion int       `json:"schemaVersion"`
	At            time.Time `json:"at"`
	// Namespace is the namespace looked in; absent for every namespace.
	Namespace string `json:"namespace,omitempty"`
	// OlderThanSeconds: objects whose deletionTimestamp is younger were left out.
	OlderThanSeconds float64  `json:"older_than_seconds"`
	Rows             []AllRow `json:"objects"`
	// SkippedPods are pods of namespaces being deleted: in their namespace's diagnosis.
	SkippedPods int `json:"skipped_pods,omitempty"`
	// Younger are objects being deleted for less than OlderThanSeconds.
	Younger int `json:"younger,omitempty"`
	// Requests is every API request the whole diagnosis made, the search
	// included (absent when not counted).
	Requests int `json:"api_requests,omitempty"`
	// Termlab is the termlab that made the diagnosis.
	Termlab *version.Info `json:"termlab,omitempty"`
}

// Exit is the whole cluster's exit code: 1 when something is held and its
// cause found, else 2 when something could not be decided, else 0.
func (s AllSummary) Exit() (code int, why string) {
	var held, undecided []string
	for _, r := range s.Rows {
		switch r.Code {
		case ExitHeld:
			held = append(held, r.String())
		case ExitClear:
		default:
			undecided = append(undecided, r.String())
		}
	}
	switch {
	case len(held) > 0:
		return ExitHeld, fmt.Sprintf("%d held, cause found: %s", len(held), strings.Join(held, ", "))
	case len(undecided) > 0:
		return ExitUndecided, fmt.Sprintf("%d could not be decided: %s", len(undecided), strings.Join(undecided, ", "))
	case len(s.Rows) == 0:
		return ExitClear, "nothing is stuck deleting" + s.LeftOut()
	}
	return ExitClear, "nothing holds what is being deleted"
}

// LeftOut says how many objects were left out as too young to be stuck ("" when none).
func (s AllSummary) LeftOut() string {
	if s.Younger == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d being deleted for less than %gs, left out)", s.Younger, s.OlderThanSeconds)
}

// AllFolderName is the -A report folder's name under diagnose/.
func AllFolderName(at time.Time) string { return at.UTC().Format("20060102-150405") + "-all" }

// RunAll diagnoses every object FindDeleting finds in scope, one after
// another (each writes its own report folder), tells progress each one's
// start, and writes the whole as <resultsDir>/diagnose/<time>-all/
// (summary.json, report.md). An object that cannot be diagnosed is a row
// with its error: the others go on.
func RunAll(ctx context.Context, src Source, scope Scope, resultsDir string, progress func(i, n int, d Deleting)) (AllSummary, string, error) {
	s := AllSummary{SchemaVersion: AllSchemaVersion, At: time.Now().UTC(), Namespace: scope.Namespace, OlderThanSeconds: scope.OlderThan.Seconds(), Termlab: madeBy()}
	requests := func() int {
		if src.Requests == nil {
			return 0
		}
		return src.Requests()
	}
	first := requests()
	found, err := FindDeleting(ctx, src.Client, scope, s.At)
	if err != nil {
		return s, "", err
	}
	s.SkippedPods, s.Younger = found.SkippedPods, found.Younger
	base := filepath.Join(resultsDir, "diagnose")
	for i, d := range found.Objects {
		if err := ctx.Err(); err != nil {
			return s, "", fmt.Errorf("diagnosing everything stuck interrupted after %d of %d: %w", i, len(found.Objects), err)
		}
		if progress != nil {
			progress(i+1, len(found.Objects), d)
		}
		before := requests()
		var res Result
		var err error
		if d.Kind == KindNamespace {
			res, err = RunNamespace(ctx, src, d.Name, resultsDir)
		} else {
			res, err = Run(ctx, src, d.Namespace, d.Name, resultsDir)
		}
		row := AllRow{Deleting: d, Requests: requests() - before}
		if err != nil {
			row.Code, row.Why, row.Error = ExitUndecided, "could not be diagnosed", err.Error()
		} else {
			row.Code, row.Why = res.Exit()
			rep := res.Summary.Report
			row.Answer, row.SafestStep, row.WhoCanRelease = rep.Answer, SafestStep(rep.Advice), WhoCanRelease(rep)
			row.Dir, _ = filepath.Rel(base, res.Dir)
		}
		s.Rows = append(s.Rows, row)
	}
	s.Requests = requests() - first
	dir := freeDir(filepath.Join(base, AllFolderName(s.At)))
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, dir, err
	}
	return s, dir, writeFiles(dir, map[string][]byte{}, map[string][]byte{SummaryFile: append(sum, '\n'), MarkdownFile: []byte(AllMarkdown(s))})
}

// stepRisks are the risks an advice step can open with, safest first; a
// note (no prefix) and a step that would not be honest are not steps to take.
var stepRisks = []Risk{RiskNothing, RiskSafe, RiskWait, RiskLow, RiskUnknown, RiskRisky, RiskDangerous}

// SafestStep is the first advice step of the lowest risk, as printed
// ("Safe: start the kubelet …"); "" when the advice has only notes. The
// steps are Risk.say's rendering, read back by their risk's prefix.
func SafestStep(advice []string) string {
	best, bestRank := "", len(stepRisks)
	for _, step := range advice {
		for rank, r := range stepRisks {
			if rank < bestRank && strings.HasPrefix(step, string(r)+": ") {
				best, bestRank = step, rank
			}
		}
	}
	return best
}

// WhoCanRelease names, for each blocking finding that is a cause (not the
// deletion request itself, nor a condition that only restates one), who
// can end it: a finalizer's controller, the node's kubelet, an APIService's
// owner. In the findings' order, each once.
func WhoCanRelease(r Report) []string {
	node := r.Node
	if node == "" {
		node = "its node"
	}
	var out []string
	seen := map[string]bool{}
	add := func(who string) {
		if !seen[who] {
			seen[who] = true
			out = append(out, who)
		}
	}
	for _, f := range r.Findings {
		if f.Level != Blocking {
			continue
		}
		kind, name, _ := strings.Cut(f.ID, ".")
		switch kind {
		case "finalizer":
			add("the controller of " + name)
		case "node", "container", "termination":
			add("the kubelet on " + node)
		case "volumes":
			add("whatever holds the volume's mount on " + node)
		case "leftover":
			add("the kubelet on " + name)
		case "finalizers":
			add("the admission webhook that refuses the finalizers' removal")
		case "apiservice", "apiservices", "discovery":
			add("the owner of the unavailable APIService")
		case "namespace":
			if name == "finalizers" {
				add("the controller of the namespace's spec.finalizers")
			}
		case "pod":
			add("what holds pod " + name + " (its own report)")
		}
	}
	return out
}

// AllMarkdown is the whole diagnosis' report: one row per object, what
// holds it (the blocking findings' ids, as its exit code's reason names
// them), who can release it and the safest step.
func AllMarkdown(s AllSummary) string {
	var b strings.Builder
	code, why := s.Exit()
	scope := Scope{Namespace: s.Namespace, OlderThan: time.Duration(s.OlderThanSeconds * float64(time.Second))}
	fmt.Fprintf(&b, "# What is stuck deleting, and what holds it\n\nRead at %s in %s. Exit %d: %s.\n\n", s.At.Format(time.RFC3339), scope, code, why)
	if len(s.Rows) == 0 {
		b.WriteString("No pod or namespace in scope has an older deletionTimestamp.\n")
		return b.String()
	}
	cell := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	b.WriteString("| object | deletionTimestamp | exit | what holds it | who can release it | safest step | report |\n| --- | --- | ---: | --- | --- | --- | --- |\n")
	for _, r := range s.Rows {
		cause := r.Why
		if r.Error != "" {
			cause = "could not be diagnosed: " + r.Error
		}
		link := ""
		if r.Dir != "" {
			link = fmt.Sprintf("[report](../%s/%s)", filepath.ToSlash(r.Dir), MarkdownFile)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s |\n", r.String(), r.DeletionTimestamp.Format(time.RFC3339), r.Code, cell(cause), cell(strings.Join(r.WhoCanRelease, "; ")), cell(r.SafestStep), link)
	}
	if s.SkippedPods > 0 {
		fmt.Fprintf(&b, "\n%d pods of namespaces being deleted are left out here: each namespace's report diagnoses its pods.\n", s.SkippedPods)
	}
	if s.Younger > 0 {
		fmt.Fprintf(&b, "\n%d objects being deleted for less than %gs are left out: not stuck yet.\n", s.Younger, s.OlderThanSeconds)
	}
	if s.Requests > 0 {
		fmt.Fprintf(&b, "\n%d API requests in all (%s).\n", s.Requests, perObject(s))
	}
	return b.String()
}

// perObject says the requests per object diagnosed, the search apart.
func perObject(s AllSummary) string {
	if len(s.Rows) == 0 {
		return "the search only"
	}
	each := 0
	for _, r := range s.Rows {
		each += r.Requests
	}
	return fmt.Sprintf("%.1f per object diagnosed, %d for the search", float64(each)/float64(len(s.Rows)), s.Requests-each)
}
