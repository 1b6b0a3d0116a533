package nodeunit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

type namedNode string

func (n namedNode) CommandContext(context.Context, string, ...string) exec.Cmd { return nil }
func (n namedNode) String() string                                             { return string(n) }

// Every node is looked at at once; the results come back in the nodes'
// order whatever order they finish in (the runtime's), and every node's error is kept.
func TestOnEachKeepsOrderAndEveryError(t *testing.T) {
	nodes := []Node{namedNode("a"), namedNode("b"), namedNode("c")}
	// Each look waits until all three have begun: looked at one after
	// another, the first would wait alone until its deadline.
	var begun sync.WaitGroup
	begun.Add(len(nodes))
	all := make(chan struct{})
	go func() { begun.Wait(); close(all) }()
	got, err := OnEach(context.Background(), nodes, func(_ context.Context, n Node) ([]string, error) {
		begun.Done()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return nil, errors.New(n.String() + " was looked at alone")
		}
		if n.String() == "b" || n.String() == "c" {
			return []string{n.String() + "1"}, errors.New("no answer from " + n.String())
		}
		return []string{n.String() + "1", n.String() + "2"}, nil
	})
	if err != nil && strings.Contains(err.Error(), "alone") {
		t.Fatalf("the nodes were not looked at at once: %v", err)
	}
	if strings.Join(got, ",") != "a1,a2,b1,c1" {
		t.Errorf("results %v, want the nodes' order a1,a2,b1,c1", got)
	}
	if err == nil || !strings.Contains(err.Error(), "no answer from b") || !strings.Contains(err.Error(), "no answer from c") {
		t.Errorf("error %v, want both nodes' errors", err)
	}
}
