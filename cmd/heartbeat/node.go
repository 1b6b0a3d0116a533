package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// The node-access pod (internal/nodepod) runs this image's one binary in two
// more parts, so no other image has to be on the node:
//
//	heartbeat idle                       waits for SIGTERM (the pod's main process)
//	heartbeat chroot <dir> <cmd> [arg…]  runs cmd with <dir> (the node's / mounted there) as its root

// hostPath is searched for cmd inside the new root: a node's systemctl and
// crictl live in these.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// idle blocks until SIGTERM or SIGINT and returns the exit code.
func idle() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	return 0
}

// chrootExec replaces this process with args[1:] run inside root args[0].
// It returns only on failure, with the exit code a shell would give (127:
// command not found, 126: could not run it).
func chrootExec(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "heartbeat chroot: want <dir> <command> [args...]")
		return 2
	}
	if err := syscall.Chroot(args[0]); err != nil {
		fmt.Fprintf(os.Stderr, "heartbeat chroot: chroot %s: %v\n", args[0], err)
		return 126
	}
	if err := os.Chdir("/"); err != nil {
		fmt.Fprintf(os.Stderr, "heartbeat chroot: chdir /: %v\n", err)
		return 126
	}
	path, ok := lookPath(args[1])
	if !ok {
		fmt.Fprintf(os.Stderr, "heartbeat chroot: %s: command not found in %s\n", args[1], hostPath)
		return 127
	}
	env := append([]string{"PATH=" + hostPath}, os.Environ()...)
	err := syscall.Exec(path, args[1:], env)
	fmt.Fprintf(os.Stderr, "heartbeat chroot: exec %s: %v\n", path, err)
	return 126
}

// lookPath finds name the way a shell would, in hostPath (after chroot).
func lookPath(name string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, isExecutable(name)
	}
	for _, dir := range filepath.SplitList(hostPath) {
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
