// Command termlab-runc is an OCI runtime wrapper for hosts whose capability
// bounding set lacks capabilities that `docker run --privileged` asks for.
// Registered as dockerd's default runtime, it removes those capabilities from
// the bundle's config.json (create/run) or the process JSON (exec), then execs
// the real runc with the same arguments. It only ever drops capabilities the
// host could not grant anyway.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/termlab/termlab/internal/capfilter"
)

// realRuncCandidates are tried in order; TERMLAB_REAL_RUNC overrides them.
var realRuncCandidates = []string{"/usr/bin/runc", "/usr/sbin/runc", "/usr/local/bin/runc", "/usr/local/sbin/runc"}

// globalValueFlags are runc's global flags that take a separate value.
var globalValueFlags = map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}

func main() {
	if err := filterFor(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "termlab-runc: %v\n", err)
		os.Exit(1)
	}
	runc, err := realRunc()
	if err != nil {
		fmt.Fprintf(os.Stderr, "termlab-runc: %v\n", err)
		os.Exit(1)
	}
	args := append([]string{runc}, os.Args[1:]...)
	if err := syscall.Exec(runc, args, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "termlab-runc: exec %s: %v\n", runc, err)
		os.Exit(1)
	}
}

// filterFor rewrites the JSON that the subcommand in args will read.
func filterFor(args []string) error {
	sub, rest := subcommand(args)
	var path string
	var filter func([]byte, capfilter.Set) ([]byte, []string, error)
	switch sub {
	case "create", "run":
		bundle := flagValue(rest, "--bundle", "-b")
		if bundle == "" {
			bundle = "."
		}
		path, filter = filepath.Join(bundle, "config.json"), capfilter.FilterConfig
	case "exec":
		path = flagValue(rest, "--process", "-p")
		if path == "" {
			return nil // exec with inline args: runc derives caps from the container's config
		}
		filter = capfilter.FilterProcessJSON
	default:
		return nil
	}
	bounding, err := capfilter.OwnBounding()
	if err != nil {
		return fmt.Errorf("reading own capability bounding set: %w", err)
	}
	missing := capfilter.Set{}
	for _, n := range capfilter.Missing(bounding) {
		missing[n] = true
	}
	if len(missing) == 0 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s for %s: %w", path, sub, err)
	}
	out, removed, err := filter(data, missing)
	if err != nil {
		return fmt.Errorf("filtering %s: %w", path, err)
	}
	if len(removed) == 0 {
		return nil
	}
	return os.WriteFile(path, out, 0o600)
}

// subcommand finds runc's subcommand, skipping global flags and their values.
func subcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return a, args[i+1:]
		}
		if globalValueFlags[a] {
			i++
		}
	}
	return "", nil
}

func flagValue(args []string, long, short string) string {
	for i, a := range args {
		if (a == long || a == short) && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, long+"="); ok {
			return v
		}
		if v, ok := strings.CutPrefix(a, short+"="); ok {
			return v
		}
	}
	return ""
}

func realRunc() (string, error) {
	if p := os.Getenv("TERMLAB_REAL_RUNC"); p != "" {
		return p, nil
	}
	self, _ := os.Executable()
	for _, c := range realRuncCandidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() && c != self {
			return c, nil
		}
	}
	return "", fmt.Errorf("no real runc found in %v (set TERMLAB_REAL_RUNC)", realRuncCandidates)
}
