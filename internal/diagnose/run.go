package diagnose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Result is one diagnosis: the written summary, its folder and how long it took.
type Result struct {
	Summary Summary
	// Namespace is the whole summary of a namespace diagnosis (RunNamespace); nil for a pod.
	Namespace *NamespaceSummary
	Dir       string
	Took      time.Duration
	// Watched is the last look of a --watch after the diagnosis (nil
	// without one); Watched.Exists: still there when the watch ended.
	Watched *Look
}

// ParsePod splits "<namespace>/<name>".
func ParsePod(s string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(s, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("pod %q: want <namespace>/<name>", s)
	}
	return namespace, name, nil
}

// Run collects the evidence about pod namespace/name, decides the findings
// and writes them to <resultsDir>/diagnose/<UTC time>-<namespace>-<name>/.
func Run(ctx context.Context, src Source, namespace, name, resultsDir string) (Result, error) {
	begin := time.Now()
	c, raw, err := Collect(ctx, src, namespace, name)
	if err != nil {
		return Result{}, err
	}
	// An interrupted collection would report "not checked" for what it
	// never got to ask: write nothing rather than that.
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("diagnosing %s/%s was interrupted: nothing written: %w", namespace, name, err)
	}
	r := Decide(c)
	raw.put(CollectedFile, c)
	dir := freeDir(filepath.Join(resultsDir, "diagnose", FolderName(c.At, namespace, name)))
	s, err := Write(dir, r, raw)
	if err != nil {
		return Result{Summary: s, Dir: dir}, fmt.Errorf("writing the diagnosis of %s/%s: %w", namespace, name, err)
	}
	return Result{Summary: s, Dir: dir, Took: time.Since(begin)}, nil
}

// freeDir is dir, or dir-2, dir-3 … when an earlier diagnosis in the same
// second took it: each diagnosis keeps its own folder.
func freeDir(dir string) string {
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return dir
		}
		if i > 2 {
			dir = dir[:strings.LastIndex(dir, "-")]
		}
		dir = fmt.Sprintf("%s-%d", dir, i)
	}
}

// Exit is the diagnosis's exit code and why: its findings' (Outcome), or,
// after a --watch, the watch's last look (0 gone, 1 still there).
func (r Result) Exit() (code int, why string) {
	if w := r.Watched; w != nil {
		if w.Exists {
			return ExitHeld, "still there when the watch ended: " + strings.Join(w.Held, " | ")
		}
		return ExitClear, "gone while watched"
	}
	return Outcome(r.Summary.Findings)
}

// ExitError is a diagnosis that did not end clear, as an error whose
// ExitStatus is its exit code: `go tool mage diagnose` exits with it, as
// `termlab diagnose` does.
type ExitError struct {
	Code int
	Why  string
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d: %s", e.Code, e.Why) }

// ExitStatus is the process's exit code; mage reads it from the error a target returns.
func (e *ExitError) ExitStatus() int { return e.Code }
