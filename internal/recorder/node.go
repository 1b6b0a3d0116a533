package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/redact"
)

// Node is where node evidence comes from: kind's nodes.Node satisfies it.
// Commands run through its CommandContext, the one exec seam on a node.
type Node interface {
	CommandContext(ctx context.Context, name string, args ...string) exec.Cmd
	String() string
}

// nodeOutput is one command's result on a node.
type nodeOutput struct {
	at     time.Time
	stdout []byte
	stderr []byte
	err    error
}

func run(ctx context.Context, node Node, name string, args ...string) nodeOutput {
	var stdout, stderr bytes.Buffer
	cmd := node.CommandContext(ctx, name, args...)
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	err := cmd.Run()
	out := nodeOutput{at: now(), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	if err != nil {
		out.err = fmt.Errorf("on node %s: %s: %w: %s", node.String(), exec.PrettyCommand(name, args...), err, strings.TrimSpace(stderr.String()))
	}
	return out
}

// crictlNotFound is how crictl passes on the runtime's gRPC NotFound status:
// `crictl inspect <unknown id>` fails with "rpc error: code = NotFound desc = …"
// on stderr.
const crictlNotFound = "code = NotFound"

// notFound reports whether crictl itself answered that the container does not
// exist. Any other failure — crictl missing on the node ("executable file not
// found"), the node container gone, docker exec failing — says nothing about
// the container and is an error of the observation, never a state.
func notFound(o nodeOutput) bool {
	return o.err != nil && bytes.Contains(o.stderr, []byte(crictlNotFound))
}

// ObserveContainer records what crictl on the node says about the container
// now: `crictl inspect <id>`, `crictl ps -a -o json` for the run's namespace
// and `crictl logs <id>`, each saved in the current step's folder (inspect
// and ps with the fields internal/redact keeps, the logs raw).
func (r *Recorder) ObserveContainer(ctx context.Context, node Node, pod, containerID string) (evidence.ContainerObservation, error) {
	if err := unreachable(node, pod, containerID); err != nil {
		return evidence.ContainerObservation{}, err
	}
	return r.observe(ctx, node, pod, containerID, nil, nil, 0)
}

// unreachable is the error of observing a node the run cannot run commands
// on (cluster.NoAccess), nil for every other node; nothing is run.
func unreachable(node Node, pod, containerID string) error {
	if n, ok := node.(interface{ NoNodeAccess() error }); ok {
		return fmt.Errorf("observing container %s of pod %s on %s: %w", short(containerID), pod, node.String(), n.NoNodeAccess())
	}
	return nil
}

// WaitContainer polls `crictl inspect <id>` every interval until cond holds
// for the parsed state (polling only to reach a state; the history is in the
// watch), then records that observation with ps and logs. On ctx's end it
// records the last probe and returns an error that says what was last seen.
func (r *Recorder) WaitContainer(ctx context.Context, node Node, pod, containerID, what string, interval time.Duration, cond func(evidence.ContainerObservation) bool) (evidence.ContainerObservation, error) {
	if err := unreachable(node, pod, containerID); err != nil {
		return evidence.ContainerObservation{}, err
	}
	var last nodeOutput
	probes := 0
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		probes++
		last = run(ctx, node, "crictl", "inspect", containerID)
		o := fromInspect(last, containerID)
		return cond(o), nil
	})
	obs, oerr := r.observe(context.WithoutCancel(ctx), node, pod, containerID, &last, nil, probes)
	if err != nil {
		return obs, fmt.Errorf("waiting for container %s of pod %s on node %s to %s: %w (last seen: %s)", short(containerID), pod, node.String(), what, err, describeObservation(obs))
	}
	return obs, oerr
}

// WaitLog polls `crictl logs <id>` every interval until cond holds for the
// parsed workload log, then records that observation with inspect and ps.
func (r *Recorder) WaitLog(ctx context.Context, node Node, pod, containerID, what string, interval time.Duration, cond func(evidence.LogSummary) bool) (evidence.ContainerObservation, error) {
	if err := unreachable(node, pod, containerID); err != nil {
		return evidence.ContainerObservation{}, err
	}
	var last nodeOutput
	probes := 0
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		probes++
		last = crictlLogs(ctx, node, containerID)
		s := evidence.SummariseLog(last.stdout)
		return last.err == nil && s != nil && cond(*s), nil
	})
	obs, oerr := r.observe(context.WithoutCancel(ctx), node, pod, containerID, nil, &last, probes)
	if err != nil {
		return obs, fmt.Errorf("waiting for the log of container %s of pod %s on node %s to %s: %w (last seen: %s)", short(containerID), pod, node.String(), what, err, describeObservation(obs))
	}
	return obs, oerr
}

func crictlLogs(ctx context.Context, node Node, id string) nodeOutput {
	// crictl logs copies the container's stdout and stderr to its own; keep both, in order.
	var both bytes.Buffer
	cmd := node.CommandContext(ctx, "crictl", "logs", id)
	cmd.SetStdout(&both)
	cmd.SetStderr(&both)
	err := cmd.Run()
	out := nodeOutput{at: now(), stdout: both.Bytes()}
	if err != nil {
		out.err = fmt.Errorf("on node %s: crictl logs %s: %w: %s", node.String(), id, err, strings.TrimSpace(both.String()))
		out.stderr = both.Bytes()
	}
	return out
}

func fromInspect(o nodeOutput, id string) evidence.ContainerObservation {
	obs := evidence.ContainerObservation{ContainerID: id, ObservedAt: o.at}
	switch {
	case notFound(o):
		obs.State = evidence.ContainerNotFound
	case o.err != nil:
		obs.Error = o.err.Error()
	default:
		in, err := evidence.ParseInspect(o.stdout)
		if err != nil {
			obs.Error = err.Error()
			break
		}
		// The ID is the one crictl reports, so a mismatch with the pod's status shows.
		obs.ContainerID = in.ID
		obs.State, obs.Reason, obs.StartedAt, obs.FinishedAt = in.State, in.Reason, in.StartedAt, in.FinishedAt
		if in.State == evidence.ContainerExited {
			code := in.ExitCode
			obs.ExitCode = &code
		}
	}
	return obs
}

// observe runs what was not given (inspect, logs) plus ps, saves them
// (crictl's answers redacted), and records the observation.
func (r *Recorder) observe(ctx context.Context, node Node, pod, id string, inspect, logs *nodeOutput, probes int) (evidence.ContainerObservation, error) {
	if inspect == nil || inspect.at.IsZero() {
		o := run(ctx, node, "crictl", "inspect", id)
		inspect = &o
	}
	ps := run(ctx, node, "crictl", "ps", "-a", "-o", "json", "--label", "io.kubernetes.pod.namespace="+r.cfg.Namespace)
	if logs == nil || logs.at.IsZero() {
		o := crictlLogs(ctx, node, id)
		logs = &o
	}
	obs := fromInspect(*inspect, id)
	obs.Pod, obs.Node, obs.Probes = pod, node.String(), probes

	r.mu.Lock()
	defer r.mu.Unlock()
	if obs.State != evidence.ContainerNotFound && obs.Error == "" {
		r.followLogsLocked(node, pod, id)
	}
	// The container may be gone by the time crictl logs runs: then the
	// followed copy is the log (the failed read is kept beside it).
	var failedLogs *nodeOutput
	if logs.err != nil {
		if followed, ok := r.followedLocked(id); ok {
			failedLogs = logs
			logs = &nodeOutput{at: logs.at, stdout: followed}
		}
	}
	if logs.err == nil || len(logs.stdout) > 0 {
		obs.Log = evidence.SummariseLog(logs.stdout)
	}
	obs.Step = r.currentStepLocked()
	dir := r.stepDirLocked()
	var werr error
	save := func(base string, o nodeOutput) string {
		content, ext := o.stdout, ".json"
		if strings.HasPrefix(base, "crictl-logs") {
			ext = ".txt"
		}
		if o.err != nil {
			content, ext = []byte(o.err.Error()+"\n"), ".error.txt"
		}
		p := r.uniquePathLocked(dir, pod+"-"+base, ext)
		if err := r.writeFileLocked(p, content); err != nil && werr == nil {
			werr = err
		}
		return p
	}
	obs.InspectPath = save("crictl-inspect", redacted(*inspect, redact.Inspect))
	obs.PsPath = save("crictl-ps", redacted(ps, redact.Ps))
	if failedLogs != nil {
		save("crictl-logs", *failedLogs)
		obs.LogsPath = save("crictl-logs-followed", *logs)
	} else {
		obs.LogsPath = save("crictl-logs", *logs)
	}
	r.rec.Containers = append(r.rec.Containers, obs)
	r.broadcast()
	if werr != nil {
		return obs, werr
	}
	if obs.Error != "" {
		return obs, errors.New(obs.Error)
	}
	return obs, nil
}

// redacted is o as it may be saved: crictl's answer with only the fields
// internal/redact keeps (never the container's environment, mounts or
// runtime spec), or, when it cannot be read, why it was not kept.
func redacted(o nodeOutput, keep func([]byte) ([]byte, error)) nodeOutput {
	if o.err != nil {
		return o
	}
	b, err := keep(o.stdout)
	if err != nil {
		o.err = err
		return o
	}
	o.stdout = b
	return o
}

func describeObservation(o evidence.ContainerObservation) string {
	s := o.State
	if s == "" {
		s = "unknown (" + o.Error + ")"
	}
	if o.ExitCode != nil {
		s += fmt.Sprintf(" exit %d", *o.ExitCode)
	}
	if o.Log != nil {
		s += fmt.Sprintf(", last heartbeat seq=%d", o.Log.LastSeq)
	}
	return s + " at " + o.ObservedAt.Format(time.RFC3339Nano)
}

func short(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}
