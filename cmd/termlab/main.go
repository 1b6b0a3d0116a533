// Command termlab says why a Kubernetes pod or namespace is still there
// (termlab diagnose) and runs termlab's labs and cluster targets under their
// mage names. Installed or linked as kubectl-termlab it is the kubectl plugin
// `kubectl termlab diagnose pod/<name> -n <namespace>`. See internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/termlab/termlab/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// The first Ctrl-C cancels ctx: the node pods are still removed. The
	// second one ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
