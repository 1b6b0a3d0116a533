package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
// there: what `diagnose -A` diagnoses.
type Deleting struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	Requested time.Time `json:"deletion_requested"`
}

func (d Deleting) String() string {
	if d.Kind == KindNamespace {
		return "namespace/" + d.Name
	}
	return "pod/" + d.Namespace + "/" + d.Name
}

// FindDeleting lists every namespace and pod that has a deletionTimestamp,
// in pages of listPage (a cluster of 100,000 pods is not one answer),
// namespaces first, each kind oldest request first. A pod of a namespace
// that is itself being deleted is left out (its namespace's diagnosis
// diagnoses it); skipped says how many were.
func FindDeleting(ctx context.Context, client kubernetes.Interface) (found []Deleting, skipped int, err error) {
	nsGoing := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := client.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return nil, 0, fmt.Errorf("listing namespaces: %w", err)
		}
		for _, ns := range list.Items {
			if ns.DeletionTimestamp != nil {
				nsGoing[ns.Name] = true
				found = append(found, Deleting{Kind: KindNamespace, Name: ns.Name, Requested: ns.DeletionTimestamp.UTC()})
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	namespaces := len(found)
	opts = metav1.ListOptions{Limit: listPage}
	for {
		list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, 0, fmt.Errorf("listing pods in every namespace: %w", err)
		}
		for _, p := range list.Items {
			switch {
			case p.DeletionTimestamp == nil:
			case nsGoing[p.Namespace]:
				skipped++
			default:
				found = append(found, Deleting{Kind: KindPod, Namespace: p.Namespace, Name: p.Name, Requested: p.DeletionTimestamp.UTC()})
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	oldestFirst := func(s []Deleting) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].Requested.Before(s[j].Requested) })
	}
	oldestFirst(found[:namespaces])
	oldestFirst(found[namespaces:])
	return found, skipped, nil
}

// AllRow is one object's line in `diagnose -A`: its exit code (as its own
// diagnosis would exit), why, its answer and its report folder.
type AllRow struct {
	Deleting
	Code   int    `json:"exit_code"`
	Why    string `json:"why"`
	Answer string `json:"answer"`
	// Dir is its report folder, relative to the -A folder's parent.
	Dir string `json:"dir,omitempty"`
	// Error says why it could not be diagnosed (Code is then ExitUndecided).
	Error string `json:"error,omitempty"`
}

// AllSummary is the summary.json of `diagnose -A`.
type AllSummary struct {
	At   time.Time `json:"at"`
	Rows []AllRow  `json:"objects"`
	// SkippedPods are pods of namespaces being deleted: in their namespace's diagnosis.
	SkippedPods int `json:"skipped_pods,omitempty"`
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
		return ExitClear, "nothing is being deleted"
	}
	return ExitClear, "nothing holds what is being deleted"
}

// AllFolderName is the -A report folder's name under diagnose/.
func AllFolderName(at time.Time) string { return at.UTC().Format("20060102-150405") + "-all" }

// RunAll diagnoses every object FindDeleting finds, one after another
// (each writes its own report folder), tells progress each one's start,
// and writes the whole as <resultsDir>/diagnose/<time>-all/ (summary.json,
// report.md). An object that cannot be diagnosed is a row with its error:
// the others go on.
func RunAll(ctx context.Context, src Source, resultsDir string, progress func(i, n int, d Deleting)) (AllSummary, string, error) {
	s := AllSummary{At: time.Now().UTC(), Termlab: madeBy()}
	found, skipped, err := FindDeleting(ctx, src.Client)
	if err != nil {
		return s, "", err
	}
	s.SkippedPods = skipped
	base := filepath.Join(resultsDir, "diagnose")
	for i, d := range found {
		if err := ctx.Err(); err != nil {
			return s, "", fmt.Errorf("diagnose -A interrupted after %d of %d: %w", i, len(found), err)
		}
		if progress != nil {
			progress(i+1, len(found), d)
		}
		var res Result
		var err error
		if d.Kind == KindNamespace {
			res, err = RunNamespace(ctx, src, d.Name, resultsDir)
		} else {
			res, err = Run(ctx, src, d.Namespace, d.Name, resultsDir)
		}
		row := AllRow{Deleting: d}
		if err != nil {
			row.Code, row.Why, row.Error = ExitUndecided, "could not be diagnosed", err.Error()
		} else {
			row.Code, row.Why = res.Exit()
			row.Answer = res.Summary.Answer
			row.Dir, _ = filepath.Rel(base, res.Dir)
		}
		s.Rows = append(s.Rows, row)
	}
	dir := freeDir(filepath.Join(base, AllFolderName(s.At)))
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, dir, err
	}
	return s, dir, writeFiles(dir, map[string][]byte{}, map[string][]byte{SummaryFile: append(sum, '\n'), MarkdownFile: []byte(AllMarkdown(s))})
}

// AllMarkdown is the -A report: one row per object, what holds it (the
// blocking findings' ids, as its exit code's reason names them).
func AllMarkdown(s AllSummary) string {
	var b strings.Builder
	code, why := s.Exit()
	fmt.Fprintf(&b, "# What is being deleted, and what holds it\n\nRead at %s. Exit %d: %s.\n\n", s.At.Format(time.RFC3339), code, why)
	if len(s.Rows) == 0 {
		b.WriteString("No pod or namespace has a deletionTimestamp.\n")
		return b.String()
	}
	b.WriteString("| object | deletion requested | exit | what holds it | report |\n| --- | --- | ---: | --- | --- |\n")
	for _, r := range s.Rows {
		cause := r.Why
		if r.Error != "" {
			cause = "could not be diagnosed: " + r.Error
		}
		link := ""
		if r.Dir != "" {
			link = fmt.Sprintf("[report](../%s/%s)", filepath.ToSlash(r.Dir), MarkdownFile)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", r.String(), r.Requested.Format(time.RFC3339), r.Code, strings.ReplaceAll(cause, "|", "\\|"), link)
	}
	if s.SkippedPods > 0 {
		fmt.Fprintf(&b, "\n%d pods of namespaces being deleted are left out here: each namespace's report diagnoses its pods.\n", s.SkippedPods)
	}
	return b.String()
}
