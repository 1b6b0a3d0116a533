package cluster

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
)

// NoAccess is a node termlab cannot run commands on (a cluster reached
// through a kubeconfig without -node-access): it has a name for the labs and
// the record, and every command fails at once with evidence.ErrNoNodeAccess.
func NoAccess(name string) Node { return noAccessNode(name) }

type noAccessNode string

func (n noAccessNode) String() string { return string(n) }

// NoNodeAccess marks the node for the recorder, which then runs nothing.
func (n noAccessNode) NoNodeAccess() error { return evidence.ErrNoNodeAccess }

func (n noAccessNode) CommandContext(_ context.Context, name string, args ...string) exec.Cmd {
	return noAccessCmd{node: string(n), argv: append([]string{name}, args...)}
}

type noAccessCmd struct {
	node string
	argv []string
}

func (c noAccessCmd) Run() error {
	return fmt.Errorf("running %s on %s: %w", exec.PrettyCommand(c.argv[0], c.argv[1:]...), c.node, evidence.ErrNoNodeAccess)
}
func (c noAccessCmd) SetEnv(...string) exec.Cmd    { return c }
func (c noAccessCmd) SetStdin(io.Reader) exec.Cmd  { return c }
func (c noAccessCmd) SetStdout(io.Writer) exec.Cmd { return c }
func (c noAccessCmd) SetStderr(io.Writer) exec.Cmd { return c }

// HasAccess reports whether commands can run on the node: not for a node
// that says it has no access (NoNodeAccess, the mark the recorder reads too).
func HasAccess(n Node) bool {
	_, none := n.(interface{ NoNodeAccess() error })
	return !none
}
