package docanchor

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func TestAnchors(t *testing.T) {
	md := "# termlab\n\n## Install: `termlab` and `kubectl termlab`\n\n### Quick start: why is this pod still there?\n\n" +
		"```sh\n# not a heading\n```\n\n## The labs\n\n## The labs\n\n#NoSpace\n\n    ## indented code\n\n## Closing hashes ##\n"
	got := Anchors(md)
	for _, want := range []string{"termlab", "install-termlab-and-kubectl-termlab", "quick-start-why-is-this-pod-still-there", "the-labs", "the-labs-1", "closing-hashes"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, keys(got))
		}
	}
	for _, not := range []string{"not-a-heading", "nospace", "indented-code", "the-labs-2", "install-termlab-and-kubectl-termlab-"} {
		if got[not] {
			t.Errorf("anchor %q should not exist: %v", not, keys(got))
		}
	}
}

// docRef is a Markdown file and anchor written in Go source: README.md#x,
// docs/diagnose.md#y.
var docRef = regexp.MustCompile(`([A-Za-z0-9_./-]+\.md)#([A-Za-z0-9_-]+)`)

// Every README or docs anchor termlab's Go code prints names a heading of
// the file it names (paths are from the repository's root).
func TestPrintedAnchorsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	refs := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "results" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range docRef.FindAllStringSubmatch(string(src), -1) {
			file, anchor := m[1], m[2]
			if strings.Contains(file, "://") || strings.HasPrefix(file, "/") {
				continue
			}
			refs++
			md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("%s prints %s#%s: %v", path, file, anchor, err)
				continue
			}
			if !Anchors(string(md))[anchor] {
				t.Errorf("%s prints %s#%s, and %s has no such heading; its anchors: %v", path, file, anchor, file, keys(Anchors(string(md))))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refs == 0 {
		t.Fatal("no README/docs anchor found in the Go sources: the scan is broken (doctor prints one)")
	}
	t.Logf("%d printed anchors checked", refs)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
