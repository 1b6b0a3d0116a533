package nodepod

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/kind/pkg/exec"
)

// Lazy is the named node's exec seam, starting its node pod at the first
// command run through it: a lab that never asks a node starts nothing there.
func (a *Access) Lazy(name string) *LazyNode { return &LazyNode{access: a, name: name} }

// LazyNode is a node whose pod starts on first use (Access.Lazy).
type LazyNode struct {
	access *Access
	name   string
}

func (l *LazyNode) String() string { return l.name }

func (l *LazyNode) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &lazyCmd{node: l, ctx: ctx, argv: append([]string{name}, args...)}
}

type lazyCmd struct {
	node           *LazyNode
	ctx            context.Context
	argv           []string
	env            []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c *lazyCmd) SetEnv(env ...string) exec.Cmd  { c.env = env; return c }
func (c *lazyCmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *lazyCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *lazyCmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }

func (c *lazyCmd) Run() error {
	n, why := c.node.access.Node(c.ctx, c.node.name)
	if n == nil {
		return fmt.Errorf("running %s on %s: no node pod there: %s", exec.PrettyCommand(c.argv[0], c.argv[1:]...), c.node.name, why)
	}
	cmd := n.CommandContext(c.ctx, c.argv[0], c.argv[1:]...)
	if len(c.env) > 0 {
		cmd.SetEnv(c.env...)
	}
	if c.stdin != nil {
		cmd.SetStdin(c.stdin)
	}
	if c.stdout != nil {
		cmd.SetStdout(c.stdout)
	}
	if c.stderr != nil {
		cmd.SetStderr(c.stderr)
	}
	return cmd.Run()
}
