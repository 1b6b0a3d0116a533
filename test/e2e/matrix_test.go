//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/matrix"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/labs"
)

// sharedProvider hands out termlab's own cluster for its release and again
// for a fake second one, and deletes nothing: the matrix's plumbing (labs
// through lab.Execute per release, the table, the version expectations, the
// delete step) runs without building or creating a second cluster.
type sharedProvider struct {
	env     *cluster.Env
	fake    string
	deleted []string
}

func (p *sharedProvider) Up(_ context.Context, v string, _ bool, col *matrix.Column) (*cluster.Env, error) {
	if v == p.fake {
		col.Server = p.env.Versions.Kubernetes + " (fake entry " + v + ": termlab's own cluster again)"
	}
	return p.env, nil
}

func (p *sharedProvider) Down(_ context.Context, v string) error {
	p.deleted = append(p.deleted, v) // recorded only: the shared cluster stays
	return nil
}

// TestMatrixPlumbing runs lab:force and lab:finalizer through the matrix on
// termlab's cluster (v1.37.2) and under a fake v1.26.5: every claim passes
// on both, and exactly the terminal-phase claims are flagged at v1.26.5 (the
// kubelet sets a terminal phase only since 1.27, yet the held pod shows one).
func TestMatrixPlumbing(t *testing.T) {
	env := connect(t)
	defs, err := matrix.SelectLabs(labs.All, "force,finalizer")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const fake = "v1.26.5"
	p := &sharedProvider{env: env, fake: fake}
	dir := filepath.Join(t.TempDir(), "matrix")
	tb, out, err := matrix.Run(ctx, matrix.Options{
		Versions: []string{env.Versions.Kubernetes, fake}, Labs: defs, OutDir: dir, Provider: p, Log: progress.Default(),
	})
	if err != nil {
		t.Fatalf("matrix: %v", err)
	}
	if len(tb.Columns) != 2 || len(p.deleted) != 2 {
		t.Fatalf("columns %d, Down called for %v", len(tb.Columns), p.deleted)
	}
	for _, c := range tb.Columns {
		if len(c.Labs) != 2 || c.Error != "" || c.Kwok == "" {
			t.Errorf("column %+v", c)
		}
	}
	for _, r := range tb.Rows {
		for i, c := range r.Cells {
			if c.Verdict != "pass" || c.Value == "" {
				t.Errorf("%s at %s: %+v", r.Claim, tb.Columns[i].Version, c)
			}
		}
	}
	if len(tb.Rows) < 12 {
		t.Errorf("%d rows, want the 12 claims of force and finalizer", len(tb.Rows))
	}
	if len(tb.Flags) != 2 {
		t.Errorf("flags %v, want the two terminal-phase claims at %s", tb.Flags, fake)
	}
	for _, f := range tb.Flags {
		if !strings.HasPrefix(f, "finalizer.kubelet.") || !strings.Contains(f, " at "+fake+": phase = ") {
			t.Errorf("flag %q", f)
		}
	}
	for _, f := range []string{matrix.MarkdownFile, matrix.JSONFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, c := range tb.Columns {
		for _, l := range c.Labs {
			checkEvidence(t, filepath.Join(out, l.Dir))
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, matrix.MarkdownFile))
	t.Logf("%s", md)
}
