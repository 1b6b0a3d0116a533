package diagnose

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Look is one look at the diagnosed object: what --watch compares from one
// look to the next.
type Look struct {
	At     time.Time
	Exists bool
	// Deleting: a deletion was requested (deletionTimestamp set).
	Deleting   bool
	Finalizers []string
	// Verdicts are the findings' verdicts by finding id.
	Verdicts map[string]string
	// Held are the texts of the blocking findings: what still holds it.
	Held   []string
	Answer string
}

// PodLook collects and decides the pod once (Collect, Decide).
func PodLook(ctx context.Context, src Source, namespace, name string) (Look, error) {
	c, _, err := Collect(ctx, src, namespace, name)
	if err != nil {
		return Look{}, err
	}
	l := lookOf(Decide(c))
	l.At = c.At
	if c.Pod != nil {
		l.Exists, l.Deleting, l.Finalizers = true, c.Pod.DeletionTimestamp != nil, c.Pod.Finalizers
	}
	return l, nil
}

// NamespaceLook collects and decides the namespace once.
func NamespaceLook(ctx context.Context, src Source, name string) (Look, error) {
	c, _, err := CollectNamespace(ctx, src, name)
	if err != nil {
		return Look{}, err
	}
	l := lookOf(DecideNamespace(c).asReport())
	l.At = c.At
	if ns := c.Namespace; ns != nil {
		l.Exists, l.Deleting, l.Finalizers = true, ns.DeletionTimestamp != nil, append(specFinalizers(ns), ns.Finalizers...)
	}
	return l, nil
}

func lookOf(r Report) Look {
	l := Look{Verdicts: map[string]string{}, Answer: r.Answer}
	for _, f := range r.Findings {
		l.Verdicts[f.ID] = f.Verdict
		if f.Level == Blocking {
			l.Held = append(l.Held, f.Text)
		}
	}
	return l
}

// Changes says what changed from prev to next, in the order a person acts
// and the cluster answers: deletion, finalizers, findings, then gone. The
// change happened between the two looks; each line says both times.
func Changes(prev, next Look) []string {
	when := fmt.Sprintf("between %s and %s", clock(prev.At), clock(next.At))
	var out []string
	if !prev.Deleting && next.Deleting {
		out = append(out, "deletion requested "+when)
	}
	for _, f := range prev.Finalizers {
		if !slices.Contains(next.Finalizers, f) && next.Exists {
			out = append(out, "finalizer "+f+" removed "+when)
		}
	}
	for _, f := range next.Finalizers {
		if !slices.Contains(prev.Finalizers, f) {
			out = append(out, "finalizer "+f+" added "+when)
		}
	}
	if next.Exists {
		ids := make([]string, 0, len(next.Verdicts))
		for id := range next.Verdicts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if was, ok := prev.Verdicts[id]; ok && was != next.Verdicts[id] {
				out = append(out, fmt.Sprintf("%s: %s → %s %s", id, was, next.Verdicts[id], when))
			}
		}
	}
	if prev.Exists && !next.Exists {
		out = append(out, "gone "+when)
	}
	return out
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// Watch looks every `every` (and says what changed, or every stillEvery what
// still holds it) until the object is gone or ctx ends. It returns the last
// look; the error is ctx's when the object was still there.
func Watch(ctx context.Context, every time.Duration, look func(context.Context) (Look, error), say func(string)) (Look, error) {
	prev, err := look(ctx)
	if err != nil {
		return prev, err
	}
	if !prev.Exists {
		say(fmt.Sprintf("%s: gone (it did not exist at the first look)", clock(prev.At)))
		return prev, nil
	}
	said := prev.At
	for {
		select {
		case <-ctx.Done():
			return prev, fmt.Errorf("still there at %s after watching until %s: %w", clock(prev.At), clock(time.Now()), context.Cause(ctx))
		case <-time.After(every):
		}
		next, err := look(ctx)
		if err != nil {
			if ctx.Err() != nil {
				continue // the deadline ends the loop above, with the last look kept
			}
			say(fmt.Sprintf("%s: looking again failed: %v", clock(time.Now()), err))
			continue
		}
		changes := Changes(prev, next)
		for _, c := range changes {
			say(c)
		}
		if !next.Exists {
			return next, nil
		}
		if len(changes) > 0 || next.At.Sub(said) >= stillEvery {
			if len(changes) == 0 && len(next.Held) > 0 {
				say(fmt.Sprintf("%s: still held: %s", clock(next.At), strings.Join(next.Held, " | ")))
			}
			said = next.At
		}
		prev = next
	}
}

// stillEvery is how often Watch repeats what still holds the object while nothing changes.
const stillEvery = 30 * time.Second
