// Package targets holds the bodies of termlab's commands, shared by the mage
// targets (magefiles/targets, one call each) and the termlab binary (cmd/termlab),
// so `go tool mage lab:force` and `termlab lab:force` run the same code.
// Each function takes its inputs as the mage target receives them (nil: not
// given) and writes what a person reads to w; progress goes to the logger.
package targets

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// withHangup ends ctx on SIGHUP and SIGTERM as mage ends it on Ctrl-C: a
// dropped SSH session then cleans up what the command made (node pods, a
// stopped kubelet) instead of killing the process where it stands.
func withHangup(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}
