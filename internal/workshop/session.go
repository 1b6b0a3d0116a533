package workshop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/compare"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/resultsindex"
)

// StepEnv turns on step mode: TERMLAB_STEP=1.
const StepEnv = "TERMLAB_STEP"

// SessionOptions configure Session.
type SessionOptions struct {
	// Root is the project (or unpacked bundle) root: labs/, results/.
	Root string
	// Step waits for Enter before each lab and after it.
	Step bool
	// In is read for Enter in step mode (default os.Stdin); Out gets the
	// explanations (default os.Stdout); the labs' progress goes to os.Stderr.
	In  io.Reader
	Out io.Writer
	// Lab are the options every lab runs with (Keep, Timeout …).
	Lab lab.Options
	// WaitForOthers bounds the wait, before each lab, for a lab run in
	// progress on the same cluster (someone else's) to end; default 15 minutes.
	WaitForOthers time.Duration
}

func (o SessionOptions) waitOthers() time.Duration {
	if o.WaitForOthers > 0 {
		return o.WaitForOthers
	}
	return activeRunAge
}

// LabOutcome is one lab of a session.
type LabOutcome struct {
	Lab     string
	Summary *report.Summary
	Err     error
	// Compared is the comparison with results/reference/<lab>, nil without one.
	Compared *compare.Result
}

// Session runs the labs in order as a guided session. Before each lab it
// shows what the lab asks, does and what to watch for (labs/<lab>/README.md)
// and the kubectl/crictl/docker commands that show the same from a second
// terminal; while the lab runs, each step is followed by the commands for
// that step. After each lab: its verdicts, the comparison with its reference
// run and a regenerated results/index.md.
//
// Step mode waits for Enter before each lab and after it, never inside one:
// the labs measure time-critical things (a force-deleted container that
// exits 8 s later must be seen by crictl before it does; a stopped kubelet
// turns its node NotReady after ~40 s), so a pause between a lab's steps
// would change what it records and could fail its claims.
//
// Before each lab it waits while another lab run looks in progress on the
// cluster (ActiveRuns): the lab's repair of leftovers would break it.
//
// The error names every lab that failed a claim, could not run, or differs
// from its reference run.
func Session(ctx context.Context, env *cluster.Env, defs []lab.Definition, opts SessionOptions) ([]LabOutcome, error) {
	in, out := opts.In, opts.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	results := opts.Lab.ResultsDir
	if results == "" {
		results = filepath.Join(opts.Root, "results")
		opts.Lab.ResultsDir = results
	}
	if opts.Lab.RepoRoot == "" {
		opts.Lab.RepoRoot = opts.Root
	}
	keys := bufio.NewReader(in)
	begin := time.Now()
	k := findKubectl(env)

	fmt.Fprintf(out, "termlab workshop: %d labs on cluster %q (%s, node image %s, kwok %s).\n",
		len(defs), env.Name, env.Versions.Kubernetes, env.Versions.NodeImage, env.Versions.Kwok)
	if opts.Step {
		fmt.Fprintf(out, "Step mode: the session waits for Enter before and after each lab (not inside one: the labs time what they see).\n")
	} else {
		fmt.Fprintf(out, "Unattended: the session does not wait between labs (on a terminal it does, unless -unattended or %s=0).\n", StepEnv)
	}

	var outcomes []LabOutcome
	var problems []string
	for i, def := range defs {
		if err := ctx.Err(); err != nil {
			break
		}
		printLabIntro(out, opts.Root, i+1, len(defs), def, env, k)
		if opts.Step {
			if !waitEnter(out, keys, fmt.Sprintf("Press Enter to run %s (q and Enter ends the session) ", def.Title())) {
				fmt.Fprintln(out, "session ended by the participant")
				break
			}
		}
		// Its repair of leftovers would break a run someone else has going.
		if err := waitNoActiveRuns(ctx, progress.Default(), env.Client, opts.waitOthers()); err != nil {
			problems = append(problems, fmt.Sprintf("%s: not run: %v", def.Title(), err))
			break
		}
		lo := opts.Lab
		lo.Events = newGuide(os.Stderr, env, def).onEvent
		s, err := lab.Execute(ctx, env, def, lo)
		o := LabOutcome{Lab: def.Name, Summary: s, Err: err}
		if p, werr := resultsindex.Write(results); werr != nil {
			fmt.Fprintf(out, "could not regenerate %s: %v\n", p, werr)
		}
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", def.Title(), err))
		case s.Partial():
			problems = append(problems, fmt.Sprintf("%s: partial (claims not checked), see %s", def.Title(), filepath.Join(s.Dir, report.MarkdownFile)))
		case !s.Passed():
			problems = append(problems, fmt.Sprintf("%s: claims failed, see %s", def.Title(), filepath.Join(s.Dir, report.MarkdownFile)))
		}
		if s != nil {
			o.Compared = compareWithReference(out, results, s)
			if o.Compared != nil && !o.Compared.Matches() {
				problems = append(problems, fmt.Sprintf("%s: differs from its reference run (above)", def.Title()))
			}
			fmt.Fprintf(out, "── %s: %s. Report: %s\n", def.Title(), s.Verdict, filepath.Join(s.Dir, report.MarkdownFile))
		}
		outcomes = append(outcomes, o)
		if opts.Step && i < len(defs)-1 && ctx.Err() == nil {
			if !waitEnter(out, keys, "Read the report, look around the cluster; press Enter for the next lab (q ends the session) ") {
				fmt.Fprintln(out, "session ended by the participant")
				break
			}
		}
	}

	fmt.Fprintf(out, "\n══ the session, %s\n\n", time.Since(begin).Round(time.Second))
	for _, o := range outcomes {
		verdict, ref := "could not run", "no reference run"
		if o.Summary != nil {
			verdict = string(o.Summary.Verdict)
		}
		if o.Compared != nil {
			ref = "matches the reference"
			if !o.Compared.Matches() {
				ref = fmt.Sprintf("DIFFERS from the reference (%d)", len(o.Compared.Differences))
			}
		}
		fmt.Fprintf(out, "   lab:%-10s %-5s  %s\n", o.Lab, verdict, ref)
	}
	fmt.Fprintf(out, "\n   every run: %s\n", filepath.Join(results, resultsindex.File))
	if err := ctx.Err(); err != nil {
		problems = append(problems, "interrupted: "+err.Error())
	}
	if len(problems) > 0 {
		return outcomes, errors.New(strings.Join(problems, "\n"))
	}
	return outcomes, nil
}

func compareWithReference(out io.Writer, results string, s *report.Summary) *compare.Result {
	ref := compare.ReferenceDir(results, s.Lab)
	if _, err := os.Stat(filepath.Join(ref, report.SummaryFile)); err != nil {
		fmt.Fprintf(out, "── no reference run for lab:%s (%s): nothing to compare with\n", s.Lab, ref)
		return nil
	}
	fmt.Fprintf(out, "\n── compared with the reference run\n")
	rs, err := compare.Compare(out, []compare.Pair{{Run: s.Dir, Reference: ref}})
	if err != nil || len(rs) == 0 {
		fmt.Fprintf(out, "   could not compare: %v\n", err)
		return &compare.Result{Lab: s.Lab, Differences: []compare.Item{{Kind: "read", Text: fmt.Sprint(err)}}}
	}
	return rs[0]
}

// waitEnter prompts and reads a line; false when it is q or input ended.
func waitEnter(out io.Writer, in *bufio.Reader, prompt string) bool {
	fmt.Fprint(out, prompt)
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(out)
		return false
	}
	return strings.TrimSpace(strings.ToLower(line)) != "q"
}
