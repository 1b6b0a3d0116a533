// Package report renders a decided run — the record plus the verdicts of its
// claims — into the run folder: summary.json, report.md, timeline.svg and
// junit.xml. Every file is rendered from the same in-memory Run, and the
// rendering is deterministic so it can be golden-tested.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/version"
)

// Files written by Write, in the run folder.
const (
	SummaryFile  = "summary.json"
	MarkdownFile = "report.md"
	TimelineFile = "timeline.svg"
	JUnitFile    = "junit.xml"
)

// Summary is summary.json: what a reader or CI needs to trust the run.
type Summary struct {
	Lab        string            `json:"lab"`
	RunID      string            `json:"run_id"`
	Verdict    claims.Verdict    `json:"verdict"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt time.Time         `json:"finished_at"`
	Versions   map[string]string `json:"versions"`
	Namespace  string            `json:"namespace"`
	Claims     []claims.Claim    `json:"claims"`
	Steps      []evidence.Step   `json:"steps"`
	// Repairs lists leftovers of earlier runs that this run repaired before starting.
	Repairs []string `json:"repairs,omitempty"`
	// Errors lists what went wrong while running (a failed step, an interrupt, cleanup trouble).
	Errors []string `json:"errors,omitempty"`
	// Clocks are the nodes' and the API server's clock offsets from the
	// host's, as measured in the run: timings across clocks are this exact.
	Clocks []evidence.ClockOffset `json:"clocks,omitempty"`
	// Answer is the lab's answer from this run (Run.Answer), kept here so
	// the results index can show it from summary.json alone.
	Answer string `json:"answer,omitempty"`
	// Termlab is the termlab that made the run (absent in runs made before
	// it was recorded).
	Termlab *version.Info `json:"termlab,omitempty"`
	// Dir is the run folder (not part of the JSON: the file lives in it).
	Dir string `json:"-"`
}

// Passed reports whether the run's verdict is pass: every claim checked and passed.
func (s *Summary) Passed() bool { return s != nil && s.Verdict == claims.Pass }

// Partial reports whether no claim failed but some were not checked.
func (s *Summary) Partial() bool { return s != nil && s.Verdict == claims.Partial }

// Run is a decided run: what the report is rendered from.
type Run struct {
	Summary Summary
	Record  *evidence.Record
	// Title and Question introduce the report, e.g. "lab:finalizer" and the lab's question.
	Title    string
	Question string
	// Answer answers Question with the run's numbers (see Findings); it
	// opens report.md, before the picture.
	Answer string
	// Sections are the lab's own parts of report.md, shown after the claims.
	Sections []Section
	// Moments are what the lab knows happened that is not one of its
	// actions (lab:scale: the namespace gone), drawn as marks on the
	// aggregate picture.
	Moments []Marker
}

// File is one rendered report file.
type File struct {
	Name    string
	Content []byte
}

// Render renders every report file in memory, so that a run can check them
// before anything is written.
func Render(run Run) ([]File, error) {
	renderers := []struct {
		name   string
		render func(Run) ([]byte, error)
	}{
		{SummaryFile, SummaryJSON},
		{TimelineFile, func(r Run) ([]byte, error) { return SVG(r), nil }},
		{MarkdownFile, func(r Run) ([]byte, error) { return Markdown(r), nil }},
		{JUnitFile, JUnit},
	}
	var files []File
	for _, f := range renderers {
		b, err := f.render(run)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", f.name, err)
		}
		files = append(files, File{f.name, b})
	}
	return files, nil
}

// WriteFiles writes rendered files into dir.
func WriteFiles(dir string, files []File) error {
	// summary.json last: it is what says a run folder is complete (results:
	// reference, the index, compare read it), so a folder whose reports could
	// not all be written (a full disk) never has one that says pass.
	ordered := slices.Clone(files)
	slices.SortStableFunc(ordered, func(a, b File) int {
		return cmp.Compare(boolInt(a.Name == SummaryFile), boolInt(b.Name == SummaryFile))
	})
	for _, f := range ordered {
		if err := writeWhole(filepath.Join(dir, f.Name), f.Content); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
	}
	return nil
}

// writeWhole writes the file under a temporary name and renames it: the
// file is there whole or not at all. A new file is private
// (evidence.PrivateFile); one written again keeps its mode (a committed
// reference run, rendered again, stays as readable as the checkout made it).
func writeWhole(path string, content []byte) error {
	tmp := path + ".partial"
	mode := evidence.PrivateFile
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	os.Remove(tmp) // a leftover keeps its mode: WriteFile's applies to a new file only
	if err := os.WriteFile(tmp, content, mode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Write renders every report file into dir.
func Write(dir string, run Run) error {
	files, err := Render(run)
	if err != nil {
		return err
	}
	return WriteFiles(dir, files)
}

// SummaryJSON renders summary.json.
func SummaryJSON(run Run) ([]byte, error) {
	b, err := json.MarshalIndent(run.Summary, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadSummary reads a run folder's summary.json.
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("reading the run summary: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, SummaryFile), err)
	}
	s.Dir = dir
	return &s, nil
}
