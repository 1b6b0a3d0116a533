package scale

import (
	"fmt"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// Replays are kwok's stages played on pod states it had already moved past.
// kwok queues a stage with the pod as it saw it; when that state reaches it
// again late (seen after the API server ended its pods watch for falling
// behind: runs 20261205-210250-1fce and 20261206-000716-530a), it plays the
// stage again. A pod-ready played again restarts a running container's
// startedAt, which a kubelet changes only when it restarts the container;
// a pod-create played again gives a pod a second IP, which the API server
// refuses (422); a pod-delete played again finds the pod gone (404).
// lab:scale's claims rest on none of this (they are about deletion), so it
// is a figure, shown on every run, not a claim.
type Replays struct {
	// Pods: pods whose running container's startedAt changed while it ran;
	// First and Pod the first such event.
	Pods  int       `json:"pods"`
	First time.Time `json:"first,omitzero"`
	Pod   string    `json:"pod,omitempty"`
	// Refused: kwok's writes on the run's pods the API server refused
	// (audit log); DeletesOfGone of them DELETEs answered 404, the pod
	// already gone: a pod-delete played again. RefusedKnown: the run read
	// an audit log.
	Refused       int  `json:"refused"`
	DeletesOfGone int  `json:"deletes_of_gone"`
	RefusedKnown  bool `json:"refused_known"`
}

// restarted: e shows the pod's container running since another time than
// the pod's earlier running events did (since, UnixNano; 0: none yet). It
// returns the container's start to remember.
func restarted(e evidence.PodEvent, since int64) (int64, bool) {
	c, ok := e.Container("")
	if !ok || e.Type == "DELETED" || c.State != "running" || c.StartedAt == nil {
		return since, false
	}
	at := c.StartedAt.UnixNano()
	return at, since != 0 && at != since
}

func (r *Replays) add(e evidence.PodEvent) {
	if r.Pods == 0 {
		r.First, r.Pod = e.ObservedAt, e.Name
	}
	r.Pods++
}

// addRefused counts e if it is a write by kwok, on a pod of the run
// (isPodWrite), that the API server refused.
func (r *Replays) addRefused(e evidence.AuditEvent) {
	if !isKwokAgent(e.UserAgent) || e.Code < 400 {
		return
	}
	r.Refused++
	if e.Verb == "delete" && e.Code == 404 {
		r.DeletesOfGone++
	}
}

// String says it for the figures table.
func (r Replays) String() string {
	s := "no running container's startedAt changed"
	if r.Pods > 0 {
		s = fmt.Sprintf("%d pods' running container got a new startedAt with no restart (the first %s at %s): kwok played pod-ready again on a state it had moved past", r.Pods, r.Pod, r.First.UTC().Format("15:04:05.000"))
	}
	switch {
	case !r.RefusedKnown:
		return s + "; kwok's refused writes not known (no audit log)"
	case r.Refused > 0:
		return s + fmt.Sprintf("; the API server refused %d of kwok's writes on the run's pods: %d DELETEs of a pod already gone (404: pod-delete played again), %d others (a pod-create played again gives a pod a second IP: 422)", r.Refused, r.DeletesOfGone, r.Refused-r.DeletesOfGone)
	}
	return s + "; the API server refused none of kwok's writes on the run's pods"
}
