//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/labs"
)

// TestResultsDiskFull runs lab:force with its results on a full filesystem
// (a 256 KiB tmpfs). Expected, written down first: the run ends with a clear
// error naming the full disk; its folder never becomes latest and has no
// summary.json (nothing a reference or the index could take for a finished
// run); the cluster is cleaned up as after any run (its namespace deleted).
func TestResultsDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	own := connect(t)
	results := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "termlab-full-results", results).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", results).Run() })
	def, ok := labs.ByName("force")
	if !ok {
		t.Fatal("no lab force")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := lab.Execute(ctx, own, def, lab.Options{ResultsDir: results})
	t.Logf("lab:force with its results on a full disk ended after %s: %v", time.Since(begin).Round(time.Second), err)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("want an error naming the full disk, got %v", err)
	}
	if s == nil || s.Verdict != claims.Fail {
		t.Errorf("the run's summary says %v, want fail: its reports were not written", s)
	}
	if target, err := os.Readlink(filepath.Join(results, "force", "latest")); err == nil {
		t.Errorf("the half-written run became latest (%s)", target)
	}
	runs, _ := filepath.Glob(filepath.Join(results, "force", "*", report.SummaryFile))
	if len(runs) > 0 {
		t.Errorf("a half-written run has a summary.json: %v", runs)
	}
	list, err := own.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: lab.LabLabel + "=force"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range list.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s of the run is still there and not being deleted", ns.Name)
		}
	}
}
