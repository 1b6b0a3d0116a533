package diagnose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/version"
)

// Report folder files.
const (
	MarkdownFile = "report.md"
	SummaryFile  = "summary.json"
)

// Raw is the bytes Collect read, by file name in the report folder, saved as evidence beside the report.
type Raw map[string][]byte

// Summary is summary.json: the report plus what was left out.
type Summary struct {
	Report
	// Dropped are evidence files not written because they held something
	// credential-like.
	Dropped []string `json:"dropped,omitempty"`
	// Watched is --watch's last look, added once the watch ended: the
	// exit code follows it, so the JSON says what the code says.
	Watched *WatchedLook `json:"watched,omitempty"`
	// Termlab is the termlab that made the diagnosis.
	Termlab *version.Info `json:"termlab,omitempty"`
}

// madeBy is this termlab, for a summary's "termlab" object.
func madeBy() *version.Info {
	info := version.Get()
	return &info
}

// WatchedLook is what summary.json keeps of --watch's last look.
type WatchedLook struct {
	At     time.Time `json:"at"`
	Exists bool      `json:"exists"`
	// Held are the texts of the blocking findings then.
	Held   []string `json:"held,omitempty"`
	Answer string   `json:"answer"`
}

// RecordWatch adds --watch's last look to the summary.json in dir, as its
// "watched" object; the rest of the file is kept as written.
func RecordWatch(dir string, last Look) error {
	path := filepath.Join(dir, SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("adding the watch's last look: %w", err)
	}
	// Appended as the last field, the others kept in their order.
	body := bytes.TrimRight(b, "\n")
	if !bytes.HasSuffix(body, []byte("}")) {
		return fmt.Errorf("adding the watch's last look: %s does not end in one JSON object", path)
	}
	w, err := json.MarshalIndent(WatchedLook{At: last.At, Exists: last.Exists, Held: last.Held, Answer: last.Answer}, "  ", "  ")
	if err != nil {
		return err
	}
	out := append(bytes.TrimRight(body[:len(body)-1], "\n "), []byte(",\n  \"watched\": ")...)
	out = append(append(out, w...), []byte("\n}")...)
	if !json.Valid(out) {
		return fmt.Errorf("adding the watch's last look to %s made invalid JSON", path)
	}
	if leaks := credscan.Bytes(SummaryFile, out); len(leaks) > 0 {
		return fmt.Errorf("%s would hold a credential (%v): the watch's last look not written", SummaryFile, leaks)
	}
	return os.WriteFile(path, append(out, '\n'), evidence.PrivateFile)
}

// FolderName is <UTC time>-<namespace>-<pod>, the report's folder under results/diagnose/.
func FolderName(at time.Time, namespace, pod string) string {
	return at.UTC().Format("20060102-150405") + "-" + namespace + "-" + pod
}

// Write renders report.md and summary.json and saves the raw evidence into
// dir. Every file is scanned for credentials first; one that trips the scan
// is never written, and the report says so.
func Write(dir string, r Report, raw Raw) (Summary, error) {
	s := Summary{Report: r, Termlab: madeBy()}
	files, dropped := scanRaw(raw)
	s.Dropped = dropped
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, fmt.Errorf("encoding %s: %w", SummaryFile, err)
	}
	return s, writeFiles(dir, files, map[string][]byte{SummaryFile: append(sum, '\n'), MarkdownFile: []byte(Markdown(s))})
}

// scanRaw keeps the raw files that pass the credential scan and names the
// ones that do not (with the pattern they tripped), sorted.
func scanRaw(raw Raw) (map[string][]byte, []string) {
	files := map[string][]byte{}
	var dropped []string
	for name, b := range raw {
		if leaks := credscan.Bytes(name, b); len(leaks) > 0 {
			dropped = append(dropped, fmt.Sprintf("%s (%s)", name, leaks[0].Pattern))
			continue
		}
		files[name] = b
	}
	sort.Strings(dropped)
	return files, dropped
}

// writeFiles writes the scanned raw files and the rendered ones into dir,
// a private folder (evidence.PrivateDir). A rendered file quotes the
// evidence: one that would hold a credential stops the write before
// anything is written.
func writeFiles(dir string, files, rendered map[string][]byte) error {
	for name, b := range rendered {
		if leaks := credscan.Bytes(name, b); len(leaks) > 0 {
			return fmt.Errorf("%s would hold a credential (%v): not written", name, leaks)
		}
		files[name] = b
	}
	if err := makePrivate(dir); err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), evidence.PrivateDir); err != nil {
			return fmt.Errorf("creating the report folder: %w", err)
		}
		if err := os.WriteFile(p, b, evidence.PrivateFile); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// makePrivate creates the report folder dir, readable by its owner alone;
// its parents (results/diagnose) are made as any folder is.
func makePrivate(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("creating the report folder: %w", err)
	}
	if err := os.MkdirAll(dir, evidence.PrivateDir); err != nil {
		return fmt.Errorf("creating the report folder: %w", err)
	}
	if err := os.Chmod(dir, evidence.PrivateDir); err != nil {
		return fmt.Errorf("making the report folder private: %w", err)
	}
	return nil
}

// Markdown is report.md: the answer first, then each finding with its
// evidence, then what to do.
func Markdown(s Summary) string {
	var b strings.Builder
	title := s.Pod
	if title == "" {
		title = "a pod that does not exist"
	}
	fmt.Fprintf(&b, "# diagnose %s\n\n", title)
	fmt.Fprintf(&b, "Read at %s", s.At.UTC().Format(time.RFC3339))
	if s.Node != "" {
		fmt.Fprintf(&b, "; node %s", s.Node)
	}
	b.WriteString(". Read-only: GETs, LISTs, node commands that only look, and a server-side dry run.\n\n")
	fmt.Fprintf(&b, "## Answer\n\n%s\n\n", s.Answer)
	if len(s.Findings) > 0 {
		b.WriteString("## Findings\n\n")
		for _, f := range s.Findings {
			fmt.Fprintf(&b, "- **%s** — %s (%s). %s\n", f.ID, f.Verdict, f.Level, f.Text)
			for _, e := range f.Evidence {
				file, field, _ := strings.Cut(e, ": ")
				if field != "" {
					fmt.Fprintf(&b, "  - evidence: [%s](%s): %s\n", file, file, field)
				} else {
					fmt.Fprintf(&b, "  - evidence: [%s](%s)\n", file, file)
				}
			}
		}
		b.WriteString("\n")
	}
	if len(s.Advice) > 0 {
		b.WriteString("## What to do, and its risk\n\n")
		for _, a := range s.Advice {
			fmt.Fprintf(&b, "- %s\n", a)
		}
		b.WriteString("\n")
	}
	if len(s.Dropped) > 0 {
		fmt.Fprintf(&b, "Left out because they held something credential-like: %s.\n", strings.Join(s.Dropped, ", "))
	}
	return b.String()
}
