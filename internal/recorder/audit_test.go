package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
)

// hostNode runs a node's commands on this machine: the audit reader's file
// handling is tested on a real file with the same commands it runs on the
// control plane (stat, ls, tail).
type hostNode struct{}

func (hostNode) CommandContext(ctx context.Context, name string, args ...string) kindexec.Cmd {
	return kindexec.CommandContext(ctx, name, args...)
}
func (hostNode) String() string { return "this machine" }

func auditLine(id string) string {
	return fmt.Sprintf(`{"auditID":%q,"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/pods/p","verb":"create","user":{"username":"kubernetes-admin"},"objectRef":{"resource":"pods","namespace":"ns","name":"p"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-03T12:00:00Z","stageTimestamp":"2026-12-03T12:00:00Z"}`, id) + "\n"
}

func appendTo(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		t.Fatal(err)
	}
}

func ids(r *Recorder) string {
	var s []string
	for _, e := range r.rec.Audit {
		s = append(s, e.AuditID)
	}
	return strings.Join(s, ",")
}

// A rotation between two reads loses nothing: the rest of the renamed file
// is read before the new one. Two rotations between reads (the older file
// deleted) lose what it held, and the record says so.
func TestAuditLogRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	logDir := filepath.Join(dir, "audit")
	if err := os.Mkdir(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(logDir, "audit.log")
	appendTo(t, log, auditLine("before-the-run"))
	r := &Recorder{cfg: Config{Dir: dir, Namespace: "ns"}, changed: make(chan struct{}), step: -1}
	if err := r.followLog(ctx, hostNode{}, log, nil); err != nil {
		t.Fatal(err)
	}
	defer r.StopAudit(ctx)

	appendTo(t, log, auditLine("a1"), `{"auditID":"half`)
	if _, err := r.ReadAudit(ctx); err != nil || ids(r) != "a1" {
		t.Fatalf("first read: %q %v", ids(r), err)
	}
	// The half line is finished, more comes, then the log is rotated.
	appendTo(t, log, `-written","stage":"ResponseComplete"}`+"\n", auditLine("a2"))
	if err := os.Rename(log, filepath.Join(logDir, "audit-2026-12-03T12-00-00.000.log")); err != nil {
		t.Fatal(err)
	}
	appendTo(t, log, auditLine("b1"))
	if _, err := r.ReadAudit(ctx); err != nil || ids(r) != "a1,a2,b1" {
		t.Fatalf("after a rotation: %q %v", ids(r), err)
	}
	if len(r.rec.Notes) != 0 {
		t.Errorf("notes after a clean rotation: %+v", r.rec.Notes)
	}

	// Two rotations: b2 is in a file that is gone by the next read.
	appendTo(t, log, auditLine("b2"))
	if err := os.Rename(log, filepath.Join(logDir, "audit-2026-12-03T12-10-00.000.log")); err != nil {
		t.Fatal(err)
	}
	appendTo(t, log, auditLine("c1")) // the new log is made before the server deletes old backups
	if err := os.Remove(filepath.Join(logDir, "audit-2026-12-03T12-10-00.000.log")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAudit(ctx); err != nil || ids(r) != "a1,a2,b1,c1" {
		t.Fatalf("after two rotations: %q %v", ids(r), err)
	}
	if len(r.rec.Notes) != 1 || !strings.Contains(r.rec.Notes[0].Text, "rotated twice") {
		t.Errorf("the loss is not noted: %+v", r.rec.Notes)
	}
}

// slowNode is hostNode with every command started half a second late, as
// on a loaded machine.
type slowNode struct{}

func (slowNode) CommandContext(ctx context.Context, name string, args ...string) kindexec.Cmd {
	return kindexec.CommandContext(ctx, "sh", append([]string{"-c", `sleep 0.5; exec "$@"`, "--", name}, args...)...)
}
func (slowNode) String() string { return "a loaded machine" }

// A wait whose bound runs out while it reads the log ends with the bound's
// cause (what was not seen, and its bound), not the killed read's error.
func TestWaitAuditBoundEndingMidReadNamesTheBound(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	appendTo(t, log, auditLine("before-the-run"))
	r := &Recorder{cfg: Config{Dir: dir, Namespace: "ns"}, changed: make(chan struct{}), step: -1}
	if err := r.followLog(context.Background(), hostNode{}, log, nil); err != nil {
		t.Fatal(err)
	}
	defer r.StopAudit(context.Background())
	r.audit.mu.Lock()
	r.audit.node = slowNode{}
	r.audit.mu.Unlock()
	bound := errors.New("the script's untaint-node: not within 15s of the script's return")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 200*time.Millisecond, bound)
	defer cancel()
	_, err := r.WaitAudit(ctx, "PATCH nodes/n", 50*time.Millisecond, func(evidence.AuditEvent) bool { return false })
	if !errors.Is(err, bound) {
		t.Fatalf("WaitAudit = %v, want the bound's cause", err)
	}
}

// A line longer than one read (the namespace controller's DELETE of a
// collection, logged with every pod it marked) is skipped and named in a
// note; the lines after it are read. Half written, it is read again later.
func TestAuditLineLongerThanARead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	appendTo(t, log, auditLine("before-the-run"))
	r := &Recorder{cfg: Config{Dir: dir, Namespace: "ns"}, changed: make(chan struct{}), step: -1}
	if err := r.followLog(ctx, hostNode{}, log, nil); err != nil {
		t.Fatal(err)
	}
	defer r.StopAudit(ctx)
	huge := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"big-1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/pods","verb":"deletecollection","user":{"username":"system:serviceaccount:kube-system:namespace-controller"},"responseObject":{"items":"` + strings.Repeat("x", 2*auditChunk+100)
	appendTo(t, log, auditLine("a1"), huge)
	if _, err := r.ReadAudit(ctx); err != nil || ids(r) != "a1" || len(r.rec.Notes) != 0 {
		t.Fatalf("with the long line half written: %q %v %+v", ids(r), err, r.rec.Notes)
	}
	appendTo(t, log, `"}}`+"\n", auditLine("a2"), auditLine("a3"))
	if _, err := r.ReadAudit(ctx); err != nil || ids(r) != "a1,a2,a3" {
		t.Fatalf("after the long line: %q %v", ids(r), err)
	}
	if len(r.rec.Notes) != 1 || !strings.Contains(r.rec.Notes[0].Text, "DELETECOLLECTION /api/v1/namespaces/ns/pods by system:serviceaccount:kube-system:namespace-controller (auditID big-1) (8.4 MB") {
		t.Errorf("the skipped line is not noted: %+v", r.rec.Notes)
	}
}
