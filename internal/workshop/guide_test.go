package workshop

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/labs"
)

func TestReadmeSections(t *testing.T) {
	for _, name := range []string{"finalizer", "force", "orphan", "kwok"} {
		md, err := os.ReadFile(filepath.Join("..", "..", "labs", name, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		secs := ReadmeSections(md)
		for _, s := range guideSections {
			if secs[s] == "" {
				t.Errorf("labs/%s/README.md has no %q section for the guided session", name, s)
			}
		}
	}
	secs := ReadmeSections([]byte("# t\nintro\n## A\none\n\n## B\ntwo\n### sub\nthree\n"))
	if secs["A"] != "one" || secs["B"] != "two\n### sub\nthree" || len(secs) != 2 {
		t.Errorf("sections = %q", secs)
	}
}

// The guide prints hints from the run's events alone: the namespace when the
// run starts, and under each action what shows its effect; nothing under
// cleanup, and no node commands for a pod on a fake node.
func TestGuideHintsFromEvents(t *testing.T) {
	def := lab.Definition{Name: "finalizer", Manifests: []string{"held.yaml", "held-kwok.yaml"}}
	var out bytes.Buffer
	g := newGuide(&out, nil, def)
	g.node = "termlab-worker"
	ns := "termlab-finalizer-20261202-111614-6364"
	act := func(kind evidence.ActionKind, target string) lab.Event {
		return lab.Event{Kind: lab.ActionSent, Namespace: ns, Action: &evidence.Action{Kind: kind, Target: target}}
	}
	for _, e := range []lab.Event{
		{Kind: lab.RunStarted, Namespace: ns},
		{Kind: lab.StepStarted, Namespace: ns, Step: "kubelet: create pod held"},
		act("create", "held"),
		act("delete", "held"),
		act("create", "held-kwok"),
		act("force-delete", "held-kwok"),
		act("cleanup-remove-finalizers", "held"),
		{Kind: lab.StepFinished, Namespace: ns, Step: "cleanup"},
	} {
		g.onEvent(e)
	}
	got := out.String()
	for _, want := range []string{
		"the run's namespace is " + ns,
		"kubectl get pod held -n " + ns + " -o wide -w",
		"kubectl get pod held -n " + ns + " -o jsonpath='{.metadata.deletionTimestamp}",
		"docker exec termlab-worker crictl ps -a --label io.kubernetes.pod.name=held",
		"kubectl get pod held-kwok -n " + ns + " -o wide -w",
		"held-kwok is on a kwok fake node",
		"kubectl get pod held-kwok -n " + ns + " -o jsonpath=",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("guide output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "crictl ps -a --label io.kubernetes.pod.name=held-kwok") {
		t.Errorf("a node command for the fake pod:\n%s", got)
	}
	if n := strings.Count(got, "⌨"); n != 7 {
		t.Errorf("want 7 hints (none under cleanup), got %d:\n%s", n, got)
	}
}

func TestKubeletHintsNameTheNodeActedOn(t *testing.T) {
	def := lab.Definition{Name: "orphan", Uses: lab.Uses{Worker: 1, Changes: []lab.Change{lab.KubeletStop{}}}, Manifests: []string{"orphan-process.yaml"}}
	var out bytes.Buffer
	g := newGuide(&out, nil, def)
	g.onEvent(lab.Event{Kind: lab.ActionSent, Namespace: "ns1", Action: &evidence.Action{Kind: "stop-kubelet", Target: "termlab-worker2"}})
	if got := out.String(); !strings.Contains(got, "docker exec termlab-worker2 systemctl is-active kubelet") || !strings.Contains(got, "kubectl get node termlab-worker2 -w") {
		t.Errorf("kubelet hints:\n%s", got)
	}
}

// WORKSHOP.md lists every registered lab with its target.
func TestWorkshopGuideListsEveryLab(t *testing.T) {
	m := &Manifest{Platform: "linux/amd64"}
	got := string(guideText(m, "termlab-workshop.tar.gz", filepath.Join("..", ".."), labs.All))
	for _, d := range labs.All {
		if !strings.Contains(got, "`./termlab "+d.Title()+"`") || !strings.Contains(got, d.Summary) {
			t.Errorf("WORKSHOP.md does not list %s with its summary:\n%s", d.Title(), got)
		}
	}
}

// WORKSHOP.md's trainer notes give each lab its question, a prediction to
// ask for and the reference run's answer, with its numbers.
func TestWorkshopTrainerNotes(t *testing.T) {
	root := filepath.Join("..", "..")
	got := trainerNotes(root, labs.All)
	for _, d := range labs.All {
		if d.Predict == "" {
			t.Logf("%s has no Predict: its trainer notes ask for a prediction without saying what about", d.Title())
		}
		answer, id := ReferenceAnswer(root, d.Name)
		if answer == "" || id == "" {
			t.Errorf("%s: no answer in results/reference/%s/report.md", d.Title(), d.Name)
			continue
		}
		if !strings.ContainsAny(answer, "0123456789") {
			t.Errorf("%s: the reference answer has no numbers: %s", d.Title(), answer)
		}
		for _, want := range []string{"### " + d.Title(), d.Question, "- **Predict:** ", answer, "`./termlab " + d.Title() + " --by=you`"} {
			if !strings.Contains(got, want) {
				t.Errorf("trainer notes for %s lack %q", d.Title(), want)
			}
		}
	}
}

// The bundle carries docs/ beside the README that links to it.
func TestBundleCarriesTheDocs(t *testing.T) {
	files, err := repositoryFiles(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "docs/measurements.md", "labs/graceful/README.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("the bundle's files lack %s", want)
		}
	}
}
