package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
)

// A folder whose reports cannot all be written gets no summary.json (what
// says a run folder is complete), whatever order the files came in, and no
// file is left half-written.
func TestWriteFilesSummaryLastAndWhole(t *testing.T) {
	dir := t.TempDir()
	// report.md cannot be written: a directory has its name.
	if err := os.Mkdir(filepath.Join(dir, MarkdownFile), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []File{{Name: SummaryFile, Content: []byte(`{"verdict":"pass"}`)}, {Name: "events.html", Content: []byte("<p>")}, {Name: MarkdownFile, Content: []byte("# run")}}
	if err := WriteFiles(dir, files); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); !os.IsNotExist(err) {
		t.Errorf("summary.json was written although report.md was not (%v)", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
	if len(left) > 0 {
		t.Errorf("half-written files left: %v", left)
	}

	ok := t.TempDir()
	if err := WriteFiles(ok, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if b, err := os.ReadFile(filepath.Join(ok, f.Name)); err != nil || string(b) != string(f.Content) {
			t.Errorf("%s: %q, %v", f.Name, b, err)
		}
	}
}

// A run's report files are private; a file written again keeps its mode (a
// committed reference run rendered again stays as the checkout made it).
func TestWriteFilesPrivateUnlessThereBefore(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, MarkdownFile)
	if err := os.WriteFile(kept, []byte("# old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, []File{{Name: MarkdownFile, Content: []byte("# run")}, {Name: SummaryFile, Content: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{MarkdownFile: 0o644, SummaryFile: evidence.PrivateFile} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", name, st.Mode().Perm(), err, want)
		}
	}
}
