package labs

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/manifests/pods"
)

// Every registered lab brings what the rest of termlab derives from it:
// its folder and README, manifests that load, steps a person can type, a
// reference run, a mage target, a row in the README. Adding a lab without
// one of them fails here, naming what is missing.
func TestEveryLabIsComplete(t *testing.T) {
	root := filepath.Join("..")
	magefile, err := os.ReadFile(filepath.Join(root, "magefiles", "targets", "lab.go"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range All {
		t.Run(d.Name, func(t *testing.T) {
			if seen[d.Name] {
				t.Fatalf("lab %s is registered twice", d.Name)
			}
			seen[d.Name] = true
			if d.Question == "" || d.Summary == "" || d.Steps == nil || d.Claims == nil {
				t.Errorf("Definition lacks Question, Summary, Steps or Claims")
			}
			if _, err := os.Stat(filepath.Join(root, "labs", d.Name, "README.md")); err != nil {
				t.Errorf("no labs/%s/README.md: %v", d.Name, err)
			}
			for _, m := range d.Manifests {
				if _, _, err := lab.LoadManifest(m); err != nil {
					t.Errorf("manifest %s: %v", m, err)
				}
			}
			if len(d.ByHand) == 0 {
				t.Error("no ByHand steps: the workshop and hands-on mode need the commands a person would type")
			}
			for i, h := range d.ByHand {
				if h.Title == "" || len(h.Do)+len(h.See) == 0 {
					t.Errorf("ByHand[%d] %+v has no title or no commands", i, h)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "results", "reference", d.Name, "summary.json")); err != nil {
				t.Errorf("no reference run results/reference/%s (go tool mage results:reference after a passing run): %v", d.Name, err)
			}
			// The target calls internal/targets with every lab flag; a lab
			// that stops a kubelet also passes -allownodefaults; every one
			// -nowait. A lab with
			// flags of its own (lab:scale) has its own function there.
			flags := `targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess`
			if d.Uses.FaultsANode() {
				flags += `, AllowNodeFaults: allownodefaults`
			}
			if d.Uses.FaultsTheCluster() {
				flags += `, AllowClusterFaults: allowclusterfaults`
			}
			flags += `, NoWait: nowait})`
			call := `targets.Lab(ctx, "` + d.Name + `", ` + flags
			own := regexp.MustCompile(`targets\.Lab(?i:` + regexp.QuoteMeta(d.Name) + `)\(ctx, [^\n]*` + regexp.QuoteMeta(flags))
			if !strings.Contains(string(magefile), call) && !own.Match(magefile) {
				t.Errorf("no target in magefiles/targets/lab.go calling %s", call)
			}
			if _, err := os.Stat(filepath.Join(root, "scripts", d.Name+".sh")); err != nil {
				t.Errorf("no scripts/%s.sh: every lab is also a script a person can run or type (lab:%[1]s -by=script runs it): %v", d.Name, err)
			}
			if !strings.Contains(string(readme), "`"+d.Title()+"`") {
				t.Errorf("README.md does not name `%s` in its table of labs", d.Title())
			}
		})
	}
}

// Every change a lab declares can be made safely on a cluster termlab
// shares: a guard that refuses it through a kubeconfig until the flag that
// names it is given, an undo that leaves alone a run that made none of it, a
// dead-man's switch with a bound (a stopped kubelet's under the unreachable
// toleration), and a repair (repair walks lab.Kinds(), not the labs: it
// cannot know which lab left a leftover).
func TestEveryDeclaredChangeHasItsGuardUndoSwitchAndRepair(t *testing.T) {
	workers := []cluster.Node{cluster.NoAccess("w1"), cluster.NoAccess("w2")}
	own := &cluster.Env{Workers: workers}
	remote := &cluster.Env{Workers: workers, NodeAccess: evidence.NodeAccessPod}
	allowed := &cluster.Env{Workers: workers, NodeAccess: evidence.NodeAccessPod, FaultNode: "w2", AllowClusterFaults: true}
	flag := map[lab.Scope]string{lab.NodeScope: "-allownodefaults", lab.ClusterScope: "-allowclusterfaults"}
	for _, d := range All {
		kinds := map[reflect.Type]bool{}
		for _, c := range d.Uses.Changes {
			t.Run(d.Name+"/"+reflect.TypeOf(c).Name(), func(t *testing.T) {
				if kinds[reflect.TypeOf(c)] {
					t.Errorf("declared twice: one value per kind")
				}
				kinds[reflect.TypeOf(c)] = true
				if c.Name() == "" {
					t.Error("no Name: a refusal says what the lab does")
				}
				if err := c.Guard(own); err != nil {
					t.Errorf("refused on termlab's own cluster: %v", err)
				}
				if err := c.Guard(remote); err == nil || flag[c.Scope()] == "" || !strings.Contains(err.Error(), flag[c.Scope()]) {
					t.Errorf("through a kubeconfig without a flag: %v; want a refusal naming %q (scope %d: a declared change harms someone)", err, flag[c.Scope()], c.Scope())
				}
				if err := c.Guard(allowed); err != nil {
					t.Errorf("refused with -allownodefaults and -allowclusterfaults: %v", err)
				}
				sw := c.Switch()
				if sw.What == "" || sw.Bound <= 0 {
					t.Errorf("dead-man's switch %+v: it says what undoes the change if termlab is killed, and within how long", sw)
				}
				// A kubelet the lab stops comes back by itself before any pod's
				// default unreachable toleration runs out, even if termlab is killed.
				if _, ok := c.(lab.KubeletStop); ok && sw.Bound >= lab.DefaultUnreachableToleration {
					t.Errorf("the kubelet is down for up to %s if termlab is killed, not under %s", sw.Bound, lab.DefaultUnreachableToleration)
				}
				client := fake.NewSimpleClientset()
				r := &lab.Run{ID: "20261204-000000-abcd", Lab: d.Name, Env: &cluster.Env{Client: client}}
				if err := c.Undo(context.Background(), r); err != nil || len(client.Actions()) > 0 {
					t.Errorf("the undo of a run that made none: %v, requests %v; want nothing done", err, client.Actions())
				}
				if !slices.ContainsFunc(lab.Kinds(), func(k lab.Change) bool { return reflect.TypeOf(k) == reflect.TypeOf(c) }) {
					t.Error("not in lab.Kinds(): repair would never look for what a killed run left of it")
				}
			})
		}
	}
}

// Every pod manifest belongs to a registered lab (no count to keep in step).
func TestEveryManifestBelongsToALab(t *testing.T) {
	entries, err := pods.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, d := range All {
		for _, m := range d.Manifests {
			used[m] = true
		}
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".yaml" && !used[e.Name()] {
			t.Errorf("manifests/pods/%s belongs to no registered lab", e.Name())
		}
	}
}

func TestByName(t *testing.T) {
	if d, ok := ByName("orphan"); !ok || d.Name != "orphan" || !d.Uses.FaultsANode() {
		t.Errorf("ByName(orphan) = %+v, %v", d.Uses, ok)
	}
	if _, ok := ByName("nope"); ok {
		t.Error("ByName found a lab that is not registered")
	}
}

// The ranges a lab README quotes under "## Measured" hold the committed
// reference run's observed values: a README never quotes numbers its own
// reference run contradicts.
func TestReadmeRangesHoldTheReferenceRun(t *testing.T) {
	row := regexp.MustCompile("^\\| `([^`]+)` \\| `([^`]+)` \\| ([0-9.]+)–([0-9.]+) s \\|$")
	for _, d := range All {
		md, err := os.ReadFile(filepath.Join("..", "labs", d.Name, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		_, measured, ok := strings.Cut(string(md), "\n## Measured\n")
		if !ok {
			t.Errorf("labs/%s/README.md has no \"## Measured\" section: quote the ranges its runs showed there", d.Name)
			continue
		}
		sum, err := report.ReadSummary(filepath.Join("..", "results", "reference", d.Name))
		if err != nil {
			t.Errorf("lab:%s quotes measured ranges but has no reference run: %v", d.Name, err)
			continue
		}
		observed := map[string]map[string]any{}
		for _, c := range sum.Claims {
			observed[c.ID] = c.Observed
		}
		rows := 0
		for _, line := range strings.Split(measured, "\n") {
			m := row.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			rows++
			lo, _ := strconv.ParseFloat(m[3], 64)
			hi, _ := strconv.ParseFloat(m[4], 64)
			v, ok := observed[m[1]][m[2]].(float64)
			if !ok {
				t.Errorf("labs/%s/README.md quotes %s %s, which the reference run did not observe", d.Name, m[1], m[2])
				continue
			}
			if v < lo || v > hi {
				t.Errorf("labs/%s/README.md quotes %s %s as %g–%g s; the reference run observed %g s", d.Name, m[1], m[2], lo, hi, v)
			}
		}
		if rows == 0 {
			t.Errorf("labs/%s/README.md has a Measured section with no rows this test can read", d.Name)
		}
	}
}

// The README's time per lab covers what docs/measurements.md records for
// that lab (the soaks' ranges and the timed rounds): the two never
// contradict, and the README quotes no time that was not measured.
func TestReadmeLabTimesHoldTheMeasurements(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	measurements, err := os.ReadFile(filepath.Join("..", "docs", "measurements.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := readmeLabTimes(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	measured := measuredLabTimes(string(measurements))
	for _, d := range All {
		q, ok := quoted[d.Name]
		if !ok {
			t.Errorf("README.md's table of labs gives lab:%s no time as `lo–hi s`", d.Name)
			continue
		}
		m := measured[d.Name]
		if len(m) == 0 {
			t.Errorf("docs/measurements.md's time per lab has no figure for lab:%s", d.Name)
			continue
		}
		// Whole seconds: 6.7–9.1 s is quoted as 7–9 s.
		lo, hi := math.Round(slices.Min(m)), math.Round(slices.Max(m))
		if q[0] > lo || q[1] < hi {
			t.Errorf("README.md gives lab:%s %g–%g s; docs/measurements.md measured %g–%g s", d.Name, q[0], q[1], lo, hi)
		}
		if q[0] < lo-1 || q[1] > hi+1 {
			t.Errorf("README.md gives lab:%s %g–%g s, wider than the %g–%g s measured", d.Name, q[0], q[1], lo, hi)
		}
	}
}

// readmeLabTimes reads the table of labs: lab name → its time range in s.
func readmeLabTimes(md string) (map[string][2]float64, error) {
	row := regexp.MustCompile("^\\| `lab:([a-z]+)` \\|.*\\| ([0-9.]+)–([0-9.]+) s[^|]*\\|$")
	out := map[string][2]float64{}
	for _, line := range strings.Split(md, "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		lo, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, err
		}
		hi, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, err
		}
		out[m[1]] = [2]float64{lo, hi}
	}
	return out, nil
}

// measuredLabTimes reads docs/measurements.md's time per lab: every number
// in a lab's row after its name (ranges "lo–hi" and lists "a, b").
func measuredLabTimes(md string) map[string][]float64 {
	_, section, _ := strings.Cut(md, "\n## Time per lab\n")
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("^\\| `lab:([a-z]+)` \\|(.*)\\|$")
	number := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	out := map[string][]float64{}
	for _, line := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		for _, n := range number.FindAllString(m[2], -1) {
			v, _ := strconv.ParseFloat(n, 64)
			out[m[1]] = append(out[m[1]], v)
		}
	}
	return out
}

// A README time that a measurement contradicts fails the check.
func TestReadmeLabTimesCatchAContradiction(t *testing.T) {
	readme := "| `lab:force` | x | 7–9 s |\n"
	q, err := readmeLabTimes(readme)
	if err != nil || q["force"] != [2]float64{7, 9} {
		t.Fatalf("readmeLabTimes = %v, %v", q, err)
	}
	m := measuredLabTimes("# Measurements\n\n## Time per lab\n\n| `lab:force` | 6.7–9.1 | 12, 8 | — |\n\n## Next\n| `lab:force` | 99 |\n")
	if !slices.Equal(m["force"], []float64{6.7, 9.1, 12, 8}) {
		t.Fatalf("measuredLabTimes = %v", m)
	}
	if slices.Max(m["force"]) <= q["force"][1] {
		t.Error("a measured 12 s fits a quoted 7–9 s")
	}
}

// Each lab README answers its question first, in "## The answer", with
// numbers its committed reference run gave: every decimal and every "N of
// M" there is in the reference run's own answer (summary.json), so a new
// reference run cannot leave the README quoting the old one's figures.
func TestReadmeAnswersQuoteTheReferenceRun(t *testing.T) {
	for _, d := range All {
		md, err := os.ReadFile(filepath.Join("..", "labs", d.Name, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := report.ReadSummary(filepath.Join("..", "results", "reference", d.Name))
		if err != nil {
			t.Errorf("lab:%s has no reference run: %v", d.Name, err)
			continue
		}
		for _, miss := range unquotedFigures(string(md), sum.Answer) {
			t.Errorf("labs/%s/README.md's answer quotes %q, which its reference run's answer does not say", d.Name, miss)
		}
	}
}

// unquotedFigures are the figures of a README's "## The answer" section
// (which must come right after "## The question") that the run's answer
// lacks; a README without that section gives one entry saying so.
func unquotedFigures(md, runAnswer string) []string {
	sections := regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(md, -1)
	if len(sections) < 2 || sections[0][1] != "The question" || sections[1][1] != "The answer" {
		return []string{"no \"## The answer\" right after \"## The question\""}
	}
	_, answer, _ := strings.Cut(md, "\n## The answer\n")
	answer, _, _ = strings.Cut(answer, "\n## ")
	figure := regexp.MustCompile(`[0-9]+\.[0-9]+|[0-9][0-9,]* of [0-9][0-9,]*`)
	var out []string
	for _, f := range figure.FindAllString(answer, -1) {
		if !strings.Contains(runAnswer, strings.ReplaceAll(f, ",", "")) {
			out = append(out, f)
		}
	}
	return out
}

func TestUnquotedFiguresCatchAStaleAnswer(t *testing.T) {
	md := "# lab:x\n\n## The question\n\nq?\n\n## The answer\n\nGone 0.01 s later; 104 of 1,803 failed.\n\n## Measured\n\n9.9\n"
	if got := unquotedFigures(md, "gone 0.01 s after; 104 of 1803 requests failed"); len(got) != 0 {
		t.Errorf("figures the run said are reported missing: %v", got)
	}
	if got := unquotedFigures(md, "gone 0.02 s after; 98 of 1803 requests failed"); !slices.Equal(got, []string{"0.01", "104 of 1,803"}) {
		t.Errorf("stale figures found: %v, want 0.01 and 104 of 1,803", got)
	}
	if got := unquotedFigures("## The question\n\n## What the lab does\n", ""); len(got) != 1 {
		t.Errorf("a README without an answer first: %v", got)
	}
}

// A count the root README quotes ("104 of 1,803") is one a committed
// reference run's answer says.
func TestRootReadmeCountsComeFromReferenceRuns(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var answers strings.Builder
	for _, d := range All {
		sum, err := report.ReadSummary(filepath.Join("..", "results", "reference", d.Name))
		if err != nil {
			t.Fatalf("lab:%s has no reference run: %v", d.Name, err)
		}
		answers.WriteString(sum.Answer + "\n")
	}
	count := regexp.MustCompile(`[0-9][0-9,]* of [0-9][0-9,]*`)
	for _, c := range count.FindAllString(string(readme), -1) {
		if !strings.Contains(answers.String(), strings.ReplaceAll(c, ",", "")) {
			t.Errorf("README.md quotes %q, which no reference run's answer says", c)
		}
	}
}
