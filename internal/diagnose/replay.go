package diagnose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Replay decides a report folder's diagnosis again from its
// raw/collected.json and renders report.md as Write would. Equal to the
// folder's report.md, it shows the collected file holds everything the
// diagnosis rested on, so the folder is a test case (testdata/decide).
func Replay(dir string) (string, error) {
	in, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(CollectedFile)))
	if err != nil {
		return "", fmt.Errorf("replaying %s: %w", dir, err)
	}
	sum, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return "", fmt.Errorf("replaying %s: %w", dir, err)
	}
	var dropped struct {
		Dropped []string `json:"dropped"`
	}
	if err := json.Unmarshal(sum, &dropped); err != nil {
		return "", fmt.Errorf("replaying %s: reading %s: %w", dir, SummaryFile, err)
	}
	md, err := decideCollected(in, dropped.Dropped)
	if err != nil {
		return "", fmt.Errorf("replaying %s: %w", dir, err)
	}
	return md, nil
}

// decideCollected decides a collected.json (a pod's or a namespace's) and
// renders its report.md, with the files Write dropped.
func decideCollected(in []byte, dropped []string) (string, error) {
	// A namespace's collected evidence lists the types it found.
	if bytes.Contains(in, []byte(`"Types"`)) {
		var c NamespaceCollected
		if err := json.Unmarshal(in, &c); err != nil {
			return "", err
		}
		return NamespaceMarkdown(NamespaceSummary{NamespaceReport: DecideNamespace(c), Dropped: dropped}), nil
	}
	var c Collected
	if err := json.Unmarshal(in, &c); err != nil {
		return "", err
	}
	return Markdown(Summary{Report: Decide(c), Dropped: dropped}), nil
}
