package compare

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A passing run is promoted; the same run with a credential in its folder is not.
func TestPromoteScansForCredentials(t *testing.T) {
	results := t.TempDir()
	base := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	run := filepath.Join(results, "force", "20261203-093000-abcd")
	writeRun(t, run, forceRun("", base, "uid-a", 2.013, 2.0, 137))
	if err := Promote(io.Discard, results, run); err != nil {
		t.Fatalf("promoting a clean passing run: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(run, "steps.txt"), []byte("client-key-data: LS0tLS1CRUdJTi\n"), 0o644))
	err := Promote(io.Discard, results, run)
	if err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("promoting a run that holds a credential: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(ReferenceDir(results, "force"), "steps.txt")); !os.IsNotExist(err) {
		t.Errorf("the leaking file reached the reference: %v", err)
	}
}

// A Deployment's pods get new generated names in every run; the lab's own
// and a StatefulSet's keep theirs.
func TestStablePodName(t *testing.T) {
	for name, want := range map[string]string{
		"ledger-6ff8669f56-pfng9": "ledger-*",
		"ledger-555564667f-5s9dv": "ledger-*",
		"ident-0":                 "ident-0",
		"orphan-process":          "orphan-process",
		"held-kwok":               "held-kwok",
		"plain-kwok-v08-fast":     "plain-kwok-v08-fast",
	} {
		if got := stablePodName(name); got != want {
			t.Errorf("stablePodName(%q) = %q, want %q", name, got, want)
		}
	}
}
