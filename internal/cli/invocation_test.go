package cli

import (
	"context"
	"io"
	"testing"

	"github.com/termlab/termlab/internal/invocation"
)

// Run says how the binary was started, so the hints printed by the packages
// it calls name a command this binary has, as it spells it.
func TestRunSetsTheInvocation(t *testing.T) {
	t.Cleanup(func() { invocation.Set(invocation.Invocation{Kind: invocation.Mage}) })
	for _, tc := range []struct {
		argv0, clusterUp, nodeAccess string
	}{
		{"/usr/local/bin/termlab", "termlab cluster:up", "--node-access"},
		{"/home/me/.krew/bin/kubectl-termlab", "kubectl termlab cluster:up", "--node-access"},
	} {
		t.Run(tc.argv0, func(t *testing.T) {
			invocation.Set(invocation.Invocation{Kind: invocation.Mage})
			if code := Run(context.Background(), []string{tc.argv0, "version"}, io.Discard, io.Discard); code != 0 {
				t.Fatalf("termlab version: exit %d", code)
			}
			if got := invocation.Command("cluster:up"); got != tc.clusterUp {
				t.Errorf("Command(cluster:up) = %q, want %q", got, tc.clusterUp)
			}
			if got := invocation.Flag("-nodeaccess"); got != tc.nodeAccess {
				t.Errorf("Flag(-nodeaccess) = %q, want %q", got, tc.nodeAccess)
			}
			// images:all is a mage target the binary does not have.
			if got, want := invocation.Command("images:all"), "go tool mage images:all (in a termlab checkout)"; got != want {
				t.Errorf("Command(images:all) = %q, want %q", got, want)
			}
			if got, want := invocation.Command("lab:force", "-by=script"), tc.clusterUp[:len(tc.clusterUp)-len("cluster:up")]+"lab:force --by=script"; got != want {
				t.Errorf("Command(lab:force -by=script) = %q, want %q", got, want)
			}
		})
	}
}
