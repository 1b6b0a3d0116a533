package heapprof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAtWritesAProfileOnlyWhenAsked(t *testing.T) {
	t.Setenv(EnvDir, "")
	if line := At("unset"); line != "" {
		t.Errorf("At with %s unset said %q", EnvDir, line)
	}
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	line := At("steps")
	if !strings.Contains(line, "heap at steps: live ") {
		t.Errorf("At said %q", line)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*-steps.pprof"))
	if len(files) != 1 {
		t.Fatalf("profiles written: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Size() == 0 {
		t.Errorf("the profile is empty or missing: %v", err)
	}
}
