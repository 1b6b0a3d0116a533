package diagnose

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestChangesSaysWhatChangedBetweenLooks(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 21, 3, 0, 0, time.UTC)
	held := Look{At: t0, Exists: true, Deleting: true, Finalizers: []string{finalizer}, Verdicts: map[string]string{FindFinalizer(finalizer): "holds the object", FindKubelet: "active"}}
	released := Look{At: t0.Add(5 * time.Second), Exists: true, Deleting: true, Verdicts: map[string]string{FindKubelet: "active"}}
	gone := Look{At: t0.Add(10 * time.Second)}

	got := strings.Join(Changes(held, released), "\n")
	if got != "finalizer "+finalizer+" removed between 21:03:00 and 21:03:05" {
		t.Errorf("finalizer removed: %q", got)
	}
	if got := Changes(released, gone); len(got) != 1 || got[0] != "gone between 21:03:05 and 21:03:10" {
		t.Errorf("gone: %q", got)
	}
	if got := Changes(held, held); len(got) != 0 {
		t.Errorf("nothing changed, yet: %q", got)
	}
	// A finding that changes its verdict is named with both.
	down := held
	down.Verdicts = map[string]string{FindFinalizer(finalizer): "holds the object", FindKubelet: "inactive"}
	down.At = t0.Add(time.Second)
	if got := Changes(held, down); len(got) != 1 || !strings.HasPrefix(got[0], "node.kubelet: active → inactive") {
		t.Errorf("verdict change: %q", got)
	}
}

// Watch ends when the object is gone and reports the changes on the way.
func TestWatchEndsWhenGone(t *testing.T) {
	t0 := time.Now().UTC()
	looks := []Look{
		{At: t0, Exists: true, Deleting: true, Finalizers: []string{finalizer}, Held: []string{"held by " + finalizer}},
		{At: t0.Add(time.Millisecond), Exists: true, Deleting: true},
		{At: t0.Add(2 * time.Millisecond)},
	}
	i := 0
	var said []string
	last, err := Watch(context.Background(), time.Millisecond, func(context.Context) (Look, error) {
		l := looks[min(i, len(looks)-1)]
		i++
		return l, nil
	}, func(s string) { said = append(said, s) })
	if err != nil || last.Exists {
		t.Fatalf("Watch: %v, last %+v", err, last)
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{"finalizer " + finalizer + " removed", "gone between"} {
		if !strings.Contains(all, want) {
			t.Errorf("said %q, lacks %q", all, want)
		}
	}

	// Still there when the time is up: an error that says so.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Watch(ctx, time.Millisecond, func(context.Context) (Look, error) { return looks[0], nil }, func(string) {}); err == nil || !strings.Contains(err.Error(), "still there") {
		t.Errorf("a watch that timed out: %v", err)
	}
}
