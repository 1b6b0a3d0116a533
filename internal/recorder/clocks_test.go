package recorder

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

func TestParseEpoch(t *testing.T) {
	got, err := parseEpoch("1764817200.123456789")
	if err != nil || !got.Equal(time.Unix(1764817200, 123456789)) {
		t.Errorf("parseEpoch = %v, %v", got, err)
	}
	// busybox date prints %N literally: not a time.
	for _, bad := range []string{"1764817200.%N", "1764817200", "1764817200.12", "x.123456789"} {
		if _, err := parseEpoch(bad); err == nil {
			t.Errorf("parseEpoch(%q) accepted it", bad)
		}
	}
}

// slurpNode reads all of stdin before it runs anything, as the node pod's
// agent does: the streamed probe must give up, not hang.
type slurpNode struct{}

func (slurpNode) String() string { return "slurp" }
func (slurpNode) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &slurpCmd{}
}

type slurpCmd struct {
	in  io.Reader
	out io.Writer
}

func (c *slurpCmd) Run() error {
	b, _ := io.ReadAll(c.in) // returns only once stdin is closed
	if c.out != nil {
		_, _ = c.out.Write([]byte(strings.Repeat("1764817200.123456789\n", strings.Count(string(b), "\n"))))
	}
	return nil
}
func (c *slurpCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *slurpCmd) SetStdin(r io.Reader) exec.Cmd  { c.in = r; return c }
func (c *slurpCmd) SetStdout(w io.Writer) exec.Cmd { c.out = w; return c }
func (c *slurpCmd) SetStderr(io.Writer) exec.Cmd   { return c }

func TestStreamedProbeGivesUpOnASeamThatDoesNotStream(t *testing.T) {
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, err := streamedProbes(context.Background(), slurpNode{}); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the streamed probe reported readings from a seam that cannot stream")
		}
	case <-time.After(streamTimeout + 5*time.Second):
		t.Fatal("the streamed probe hung on a seam that reads all of stdin first")
	}
	t.Logf("gave up after %s", time.Since(start).Round(time.Millisecond))
}
