package recorder

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// clockSamples is how many `date` readings a node's offset is bounded from:
// the tightest decides, so a few absorb one slow exec.
const clockSamples = 5

// ProbeClock bounds the node's clock against the host's and keeps the
// offset in the record. It asks one shell on the node (through the same exec
// seam as crictl) for `date +%s.%N` once per line it is sent, so each
// reading is bracketed by a pipe round trip (about a millisecond), not by a
// whole exec (a tenth of a second and more on a loaded machine); where the
// seam cannot stream, each reading is an exec of its own.
func (r *Recorder) ProbeClock(ctx context.Context, node Node) (evidence.ClockOffset, error) {
	if err := unreachable(node, "", ""); err != nil {
		return evidence.ClockOffset{}, err
	}
	how := "`date +%s.%N` from one shell on the node, a line at a time, between two host readings"
	probes, err := streamedProbes(ctx, node)
	if err != nil {
		how = "`date +%s.%N` on the node, an exec each, between two host readings"
		probes, err = execProbes(ctx, node)
	}
	if err != nil {
		return evidence.ClockOffset{}, err
	}
	o, _ := evidence.OffsetFrom(evidence.ClockNode(node.String()), how, probes)
	r.mu.Lock()
	r.rec.Clocks = append(r.rec.Clocks, o)
	r.mu.Unlock()
	return o, nil
}

// clockProbeTimeout bounds a whole probe: a node that does not answer in
// this time has its offset unknown, not the run stopped.
const clockProbeTimeout = 10 * time.Second

// streamTimeout bounds the streamed probe: a seam that reads all of stdin
// before it runs the command (the node pod's agent over pods/proxy) never
// answers the first line, and the exec-per-reading probe takes over.
const streamTimeout = 3 * time.Second

func streamedProbes(ctx context.Context, node Node) ([]evidence.ClockProbe, error) {
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// The end of ctx unblocks both ends of the conversation, whatever the
	// seam does with them.
	stop := context.AfterFunc(ctx, func() {
		inW.CloseWithError(ctx.Err())
		outR.CloseWithError(ctx.Err())
	})
	defer stop()
	cmd := node.CommandContext(ctx, "sh", "-c", "while read _; do date +%s.%N; done")
	cmd.SetStdin(inR)
	cmd.SetStdout(outW)
	done := make(chan error, 1)
	go func() { err := cmd.Run(); outW.CloseWithError(io.EOF); done <- err }()
	defer func() { inW.Close(); cancel(); <-done }()
	lines := bufio.NewReader(outR)
	var probes []evidence.ClockProbe
	for range clockSamples {
		before := now()
		if _, err := inW.Write([]byte("\n")); err != nil {
			return nil, fmt.Errorf("reading the clock of %s: %w", node, err)
		}
		line, err := lines.ReadString('\n')
		after := now()
		if err != nil {
			return nil, fmt.Errorf("reading the clock of %s: %w", node, err)
		}
		remote, err := parseEpoch(strings.TrimSpace(line))
		if err != nil {
			return nil, fmt.Errorf("reading the clock of %s: %w", node, err)
		}
		probes = append(probes, evidence.ClockProbe{Before: before, After: after, Remote: remote})
	}
	return probes, nil
}

func execProbes(ctx context.Context, node Node) ([]evidence.ClockProbe, error) {
	ctx, cancel := context.WithTimeout(ctx, clockProbeTimeout)
	defer cancel()
	var probes []evidence.ClockProbe
	for range clockSamples {
		before := now()
		out := run(ctx, node, "date", "+%s.%N")
		if out.err != nil {
			return nil, fmt.Errorf("reading the clock of %s: %w", node, out.err)
		}
		remote, err := parseEpoch(strings.TrimSpace(string(out.stdout)))
		if err != nil {
			return nil, fmt.Errorf("reading the clock of %s: %w", node, err)
		}
		probes = append(probes, evidence.ClockProbe{Before: before, After: out.at, Remote: remote})
	}
	return probes, nil
}

// parseEpoch reads date's "<seconds>.<nanoseconds>".
func parseEpoch(s string) (time.Time, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 9 {
		return time.Time{}, fmt.Errorf("date printed %q, not <seconds>.<nanoseconds>", s)
	}
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	nanos, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("date printed %q, not <seconds>.<nanoseconds>", s)
	}
	return time.Unix(secs, nanos).UTC(), nil
}
