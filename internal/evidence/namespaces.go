package evidence

import (
	"strings"
	"time"
)

// Evidence of a lab's own namespaces (lab:namespace): their watch events,
// with the deletion conditions the namespace controller writes.
const (
	NamespacesFile = "namespaces.jsonl" // watch events on the run's namespaces
	// WatchNamespaces names that watch in WatchGap.Source.
	WatchNamespaces = "namespaces"
)

// NamespaceEvent is one watch event on a namespace labelled with the run's
// id: its phase, its deletion and finalizers, and the namespace
// controller's conditions as they stood.
type NamespaceEvent struct {
	ObservedAt        time.Time            `json:"observed_at"`
	Type              string               `json:"type"` // LISTED, ADDED, MODIFIED, DELETED
	Name              string               `json:"name"`
	ResourceVersion   string               `json:"resourceVersion"`
	Phase             string               `json:"phase,omitempty"`
	DeletionTimestamp *time.Time           `json:"deletionTimestamp,omitempty"`
	Finalizers        []string             `json:"finalizers,omitempty"` // spec.finalizers (kubernetes)
	Conditions        []NamespaceCondition `json:"conditions,omitempty"`
}

// NamespaceCondition is one of the namespace controller's conditions
// (NamespaceDeletionDiscoveryFailure, NamespaceContentRemaining, …).
type NamespaceCondition struct {
	Type               string     `json:"type"`
	Status             string     `json:"status"`
	Reason             string     `json:"reason,omitempty"`
	Message            string     `json:"message,omitempty"`
	LastTransitionTime *time.Time `json:"lastTransitionTime,omitempty"`
}

// Condition returns the event's condition of the type.
func (e NamespaceEvent) Condition(typ string) (NamespaceCondition, bool) {
	for _, c := range e.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return NamespaceCondition{}, false
}

// True reports whether the condition of the type is True and its message
// holds every one of the words.
func (e NamespaceEvent) True(typ string, words ...string) bool {
	c, ok := e.Condition(typ)
	if !ok || c.Status != "True" {
		return false
	}
	for _, w := range words {
		if !strings.Contains(c.Message, w) {
			return false
		}
	}
	return true
}

// NamespaceEventsFor are the recorded events of the named namespace, in order.
func (r *Record) NamespaceEventsFor(name string) []NamespaceEvent {
	return where(r.NamespaceEvents, func(e NamespaceEvent) bool { return e.Name == name })
}
