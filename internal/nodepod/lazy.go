package nodepod

import (
	"context"
	"errors"

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
	return &cmd{lazy: l, ctx: ctx, argv: append([]string{name}, args...)}
}

// Start starts the node's pod now rather than at its first command.
func (l *LazyNode) Start(ctx context.Context) error {
	if _, why := l.access.Node(ctx, l.name); why != "" {
		return errors.New(why)
	}
	return nil
}
