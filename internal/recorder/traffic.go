package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/workloadlog"
)

// addEndpointSlice records one watch event on an EndpointSlice.
func (r *Recorder) addEndpointSlice(typ string, s *discoveryv1.EndpointSlice, at time.Time) {
	e := evidence.EndpointSliceEvent{
		ObservedAt: at, Type: typ, Name: s.Name, Service: s.Labels[discoveryv1.LabelServiceName],
		ResourceVersion: s.ResourceVersion, Endpoints: []evidence.SliceEndpoint{},
	}
	for _, ep := range s.Endpoints {
		se := evidence.SliceEndpoint{Addresses: ep.Addresses, Ready: ep.Conditions.Ready, Serving: ep.Conditions.Serving, Terminating: ep.Conditions.Terminating}
		if ep.TargetRef != nil {
			se.Pod = ep.TargetRef.Name
		}
		e.Endpoints = append(e.Endpoints, se)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.EndpointSlices = append(r.rec.EndpointSlices, e)
	r.appendLine(evidence.EndpointSlicesFile, e)
	r.broadcast()
}

// WaitEndpointSlice blocks until a recorded EndpointSlice event satisfies
// cond (events recorded before the call count), or ctx ends.
func (r *Recorder) WaitEndpointSlice(ctx context.Context, what string, cond func(evidence.EndpointSliceEvent) bool) (evidence.EndpointSliceEvent, error) {
	return waitRecorded(ctx, r, func(rec *evidence.Record) []evidence.EndpointSliceEvent { return rec.EndpointSlices }, cond,
		func(n int, cause error) error {
			return fmt.Errorf("waiting for an EndpointSlice to %s: %w (%d slice events recorded)", what, cause, n)
		})
}

// ReadProxyRules reads kube-proxy's NAT rules on the node (`iptables-save
// -t nat`, through the node's exec seam) and records, for each Service port
// of the run's namespace, the endpoints new connections are sent to. The raw
// output is saved when it differs from the node's previous read.
func (r *Recorder) ReadProxyRules(ctx context.Context, node Node) (evidence.ProxyRulesRead, error) {
	if n, ok := node.(interface{ NoNodeAccess() error }); ok {
		return evidence.ProxyRulesRead{}, fmt.Errorf("reading kube-proxy's rules on %s: %w", node.String(), n.NoNodeAccess())
	}
	started := now()
	out := run(ctx, node, "iptables-save", "-t", "nat")
	read := evidence.ProxyRulesRead{Node: node.String(), StartedAt: started, FinishedAt: out.at}
	if out.err == nil {
		if err := completeNATTable(out.stdout); err != nil {
			out.err = fmt.Errorf("on node %s: iptables-save -t nat: %w", node.String(), err)
		}
	}
	if out.err != nil {
		read.Error = out.err.Error()
	} else {
		read.Forwards = ParseProxyRules(out.stdout, r.cfg.Namespace)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	read.Step = r.currentStepLocked()
	var werr error
	if out.err == nil && r.changedRulesLocked(node.String(), read.Forwards) {
		read.Path = r.uniquePathLocked(r.stepDirLocked(), "iptables-nat-"+node.String(), ".txt")
		werr = r.writeFileLocked(read.Path, out.stdout)
	}
	r.rec.ProxyRules = append(r.rec.ProxyRules, read)
	r.broadcast()
	if out.err != nil {
		return read, out.err
	}
	return read, werr
}

// completeNATTable checks that an `iptables-save -t nat` output is whole:
// the table's header, then its COMMIT and the "# Completed" trailer at the
// end. A read through pods/exec can lose the end of a command's output and
// still report success (kubernetes/kubernetes#124571); a cut read lacks the
// rules of the Services after the cut, which would read as a Service no
// longer forwarding to its pod.
func completeNATTable(out []byte) error {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	n := len(lines)
	switch {
	case !bytes.Contains(out, []byte("\n*nat\n")) && !bytes.HasPrefix(out, []byte("*nat\n")):
		return fmt.Errorf("incomplete iptables-save output (%d bytes): no *nat table header", len(out))
	case n < 2 || !bytes.Equal(lines[n-2], []byte("COMMIT")) || !bytes.HasPrefix(lines[n-1], []byte("# Completed")):
		return fmt.Errorf("incomplete iptables-save output (%d bytes): it does not end with the table's COMMIT and \"# Completed\" line", len(out))
	}
	return nil
}

// changedRulesLocked reports whether the forwards differ from the node's last read.
func (r *Recorder) changedRulesLocked(node string, forwards map[string][]string) bool {
	for i := len(r.rec.ProxyRules) - 1; i >= 0; i-- {
		p := r.rec.ProxyRules[i]
		if p.Node == node && p.Error == "" {
			return !maps.EqualFunc(p.Forwards, forwards, slices.Equal)
		}
	}
	return true
}

// serviceEndpointRule is a rule of a Service's cluster chain that sends new
// connections to one endpoint, as kube-proxy's iptables mode writes it:
//
//	-A KUBE-SVC-… -m comment --comment "ns/svc:port -> 10.244.1.5:8080" … -j KUBE-SEP-…
var serviceEndpointRule = regexp.MustCompile(`^-A KUBE-SVC-\S+ .*--comment "?([^" ]+) -> ([0-9a-fA-F.:\[\]]+)"? .*-j KUBE-SEP-`)

// ParseProxyRules returns, for each Service port of the namespace, the
// endpoints its KUBE-SVC chain sends new connections to. kube-proxy leaves
// a terminating endpoint out of that chain while the Service has a ready one.
func ParseProxyRules(iptablesSave []byte, namespace string) map[string][]string {
	out := map[string][]string{}
	prefix := namespace + "/"
	for line := range bytes.Lines(iptablesSave) {
		m := serviceEndpointRule.FindSubmatch(bytes.TrimSpace(line))
		if m == nil || !bytes.HasPrefix(m[1], []byte(prefix)) {
			continue
		}
		out[string(m[1])] = append(out[string(m[1])], string(m[2]))
	}
	return out
}

// RecordRequests reads the client container's log (crictl logs, or the
// followed copy when the container is gone) and adds its requests to the
// record (requests.jsonl); the log itself is saved in the current step.
func (r *Recorder) RecordRequests(ctx context.Context, node Node, pod, containerID string) (evidence.RequestsRead, error) {
	if err := unreachable(node, pod, containerID); err != nil {
		return evidence.RequestsRead{}, err
	}
	logs := crictlLogs(ctx, node, containerID)
	r.mu.Lock()
	defer r.mu.Unlock()
	if logs.err != nil {
		if followed, ok := r.followedLocked(containerID); ok {
			logs = nodeOutput{at: logs.at, stdout: followed}
		}
	}
	read := evidence.RequestsRead{Pod: pod, Node: node.String(), ContainerID: containerID, At: logs.at}
	if logs.err != nil {
		read.Error = logs.err.Error()
		r.rec.RequestReads = append(r.rec.RequestReads, read)
		return read, logs.err
	}
	read.Path = r.uniquePathLocked(r.stepDirLocked(), pod+"-crictl-logs", ".txt")
	werr := r.writeFileLocked(read.Path, logs.stdout)
	l, err := workloadlog.Parse(bytes.NewReader(logs.stdout))
	if err != nil {
		read.Error = err.Error()
	}
	if r.files[evidence.RequestsFile] == nil {
		if f, err := createIn(r.cfg.Dir, evidence.RequestsFile); err == nil {
			r.files[evidence.RequestsFile] = f
		} else if werr == nil {
			werr = err
		}
	}
	for _, q := range l.Requests {
		e := evidence.Request{Pod: pod, Request: q}
		r.rec.Requests = append(r.rec.Requests, e)
		r.appendLine(evidence.RequestsFile, e)
	}
	read.Requests = len(l.Requests)
	r.rec.RequestReads = append(r.rec.RequestReads, read)
	r.broadcast()
	return read, werr
}

// createIn creates (truncates) a file of the run folder.
func createIn(dir, name string) (*os.File, error) {
	f, err := createPrivate(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", name, err)
	}
	return f, nil
}

// ContainerStates lists the run's containers on the node with one command
// (`crictl ps -a -o json` for the run's namespace) and returns each one's
// state by ID: a lab waiting for several containers to stop asks this, not
// crictl inspect per container, and observes a container (ObserveContainer)
// once it has stopped. A container the runtime no longer lists is absent.
func (r *Recorder) ContainerStates(ctx context.Context, node Node) (map[string]string, error) {
	if n, ok := node.(interface{ NoNodeAccess() error }); ok {
		return nil, fmt.Errorf("listing the containers on %s: %w", node.String(), n.NoNodeAccess())
	}
	out := run(ctx, node, "crictl", "ps", "-a", "-o", "json", "--label", "io.kubernetes.pod.namespace="+r.cfg.Namespace)
	if out.err != nil {
		return nil, out.err
	}
	var ps struct {
		Containers []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(out.stdout, &ps); err != nil {
		return nil, fmt.Errorf("on node %s: crictl ps: %w", node.String(), err)
	}
	states := make(map[string]string, len(ps.Containers))
	for _, c := range ps.Containers {
		states[c.ID] = c.State
	}
	return states, nil
}

// FollowTaskExits streams containerd's events on the node (`ctr -n k8s.io
// events`, through the node's exec seam) for at most within, or until the
// recorder stops, and records every container's init-process exit
// (TaskExit). The exit lines are saved as containers/task-exits-<node>.log.
// A docker exec whose client is killed leaves its process running in the
// node, so the shell says its pid first and the recorder's stop ends that
// pid on the node; `timeout` bounds it where even that cannot run (termlab
// itself killed).
func (r *Recorder) FollowTaskExits(node Node, within time.Duration) error {
	rel := "containers/task-exits-" + node.String() + ".log"
	return r.followOnNode(node, "following containerd's events", rel, "ctr -n k8s.io events", within, func(line []byte, f io.Writer) {
		e, ok := ParseTaskExit(line)
		if !ok {
			return
		}
		e.Node, e.ObservedAt, e.Path = node.String(), now(), rel
		_, _ = f.Write(append(append([]byte(nil), line...), '\n'))
		r.mu.Lock()
		r.rec.TaskExits = append(r.rec.TaskExits, e)
		r.broadcast()
		r.mu.Unlock()
	})
}

// ParseTaskExit reads one line of `ctr events`:
//
//	2026-12-04 02:29:50.798757751 +0000 UTC k8s.io /tasks/exit {"container_id":"…","id":"…","pid":1,"exit_status":137,"exited_at":{"seconds":…,"nanos":…}}
//
// ok is false for every other event, and for an exec process's exit (its
// id is not the container's).
func ParseTaskExit(line []byte) (evidence.TaskExit, bool) {
	_, payload, found := bytes.Cut(line, []byte(" /tasks/exit "))
	if !found {
		return evidence.TaskExit{}, false
	}
	var ev struct {
		ContainerID string `json:"container_id"`
		ID          string `json:"id"`
		ExitStatus  int32  `json:"exit_status"`
		ExitedAt    struct {
			Seconds int64 `json:"seconds"`
			Nanos   int64 `json:"nanos"`
		} `json:"exited_at"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(payload), &ev); err != nil || ev.ContainerID == "" || ev.ID != ev.ContainerID {
		return evidence.TaskExit{}, false
	}
	return evidence.TaskExit{ContainerID: ev.ContainerID, ExitStatus: ev.ExitStatus, ExitedAt: time.Unix(ev.ExitedAt.Seconds, ev.ExitedAt.Nanos).UTC()}, true
}
