package claims

import (
	"fmt"
	"sort"
	"strings"

	"github.com/termlab/termlab/internal/evidence"
)

// Transition is one change of a deletion-relevant field of a pod, in the
// order the watch delivered it. Times, UIDs and resourceVersions are left
// out, so sequences from different runs, nodes or kwok stage sets compare.
type Transition struct {
	// Event numbers the watch events that changed something, from 1; the
	// changes one event brought share it.
	Event int    `json:"event"`
	Field string `json:"field"`
	Value string `json:"value"`
}

func (t Transition) String() string { return t.Field + "=" + t.Value }

// Fields of a normalised pod state, in the order their changes are listed
// within one event.
const (
	FieldDeletionTimestamp = "deletionTimestamp"
	FieldGracePeriod       = "deletionGracePeriodSeconds"
	FieldFinalizers        = "finalizers"
	FieldContainer         = "container/" // + container name
	FieldReady             = "ready"
	FieldPhase             = "phase"
	FieldObject            = "object" // value "DELETED"
)

// normalState is a pod's deletion-relevant state as ordered field values.
func normalState(s evidence.PodState) [][2]string {
	dt := "unset"
	if s.DeletionTimestamp != nil {
		dt = "set"
	}
	fin := append([]string(nil), s.Finalizers...)
	sort.Strings(fin)
	out := [][2]string{
		{FieldDeletionTimestamp, dt},
		{FieldGracePeriod, int64String(s.DeletionGracePeriodSeconds)},
		{FieldFinalizers, "[" + strings.Join(fin, ",") + "]"},
	}
	cs := append([]evidence.ContainerState(nil), s.Containers...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	for _, c := range cs {
		out = append(out, [2]string{FieldContainer + c.Name, containerValue(c)})
	}
	return append(out, [2]string{FieldReady, orUnset(s.Ready)}, [2]string{FieldPhase, orUnset(s.Phase)})
}

func containerValue(c evidence.ContainerState) string {
	switch c.State {
	case "terminated":
		return fmt.Sprintf("terminated(reason=%s,exitCode=%s)", orUnset(c.Reason), exitString(c.ExitCode))
	case "":
		return "unset"
	default:
		// waiting reasons (ContainerCreating, …) depend on timing; they are left out.
		return c.State
	}
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// Transitions normalises a pod's watch events (as recorded, in order) into
// the ordered changes of its deletion-relevant fields: deletionTimestamp set,
// deletionGracePeriodSeconds values, finalizers, container states, Ready,
// phase, and finally object=DELETED. The first event lists every field.
func Transitions(events []evidence.PodEvent) []Transition {
	return transitionsFrom(events, 0, nil)
}

// DeletionTransitions is Transitions from the moment deletion began: the
// state of the last event before the first one with a deletionTimestamp (or
// before DELETED) is the baseline and is not listed; what follows is. This
// leaves out start-up changes whose order depends on timing.
func DeletionTransitions(events []evidence.PodEvent) []Transition {
	start := len(events)
	for i, e := range events {
		if e.DeletionTimestamp != nil || e.Type == "DELETED" {
			start = i
			break
		}
	}
	var base [][2]string
	if start > 0 && start <= len(events) {
		base = normalState(events[start-1].PodState)
	}
	return transitionsFrom(events, start, base)
}

func transitionsFrom(events []evidence.PodEvent, start int, prev [][2]string) []Transition {
	var out []Transition
	n := 0
	for _, e := range events[start:] {
		if e.Type == "DELETED" {
			n++
			out = append(out, Transition{Event: n, Field: FieldObject, Value: "DELETED"})
			break
		}
		cur := normalState(e.PodState)
		before := map[string]string{}
		for _, kv := range prev {
			before[kv[0]] = kv[1]
		}
		var changes []Transition
		for _, kv := range cur {
			if old, ok := before[kv[0]]; !ok || old != kv[1] {
				changes = append(changes, Transition{Field: kv[0], Value: kv[1]})
			}
		}
		prev = cur
		if len(changes) == 0 {
			continue
		}
		n++
		for i := range changes {
			changes[i].Event = n
		}
		out = append(out, changes...)
	}
	return out
}

// FirstDifference compares two transition sequences field by field (not by
// event grouping) and returns the index of the first that differs; ok is
// false when they are the same.
func FirstDifference(a, b []Transition) (index int, ok bool) {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i].String() != b[i].String() {
			return i, true
		}
	}
	return 0, false
}

// Strings renders a sequence as "field=value" strings.
func Strings(ts []Transition) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}
