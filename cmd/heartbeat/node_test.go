package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChroot runs the built binary's chroot part into a root holding only a
// copy of itself, which proves the command ran inside the new root: the copy
// is found at /bin/heartbeat there and nowhere on the host's PATH.
func TestChroot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "heartbeat"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Inside the root, heartbeat's own parseConfig rejects the argument: exit 2 and its message.
	out, err := exec.Command(bin, "chroot", root, "heartbeat", "--no-such-flag").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "heartbeat: flag provided but not defined") {
		t.Fatalf("chroot into a root with heartbeat: exit %v, output %q; want exit 2 from the copy inside", err, out)
	}
	out, err = exec.Command(bin, "chroot", root, "crictl").CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 127 || !strings.Contains(string(out), "command not found") {
		t.Fatalf("chroot with a missing command: exit %v, output %q; want 127, command not found", err, out)
	}
}
