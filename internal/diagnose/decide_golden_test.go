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
	var all []string
	for _, step := range podFindings {
		for i, r := range step.rules {
			all = append(all, fmt.Sprintf("%s[%d]", r.id, i))
		}
	}
	for _, r := range podAnswer {
		all = append(all, "answer."+r.id)
	}
	for _, r := range podAdvice {
		all = append(all, "advice."+r.id)
	}
	all = append(all, "advice.nothing-to-do")
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Errorf("rule id %s is used twice", id)
		}
		seen[id] = true
		if fired[id] == 0 {
			t.Errorf("rule %s speaks in no case under testdata/decide/pod: add a collected.json that needs it", id)
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
func podCases(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "decide", "pod", "*.collected.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no pod cases under testdata/decide/pod (%v)", err)
	}
	return inputs
}

// readCase is a golden case's collected evidence.
func readCase(t *testing.T, path string) Collected {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c Collected
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}
