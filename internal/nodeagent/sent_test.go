package nodeagent_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/mounthold"
	"github.com/termlab/termlab/internal/nodeagent"
	"github.com/termlab/termlab/internal/nodeunit"
	"github.com/termlab/termlab/internal/recorder"
	"github.com/termlab/termlab/internal/workloadlog"
)

// agentNode is a node reached through the agent: it refuses what the agent
// refuses (as internal/nodepod does before sending), answers the rest as a
// node would, and keeps every command it was sent.
type agentNode struct {
	mu    sync.Mutex
	sent  [][]string
	stats int
	dir   string // the mount holder's working directory
	id    string // the container's ID
}

func (*agentNode) String() string { return "w1" }

func (n *agentNode) CommandContext(_ context.Context, name string, args ...string) exec.Cmd {
	argv := append([]string{name}, args...)
	n.mu.Lock()
	n.sent = append(n.sent, argv)
	n.mu.Unlock()
	if err := nodeagent.Allowed(argv); err != nil {
		return &answer{err: err}
	}
	return &answer{out: n.answer(argv)}
}

// answer is what a node says to argv: enough for each caller to go on to
// its next command.
func (n *agentNode) answer(argv []string) string {
	line := strings.Join(argv, " ")
	switch {
	case line == "systemctl is-active kubelet":
		return "inactive\n" // kubelet.Restore starts it
	case line == "systemctl is-active "+mounthold.Unit:
		return "active\n" // mounthold.Restore releases it
	case line == "systemctl is-system-running":
		return "starting\n" // kubelet.Restore waits for the boot
	case argv[0] == "systemctl" && argv[1] == "show":
		return "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=4242\n" +
			"ActiveEnterTimestamp=Fri 2026-12-04 05:36:04.214553 UTC\nInactiveEnterTimestamp=Fri 2026-12-04 05:36:04.214553 UTC\n"
	case argv[0] == "systemctl" && argv[1] == "list-units":
		return kubelet.Unit(lab.NewRunID(time.Now().Add(-time.Hour))) + ".timer loaded active waiting termlab\n"
	case argv[0] == "readlink":
		return n.dir + "\n"
	case line == "cat /proc/1/mountinfo":
		return "812 25 0:98 / " + n.dir + " rw,relatime - tmpfs tmpfs rw\n"
	case line == "cat /kind/version":
		return "v1.33.1\n"
	case argv[0] == "crictl" && argv[1] == "inspect":
		return `{"status":{"id":"` + n.id + `","state":"CONTAINER_RUNNING","startedAt":"2026-12-04T05:36:04Z"}}`
	case argv[0] == "crictl" && argv[1] == "ps":
		return `{"containers":[{"id":"` + n.id + `","state":"CONTAINER_RUNNING"}]}`
	case argv[0] == "crictl" && argv[1] == "logs":
		return workloadlog.HeartbeatLine(1, time.Now()) + "\n"
	case argv[0] == "stat":
		n.mu.Lock()
		defer n.mu.Unlock()
		n.stats++
		if n.stats == 1 {
			return "100 0\n"
		}
		return "200 0\n" // rotated: ReadAudit looks for the renamed file
	case argv[0] == "ls":
		return "100 audit-2026-12-04T05-36-04.214.log\n"
	case argv[0] == "date":
		return "1764817200.123456789\n"
	}
	return ""
}

type answer struct {
	out    string
	err    error
	stdout io.Writer
}

func (a *answer) Run() error {
	if a.err != nil {
		return a.err
	}
	if a.stdout != nil {
		_, _ = io.WriteString(a.stdout, a.out)
	}
	return nil
}
func (a *answer) SetEnv(...string) exec.Cmd      { return a }
func (a *answer) SetStdin(io.Reader) exec.Cmd    { return a }
func (a *answer) SetStdout(w io.Writer) exec.Cmd { a.stdout = w; return a }
func (a *answer) SetStderr(io.Writer) exec.Cmd   { return a }

// TestEverySentCommandIsAllowed calls the code that sends commands through
// a node pod's agent (a run through a kubeconfig with -allownodefaults
// sends every node command there) and checks that each one passes the
// allow-list, and that every rule is used by one of them. The recorder's
// followers (`sh -c … timeout N journalctl|ctr events`, and the streamed
// clock probe) are the exception: a shell is never allowed, and the agent
// answers a command only once it has ended, so they cannot work through
// it; the clock probe then takes one `date` per reading.
func TestEverySentCommandIsAllowed(t *testing.T) {
	ctx := t.Context()
	run := lab.NewRunID(time.Now())
	n := &agentNode{
		dir: mounthold.EmptyDirPath("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "scratch"),
		id:  "5d4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a493827160f5e",
	}

	// The kubelet: stop and start, the dead-man's switch, a later run's repair.
	_ = kubelet.Arm(ctx, n, run, 295*time.Second)
	_ = kubelet.Stop(ctx, n)
	_ = kubelet.Start(ctx, n)
	_ = kubelet.Disarm(ctx, n, run)
	_, _ = kubelet.State(ctx, n)
	_, _, _ = kubelet.UnitOf(ctx, n)
	_, _ = kubelet.ChangedAt(ctx, n, true)
	_, _ = kubelet.ChangedAt(ctx, n, false)
	_, _ = kubelet.Restore(ctx, []kubelet.Node{n})

	// The mount holder, and the lab's looks at its unit.
	_ = mounthold.Hold(ctx, n, run, n.dir, 90*time.Second)
	_, _ = mounthold.Look(ctx, n)
	_, _ = mounthold.Mounts(ctx, n, n.dir)
	_ = mounthold.Release(ctx, n)
	_, _ = mounthold.Restore(ctx, []mounthold.Node{n})
	_, _ = nodeunit.State(ctx, n, mounthold.Unit)
	_, _ = nodeunit.ChangedAt(ctx, n, mounthold.Unit, false)

	// A script's kubectl, taken from the control plane.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, _ = lab.Kubectl(ctx, n)

	// The recorder's node evidence.
	r, err := recorder.Start(ctx, recorder.Config{Client: fake.NewClientset(), Lab: "orphan", RunID: run,
		Namespace: "termlab-statefulset-" + run, Dir: t.TempDir(), NodeAccess: evidence.NodeAccessPod})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = r.ObserveContainer(ctx, n, "heartbeat-0", n.id)
	_, _ = r.WaitContainer(ctx, n, "heartbeat-0", n.id, "run", time.Millisecond, func(evidence.ContainerObservation) bool { return true })
	_, _ = r.WaitLog(ctx, n, "heartbeat-0", n.id, "beat", time.Millisecond, func(evidence.LogSummary) bool { return true })
	r.FollowLogs(n, "heartbeat-1", n.id[:12])
	_, _ = r.ContainerStates(ctx, n)
	_, _ = r.RecordRequests(ctx, n, "heartbeat-0", n.id)
	_, _ = r.ReadProxyRules(ctx, n)
	_, _ = r.ProbeClock(ctx, n)
	if err := r.StartAudit(ctx, n, []string{"w1"}); err != nil {
		t.Fatal(err)
	}
	_, _ = r.ReadAudit(ctx)
	_ = r.StopAudit(ctx)
	_ = r.FollowTaskExits(n, time.Minute)
	_ = r.FollowJournal(n, "kubelet", "uid", time.Minute)
	_ = r.Stop()

	if filepath.Dir(evidence.AuditLogPath) != nodeagent.AuditLogDir {
		t.Errorf("the audit log %s is not in the directory the agent reads, %s", evidence.AuditLogPath, nodeagent.AuditLogDir)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	used := make([]bool, nodeagent.RuleCount())
	var shells int
	for _, argv := range n.sent {
		i, err := nodeagent.RuleOf(argv)
		if argv[0] == "sh" {
			shells++
			if err == nil {
				t.Errorf("a shell passed the allow-list: %q", argv)
			}
			continue
		}
		if err != nil {
			t.Errorf("termlab sends %q, which the agent refuses: %v", argv, err)
			continue
		}
		used[i] = true
	}
	if shells != 3 {
		t.Errorf("%d shells sent, want 3 (two followers and the streamed clock probe): %q", shells, n.sent)
	}
	for i, u := range used {
		if !u {
			t.Errorf("no command termlab sends uses rule %s: drop it", nodeagent.RuleName(i))
		}
	}
	if t.Failed() {
		var lines []string
		for _, argv := range n.sent {
			lines = append(lines, fmt.Sprintf("%q", argv))
		}
		t.Logf("sent:\n%s", strings.Join(slices.Compact(lines), "\n"))
	}
}
