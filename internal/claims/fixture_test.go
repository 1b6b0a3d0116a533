package claims

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// These fixtures are recorded sequences written out by hand in the shape the
// recorder writes them (the lab's real runs give the same shapes).

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time  { return t0.Add(time.Duration(sec * float64(time.Second))) }
func tp(sec float64) *time.Time { t := at(sec); return &t }
func i64(v int64) *int64        { return &v }
func i32(v int32) *int32        { return &v }

const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// podSeq builds a pod's event sequence by applying changes to a running state.
type podSeq struct {
	rec   *evidence.Record
	state evidence.PodState
	rv    int
}

func newRecord() *evidence.Record {
	return &evidence.Record{Lab: "test", RunID: "r1", Namespace: "ns", StartedAt: at(0), EndedAt: at(100)}
}

func (p *podSeq) event(sec float64, typ string, change func(*evidence.PodState)) *podSeq {
	if change != nil {
		change(&p.state)
	}
	p.rv++
	s := p.state
	s.ResourceVersion = strconv.Itoa(p.rv)
	s.Finalizers = append([]string(nil), p.state.Finalizers...)
	s.Containers = append([]evidence.ContainerState(nil), p.state.Containers...)
	p.rec.PodEvents = append(p.rec.PodEvents, evidence.PodEvent{ObservedAt: at(sec), Type: typ, PodState: s})
	return p
}

func running(s *evidence.PodState) {
	s.Phase, s.Ready = "Running", "True"
	s.Containers = []evidence.ContainerState{{Name: "app", ContainerID: cid, State: "running", StartedAt: tp(1)}}
}

func deleting(grace int64) func(*evidence.PodState) {
	return func(s *evidence.PodState) {
		if s.DeletionTimestamp == nil {
			s.DeletionTimestamp = tp(10 + float64(grace))
		}
		s.DeletionGracePeriodSeconds = i64(grace)
	}
}

func terminated(code int32, reason string) func(*evidence.PodState) {
	return func(s *evidence.PodState) {
		s.Ready = "False"
		if code == 0 {
			s.Phase = "Succeeded"
		} else {
			s.Phase = "Failed"
		}
		s.Containers = []evidence.ContainerState{{Name: "app", ContainerID: cid, State: "terminated", Reason: reason, ExitCode: i32(code)}}
	}
}

func noFinalizers(s *evidence.PodState) { s.Finalizers = nil }

func act(rec *evidence.Record, kind evidence.ActionKind, target string, sec float64) {
	rec.Actions = append(rec.Actions, evidence.Action{Kind: kind, Target: target, Request: json.RawMessage(`{}`), StartedAt: at(sec), FinishedAt: at(sec + 0.01)})
}

func snapshot(rec *evidence.Record, pod string, sec float64, state *evidence.PodState) {
	s := evidence.Snapshot{Pod: pod, At: at(sec), Found: state != nil, Path: "steps/x/" + pod + ".yaml"}
	if state != nil {
		c := *state
		s.State = &c
	}
	rec.Snapshots = append(rec.Snapshots, s)
}

func observe(rec *evidence.Record, pod string, sec float64, state string, exit *int32, finished *time.Time, log *evidence.LogSummary) {
	rec.Containers = append(rec.Containers, evidence.ContainerObservation{
		Pod: pod, Node: "worker", ContainerID: cid, ObservedAt: at(sec), State: state, ExitCode: exit,
		FinishedAt: finished, Log: log, InspectPath: "steps/x/" + pod + "-crictl-inspect.json", LogsPath: "steps/x/" + pod + "-crictl-logs.txt",
	})
}

func beats(seq int, lastSec float64, signal string, exitLogged bool) *evidence.LogSummary {
	return &evidence.LogSummary{Started: true, Heartbeats: seq, LastSeq: seq, LastBeatAt: tp(lastSec), Signal: signal, ExitLogged: exitLogged}
}

// finalizerOnKubelet is lab:finalizer on a real worker, as a kubelet does it:
// delete at 10 s → deletionTimestamp, grace 30; SIGTERM, exit 0 at 11 s →
// Succeeded; the kubelet's own grace-0 delete → grace 0; force delete at 20 s
// changes nothing; finalizer removed at 30 s → DELETED at 30.2 s.
func finalizerOnKubelet() *evidence.Record {
	rec := newRecord()
	p := &podSeq{rec: rec, state: evidence.PodState{Name: "held", Finalizers: []string{"lab.example.com/cleanup"}}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(1.2, "MODIFIED", running)
	act(rec, "delete", "held", 10)
	p.event(10.05, "MODIFIED", deleting(30))
	p.event(11.3, "MODIFIED", terminated(0, "Completed"))
	p.event(11.4, "MODIFIED", deleting(0))
	observe(rec, "held", 11.5, evidence.ContainerExited, i32(0), tp(11.1), &evidence.LogSummary{LastSeq: 10, Signal: "SIGTERM", ExitLogged: true})
	act(rec, "force-delete", "held", 20)
	snapshot(rec, "held", 25.1, &p.state)
	act(rec, "remove-finalizers", "held", 30)
	p.event(30.1, "MODIFIED", noFinalizers)
	p.event(30.2, "DELETED", nil)
	return rec
}

// finalizerOnOldKwok is the reported kwok ≤ v0.7 bug: the fast pod-delete
// stage empties the finalizers and deletes at once.
func finalizerOnOldKwok() *evidence.Record {
	rec := newRecord()
	p := &podSeq{rec: rec, state: evidence.PodState{Name: "held", Finalizers: []string{"lab.example.com/cleanup"}}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(0.3, "MODIFIED", running)
	act(rec, "delete", "held", 10)
	p.event(10.05, "MODIFIED", deleting(30))
	p.event(10.1, "MODIFIED", noFinalizers)
	p.event(10.15, "MODIFIED", deleting(0))
	p.event(10.2, "DELETED", nil)
	act(rec, "force-delete", "held", 20)
	snapshot(rec, "held", 25.1, nil)
	return rec
}

// orphan is lab:orphan: kubelet stopped at 5 s, force delete at 10 s, object
// DELETED at 10.05 s, container running (heartbeats advancing) until the
// kubelet starts at 70 s, then exited 137 at 73 s.
func orphan() *evidence.Record {
	rec := newRecord()
	p := &podSeq{rec: rec, state: evidence.PodState{Name: "orphan-process"}}
	p.event(0.1, "ADDED", func(s *evidence.PodState) { s.Phase = "Pending" })
	p.event(1.2, "MODIFIED", running)
	rec.NodeEvents = append(rec.NodeEvents, evidence.NodeEvent{ObservedAt: at(0), Type: "LISTED", Name: "worker2", Ready: "True"})
	act(rec, "stop-kubelet", "worker2", 5)
	act(rec, "force-delete", "orphan-process", 10)
	p.event(10.05, "DELETED", nil)
	snapshot(rec, "orphan-process", 10.1, nil)
	observe(rec, "orphan-process", 10.2, evidence.ContainerRunning, nil, nil, beats(9, 10.0, "", false))
	observe(rec, "orphan-process", 12.3, evidence.ContainerRunning, nil, nil, beats(11, 12.0, "", false))
	rec.NodeEvents = append(rec.NodeEvents, evidence.NodeEvent{ObservedAt: at(55), Type: "MODIFIED", Name: "worker2", Ready: "Unknown", Reason: "NodeStatusUnknown"})
	observe(rec, "orphan-process", 55.2, evidence.ContainerRunning, nil, nil, beats(54, 55.0, "", false))
	act(rec, "start-kubelet", "worker2", 70)
	observe(rec, "orphan-process", 73.4, evidence.ContainerExited, i32(137), tp(73.06), beats(72, 73.0, "", false))
	return rec
}
