package recorder

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// followOnNode runs command on the node for at most within (or until the
// recorder stops) and hands each line of its output to onLine with the
// run-folder file rel to save what it keeps. A `docker exec` cut on the
// host leaves its process running on the node, so the shell says its pid
// first and the recorder's stop ends that pid on the node; `timeout` bounds
// it where even that cannot run (termlab itself killed).
func (r *Recorder) followOnNode(node Node, what, rel, command string, within time.Duration, onLine func(line []byte, f io.Writer)) error {
	if n, ok := node.(interface{ NoNodeAccess() error }); ok {
		return fmt.Errorf("%s on %s: %w", what, node.String(), n.NoNodeAccess())
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.cfg.Dir, filepath.FromSlash(rel))), evidence.PrivateDir); err != nil {
		return err
	}
	f, err := createPrivate(filepath.Join(r.cfg.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	ctx := r.bg
	pids := make(chan string, 1)
	r.wg.Add(3)
	go func() {
		defer r.wg.Done()
		script := "echo " + nodePIDPrefix + "$$; exec timeout " + strconv.Itoa(int(within/time.Second)+1) + " " + command
		cmd := node.CommandContext(ctx, "sh", "-c", script)
		cmd.SetStdout(pw)
		err := cmd.Run()
		pw.CloseWithError(err)
	}()
	go func() {
		defer r.wg.Done()
		<-ctx.Done()
		select {
		case pid := <-pids:
			endNodeProcess(node, pid)
		default: // the shell never said its pid: `timeout` ends it
		}
	}()
	go func() {
		defer r.wg.Done()
		defer f.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		said := false
		for sc.Scan() {
			if !said {
				if pid, ok := strings.CutPrefix(sc.Text(), nodePIDPrefix); ok {
					said = true
					pids <- pid
					continue
				}
			}
			onLine(sc.Bytes(), f)
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return nil
}

// nodePIDPrefix marks the line a follower's shell says its pid on.
const nodePIDPrefix = "termlab-pid "

// nodeKillTimeout bounds ending a follower on the node at the recorder's
// stop: one exec.
const nodeKillTimeout = 10 * time.Second

// endNodeProcess ends, by pid, a process the recorder started on the node.
// A pid that is no longer there (it ended by itself) is no error worth
// reporting: the stop is best effort, and `timeout` is the bound.
func endNodeProcess(node Node, pid string) {
	if _, err := strconv.Atoi(pid); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeKillTimeout)
	defer cancel()
	_ = node.CommandContext(ctx, "kill", pid).Run()
}
