package report

import (
	"os"
	"path/filepath"
	"testing"
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
