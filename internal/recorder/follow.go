package recorder

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/termlab/termlab/internal/evidence"
)

// logFollower streams `crictl logs -f <id>` from the moment a container is
// first observed. The kubelet may remove an exited container (and its log)
// within milliseconds of its exit, before a later `crictl logs` can read the
// SIGTERM line; the followed copy keeps every line the workload wrote.
type logFollower struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	file *os.File
}

func (f *logFollower) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf.Write(p)
	if f.file != nil {
		_, _ = f.file.Write(p)
	}
	return len(p), nil
}

func (f *logFollower) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.buf.Bytes()...)
}

// followLogs starts a follower for container id unless one runs already.
// It ends when the container exits or the recorder stops. Its copy is saved
// as containers/<pod>-<id>.log in the run folder. r.mu must be held.
func (r *Recorder) followLogsLocked(node Node, pod, id string) {
	if r.followers == nil {
		r.followers = map[string]*logFollower{}
	}
	if _, ok := r.followers[id]; ok || r.bg == nil || unreachable(node, pod, id) != nil {
		return
	}
	f := &logFollower{}
	if err := os.MkdirAll(filepath.Join(r.cfg.Dir, "containers"), evidence.PrivateDir); err == nil {
		f.file, _ = createPrivate(filepath.Join(r.cfg.Dir, "containers", pod+"-"+short(id)+".log"))
	}
	r.followers[id] = f
	r.wg.Add(1)
	go func(ctx context.Context) {
		defer r.wg.Done()
		cmd := node.CommandContext(ctx, "crictl", "logs", "-f", id)
		cmd.SetStdout(f)
		cmd.SetStderr(f)
		_ = cmd.Run()
		f.mu.Lock()
		if f.file != nil {
			f.file.Close()
			f.file = nil
		}
		f.mu.Unlock()
	}(r.bg)
}

// FollowLogs streams container id's log into the run folder from now until
// the container exits or the recorder stops (see logFollower).
func (r *Recorder) FollowLogs(node Node, pod, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.followLogsLocked(node, pod, id)
}

// followed returns what the follower of id has read so far.
func (r *Recorder) followedLocked(id string) ([]byte, bool) {
	f, ok := r.followers[id]
	if !ok {
		return nil, false
	}
	b := f.bytes()
	return b, len(b) > 0
}
