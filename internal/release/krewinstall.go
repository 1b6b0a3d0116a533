package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// KrewUser is a user of kubectl with krew: kubectl, krew (Krew.Dir) and
// the plugins krew links into $KREW_ROOT/bin on PATH, and nothing else of
// this machine's (no other PATH entry, HOME and KREW_ROOT its own), so a
// plugin that works here was installed by krew from the archive given.
type KrewUser struct {
	Krew     Krew
	Kubectl  string   // the kubectl that runs the plugins
	KrewRoot string   // KREW_ROOT: krew's receipts, store and bin
	Home     string   // HOME
	Env      []string // more of the environment (XDG_STATE_HOME=…)
}

// PATH is $KREW_ROOT/bin, kubectl's directory and krew's, in that order.
func (u KrewUser) PATH() string {
	return strings.Join([]string{filepath.Join(u.KrewRoot, "bin"), filepath.Dir(u.Kubectl), u.Krew.Dir}, string(os.PathListSeparator))
}

// Command is `kubectl <args>` as this user runs it, in dir.
func (u KrewUser) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, u.Kubectl, args...)
	cmd.Dir = dir
	// KREW_NO_UPGRADE_CHECK: krew asks GitHub for a newer krew otherwise.
	cmd.Env = append([]string{"PATH=" + u.PATH(), "HOME=" + u.Home, "KREW_ROOT=" + u.KrewRoot, "KREW_NO_UPGRADE_CHECK=1"}, u.Env...)
	return cmd
}

// Install is `kubectl krew install --manifest=<manifest> --archive=<archive>`:
// krew checks the archive's sha256 against the manifest's entry for this
// OS and arch, unpacks the files it names and links the bin into
// $KREW_ROOT/bin.
func (u KrewUser) Install(ctx context.Context, manifest, archive string) (string, error) {
	return u.krew(ctx, "install", "--manifest="+manifest, "--archive="+archive)
}

// Uninstall is `kubectl krew uninstall <name>`. krew v0.4.3 refuses to
// uninstall without a plugin index (checkIndex: a git clone under
// $KREW_ROOT/index, which `kubectl krew update` fetches from GitHub, and
// which installing from a manifest does not need), so when there is none an
// empty git repository stands in for the default one: krew only checks
// that it is a clone, and reads nothing from it to uninstall.
func (u KrewUser) Uninstall(ctx context.Context, name string) (string, error) {
	index := filepath.Join(u.KrewRoot, "index")
	if entries, err := os.ReadDir(index); err != nil || len(entries) == 0 {
		init := exec.CommandContext(ctx, "git", "init", "-q", filepath.Join(index, "default"))
		if out, err := init.CombinedOutput(); err != nil {
			return string(out), fmt.Errorf("making an empty krew index for kubectl krew uninstall: git init: %w\n%s", err, strings.TrimSpace(string(out)))
		}
	}
	return u.krew(ctx, "uninstall", name)
}

// Linked is the path of the plugin's link in $KREW_ROOT/bin, and whether it
// is there: what kubectl finds on PATH.
func (u KrewUser) Linked(name string) (string, bool) {
	bin := filepath.Join(u.KrewRoot, "bin", "kubectl-"+strings.ReplaceAll(name, "-", "_")+hostExe())
	_, err := os.Lstat(bin)
	return bin, err == nil
}

// Plugins is what `kubectl plugin list --name-only` finds on this user's PATH.
func (u KrewUser) Plugins(ctx context.Context) ([]string, error) {
	var stdout, stderr bytes.Buffer
	cmd := u.Command(ctx, u.Home, "plugin", "list", "--name-only")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// kubectl plugin list exits 1 when it finds none, and says so on stderr.
	if err := cmd.Run(); err != nil && !strings.Contains(stderr.String(), "unable to find any kubectl plugins") {
		return nil, fmt.Errorf("kubectl plugin list: %w\n%s", err, strings.TrimSpace(stderr.String()))
	}
	// One name a line, below a header sentence.
	var names []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if name := strings.TrimSpace(line); name != "" && !strings.Contains(name, " ") {
			names = append(names, name)
		}
	}
	return names, nil
}

func (u KrewUser) krew(ctx context.Context, args ...string) (string, error) {
	out, err := u.Command(ctx, u.Home, append([]string{"krew"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl krew %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
