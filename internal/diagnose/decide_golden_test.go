package diagnose

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGolden rewrites the expected reports from the current code:
// go test ./internal/diagnose -run TestDecideGolden -update, then read the diff.
var updateGolden = flag.Bool("update", false, "rewrite testdata/decide/*/*.report.md from the current code")

// TestDecideGolden decides every collected-evidence file under testdata/decide
// (pod/ and namespace/, each <case>.collected.json) and compares the rendered
// report with <case>.report.md beside it. A new case is a collected.json (a
// real report folder's, or a constructed one) plus -update.
func TestDecideGolden(t *testing.T) {
	for _, kind := range []string{"pod", "namespace"} {
		inputs, err := filepath.Glob(filepath.Join("testdata", "decide", kind, "*.collected.json"))
		if err != nil || len(inputs) == 0 {
			t.Fatalf("no %s cases under testdata/decide/%s (%v)", kind, kind, err)
		}
		for _, in := range inputs {
			name := strings.TrimSuffix(filepath.Base(in), ".collected.json")
			t.Run(kind+"/"+name, func(t *testing.T) {
				b, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decideCollected(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := strings.TrimSuffix(in, ".collected.json") + ".report.md"
				if *updateGolden {
					if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				w, err := os.ReadFile(want)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(w, []byte(got)) {
					t.Errorf("%s differs from what Decide renders now (run with -update and read the diff):\n--- want\n%s\n--- got\n%s", want, w, got)
				}
			})
		}
	}
}

// TestEveryRuleIsExercised: every rule of the pod tables speaks in at least
// one golden case, so each has an input that makes it say what it says (and,
// through the golden reports, a record of its words).
func TestEveryRuleIsExercised(t *testing.T) {
	fired := map[string]int{}
	for _, in := range podCases(t) {
		for _, id := range Decide(readCase(t, in)).rules {
			fired[id]++
		}
	}
	all := append(ruleIDs(podFindings, podAnswer, podAdvice), "advice.nothing-to-do")
	requireEveryRuleFired(t, "pod", all, fired)
}

// TestEveryNamespaceRuleIsExercised: the same for the namespace tables.
func TestEveryNamespaceRuleIsExercised(t *testing.T) {
	fired := map[string]int{}
	for _, in := range namespaceCases(t) {
		for _, id := range DecideNamespace(readNSCase(t, in)).rules {
			fired[id]++
		}
	}
	requireEveryRuleFired(t, "namespace", ruleIDs(nsFindings, nsAnswer, nsAdvice), fired)
}

// ruleIDs names every rule of a diagnosis's tables as the decision's fired
// list names them: <finding id>[<place>], each.<step>, answer.<id>, advice.<id>.
func ruleIDs[F any](findings []findingStep[F], answer []sentenceRule[F], advice []adviceRule[F]) []string {
	var all []string
	for _, step := range findings {
		if step.each != nil {
			all = append(all, "each."+step.name)
		}
		for i, r := range step.rules {
			all = append(all, fmt.Sprintf("%s[%d]", r.id, i))
		}
	}
	for _, r := range answer {
		all = append(all, "answer."+r.id)
	}
	for _, r := range advice {
		all = append(all, "advice."+r.id)
	}
	return all
}

// requireEveryRuleFired fails for a rule id used twice or fired by no case
// under testdata/decide/<kind>.
func requireEveryRuleFired(t *testing.T, kind string, all []string, fired map[string]int) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Errorf("rule id %s is used twice", id)
		}
		seen[id] = true
		if fired[id] == 0 {
			t.Errorf("rule %s speaks in no case under testdata/decide/%s: add a collected.json that needs it", id, kind)
		}
	}
}

// TestReplayReadsBackWhatWasWritten: a folder written from a golden case's
// evidence replays to the same report.md.
func TestReplayReadsBackWhatWasWritten(t *testing.T) {
	c := readCase(t, filepath.Join("testdata", "decide", "pod", "cluster-crash-looping-operator.collected.json"))
	dir := t.TempDir()
	raw := Raw{}
	raw.put(CollectedFile, c)
	if _, err := Write(dir, Decide(c), raw); err != nil {
		t.Fatal(err)
	}
	got, err := Replay(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if got != string(want) {
		t.Errorf("replayed report differs from the written one:\n--- written\n%s\n--- replayed\n%s", want, got)
	}
	// A changed piece of evidence changes the replay: it reads the file.
	c.Pod.Finalizers = nil
	raw.put(CollectedFile, c)
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(CollectedFile)), raw[CollectedFile], 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := Replay(dir); again == string(want) {
		t.Error("a replay of different evidence gave the same report")
	}
}

// podCases are the golden pod cases' collected.json files.
func podCases(t *testing.T) []string { return goldenCases(t, "pod") }

// namespaceCases are the golden namespace cases' collected.json files.
func namespaceCases(t *testing.T) []string { return goldenCases(t, "namespace") }

func goldenCases(t *testing.T, kind string) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "decide", kind, "*.collected.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no %s cases under testdata/decide/%s (%v)", kind, kind, err)
	}
	return inputs
}

// readCase is a golden pod case's collected evidence.
func readCase(t *testing.T, path string) Collected { return readJSON[Collected](t, path) }

// readNSCase is a golden namespace case's collected evidence.
func readNSCase(t *testing.T, path string) NamespaceCollected {
	return readJSON[NamespaceCollected](t, path)
}

func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
