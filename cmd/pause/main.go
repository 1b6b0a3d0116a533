// Command pause is the pod sandbox's process: it holds the sandbox's
// namespaces open, blocking until SIGINT or SIGTERM and then exiting 0.
//
// It may be PID 1 of a pod with a shared process namespace, so orphaned
// processes are re-parented to it: it reaps every exited child on SIGCHLD.
// It prints nothing unless something goes wrong.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "pause: takes no arguments")
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	os.Exit(run(sigs))
}

// run reaps children on SIGCHLD and returns 0 on the first SIGINT or SIGTERM.
func run(sigs <-chan os.Signal) int {
	for s := range sigs {
		if s == syscall.SIGCHLD {
			if _, err := reap(); err != nil {
				fmt.Fprintln(os.Stderr, "pause: reaping:", err)
			}
			continue
		}
		return 0
	}
	return 0
}

// reap collects every child that has exited, without blocking, and returns
// their pids. Signals coalesce, so one SIGCHLD may stand for many children.
func reap() ([]int, error) {
	var pids []int
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return pids, nil // no children at all
		case err != nil:
			return pids, err
		case pid <= 0:
			return pids, nil // children remain, none has exited
		}
		pids = append(pids, pid)
	}
}
