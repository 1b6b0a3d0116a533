package workshop

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
)

// answerMark opens the answer line of a report.md.
const answerMark = "**Answer from this run.** "

// ReferenceAnswer is the answer the lab's committed reference run gave
// (results/reference/<lab>/report.md), with its run id; "" when there is none.
func ReferenceAnswer(root, name string) (answer, runID string) {
	dir := filepath.Join(project.ResultsDir(root), "reference", name)
	f, err := os.Open(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, answerMark) {
			answer = strings.TrimPrefix(line, answerMark)
			break
		}
	}
	if s, err := report.ReadSummary(dir); err == nil {
		runID = s.RunID
	}
	return answer, runID
}

// trainerNotes is WORKSHOP.md's section for the trainer: per lab, the
// question to ask the room before running it, what to have them predict,
// and the answer with the numbers of the reference run.
func trainerNotes(root string, labs []lab.Definition) string {
	var b strings.Builder
	b.WriteString("## Trainer notes\n\n")
	b.WriteString("Before each lab, ask the room its question and have everyone write down a prediction; then let a participant run it with `--by=you` (termlab prints each command, they type it in a second terminal, a wrong one is named and can be retried), or run it yourself. The answer below is the committed reference run's; the participant's run prints its own.\n\n")
	for _, d := range labs {
		fmt.Fprintf(&b, "### %s\n\n", d.Title())
		fmt.Fprintf(&b, "- **Ask:** %s\n", d.Question)
		predict := d.Predict
		if predict == "" {
			predict = "what happens, and how long each part takes?"
		}
		fmt.Fprintf(&b, "- **Predict:** %s\n", predict)
		fmt.Fprintf(&b, "- **Run:** `./termlab %s --by=you` (or `bash scripts/%s.sh` to read along)\n", d.Title(), d.Name)
		if answer, id := ReferenceAnswer(root, d.Name); answer != "" {
			fmt.Fprintf(&b, "- **Answer** (reference run `%s`): %s\n\n", id, answer)
		} else {
			b.WriteString("- **Answer:** no reference run is committed yet.\n\n")
		}
	}
	return b.String()
}

// StepMode says whether a session waits for Enter between labs: yes on a
// terminal, unless -unattended or TERMLAB_STEP=0; -step or TERMLAB_STEP=1
// asks for it anywhere. Without a terminal (CI) it never waits by default.
func StepMode(step, unattended *bool) bool {
	switch {
	case unattended != nil && *unattended:
		return false
	case step != nil:
		return *step
	}
	switch os.Getenv(StepEnv) {
	case "0", "false":
		return false
	case "":
		return term.IsTerminal(int(os.Stdin.Fd()))
	}
	return true
}
