package recorder

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/termlab/termlab/internal/evidence"
)

// podStream is what the recorder keeps of the pod events when they stay on
// disk (Config.EventsOnDisk): each pod's latest event, how many there
// were, and the queue of every waiter. Its size grows with the pods, not with
// their events: the events themselves are only in events.jsonl.
type podStream struct {
	index  map[string]int      // pod name → its place in latest
	latest []evidence.PodEvent // each pod's latest event, pods in order of first event
	// versions are each pod's resourceVersions, in the order recorded: a
	// LIST is checked against the record by them (WaitVersions). The API
	// server's are etcd revisions, decimal integers, kept as such (8 bytes
	// where a string takes 24 and an allocation); one that is not (the
	// API says they are opaque) is kept whole in oddVersions.
	versions    map[string][]uint64
	oddVersions map[string][]string
	count       int
	subs        map[*podSub]struct{}
}

// podSub is one waiter's queue of events not yet visited.
type podSub struct{ pending []evidence.PodEvent }

func newPodStream() *podStream {
	return &podStream{index: map[string]int{}, versions: map[string][]uint64{}, oddVersions: map[string][]string{}, subs: map[*podSub]struct{}{}}
}

// add keeps e as its pod's latest and queues it for every waiter; r.mu must be held.
func (s *podStream) add(e evidence.PodEvent) {
	s.count++
	if n, err := strconv.ParseUint(e.ResourceVersion, 10, 64); err == nil {
		s.versions[e.Name] = append(s.versions[e.Name], n)
	} else {
		s.oddVersions[e.Name] = append(s.oddVersions[e.Name], e.ResourceVersion)
	}
	if i, ok := s.index[e.Name]; ok {
		s.latest[i] = e
	} else {
		s.index[e.Name] = len(s.latest)
		s.latest = append(s.latest, e)
	}
	for sub := range s.subs {
		sub.pending = append(sub.pending, e)
	}
}

// waitStream is WaitEvents with the events on disk: it visits each pod's
// latest event recorded before the call, then every event recorded after it.
func (r *Recorder) waitStream(ctx context.Context, what string, visit func(evidence.PodEvent) bool) error {
	r.mu.Lock()
	sub := &podSub{pending: slices.Clone(r.stream.latest)}
	r.stream.subs[sub] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.stream.subs, sub)
		r.mu.Unlock()
	}()
	return r.visitBatches(ctx, what, func() ([]evidence.PodEvent, int) {
		batch := sub.pending
		sub.pending = nil
		return batch, r.stream.count
	}, visit)
}

// WaitVersions blocks until, for each pod of want, a recorded event carries
// the resourceVersion want gives it (events recorded before the call count),
// or ctx ends: the record has caught up with a LIST. It returns how many
// pods are still missing theirs.
func (r *Recorder) WaitVersions(ctx context.Context, what string, want map[string]string) (missing int, err error) {
	left := maps.Clone(want)
	err = r.WaitEvents(ctx, what, func(e evidence.PodEvent) bool {
		if rv, ok := left[e.Name]; ok && (rv == e.ResourceVersion || r.recordedVersion(e.Name, rv)) {
			delete(left, e.Name)
		}
		return len(left) == 0
	})
	return len(left), err
}

// recordedVersion reports, with the events on disk, whether an event of the
// pod recorded so far carried rv: the wait visits only each pod's latest of
// those recorded before it began, and a pod may have changed since a LIST.
// (In memory the wait visits every event: false.)
func (r *Recorder) recordedVersion(pod, rv string) bool {
	if r.stream == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stream.has(pod, rv)
}

// has reports whether an event of the pod carried rv; r.mu must be held.
func (s *podStream) has(pod, rv string) bool {
	if n, err := strconv.ParseUint(rv, 10, 64); err == nil {
		return slices.Contains(s.versions[pod], n)
	}
	return slices.Contains(s.oddVersions[pod], rv)
}

// latestOfLocked is the pod's latest recorded event; r.mu must be held.
func (r *Recorder) latestOfLocked(pod string) (evidence.PodEvent, bool) {
	if r.stream != nil {
		if i, ok := r.stream.index[pod]; ok {
			return r.stream.latest[i], true
		}
		return evidence.PodEvent{}, false
	}
	for i := len(r.rec.PodEvents) - 1; i >= 0; i-- {
		if r.rec.PodEvents[i].Name == pod {
			return r.rec.PodEvents[i], true
		}
	}
	return evidence.PodEvent{}, false
}

// PodEventCount is how many pod events have been recorded.
func (r *Recorder) PodEventCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil {
		return r.stream.count
	}
	return len(r.rec.PodEvents)
}

// waitPodStream is WaitPod with the events on disk: the pod's latest event
// recorded before the call, then every later one of it.
func (r *Recorder) waitPodStream(ctx context.Context, pod, what string, cond func(evidence.PodEvent) bool) (evidence.PodEvent, error) {
	var found evidence.PodEvent
	err := r.waitStream(ctx, what, func(e evidence.PodEvent) bool {
		if e.Name == pod && cond(e) {
			found = e
			return true
		}
		return false
	})
	if err != nil {
		r.mu.Lock()
		last, ok := r.latestOfLocked(pod)
		r.mu.Unlock()
		lastSeen := "no event of the pod"
		if ok {
			lastSeen = evidence.Describe(last)
		}
		return evidence.PodEvent{}, fmt.Errorf("waiting for pod %s to %s: %w (last seen: %s)", pod, what, context.Cause(ctx), lastSeen)
	}
	return found, nil
}

// auditTail keeps the latest audit events in memory when they stay on disk
// (Config.EventsOnDisk): WaitAudit looks for an action just done, never far
// back. Events are numbered from 0 in the order read; the tail holds those
// from first on.
type auditTail struct {
	events []evidence.AuditEvent
	first  int
	count  int
}

// auditTailKeep is how many audit events the tail keeps at least: minutes
// of a busy run's requests on its objects.
const auditTailKeep = 8192

func (t *auditTail) add(events []evidence.AuditEvent) {
	t.events = append(t.events, events...)
	t.count += len(events)
	if over := len(t.events) - auditTailKeep; over > auditTailKeep {
		t.events = append([]evidence.AuditEvent(nil), t.events[over:]...)
		t.first += over
	}
}

// auditSinceLocked are the audit events from number next on (those no longer
// kept are skipped), and the number after the last; r.mu must be held.
func (r *Recorder) auditSinceLocked(next int) ([]evidence.AuditEvent, int) {
	if r.auditTail == nil {
		return r.rec.Audit[min(next, len(r.rec.Audit)):], len(r.rec.Audit)
	}
	t := r.auditTail
	from := max(next, t.first) - t.first
	return t.events[min(from, len(t.events)):], t.count
}
