package scale

import (
	"errors"
	"testing"
	"time"
)

// ready is an outcome already sent: the goroutine that made it has ended.
func ready[T any](v T, err error) <-chan outcome[T] {
	ch := make(chan outcome[T], 1)
	ch <- outcome[T]{v, err}
	return ch
}

// TestSettleKeepsTheNamespaceObservationWhenEverythingEndedFirst is CI's
// failure: the namespace was gone (its watch had sent the DELETED) before
// the release step read its waits. The old code sent the observation on one
// channel and the watcher's nil error on another and took whichever one
// select picked, so with both ready it lost the observation on about half of
// the reads; across 200 reads it loses it with probability 1 − 2⁻²⁰⁰.
func TestSettleKeepsTheNamespaceObservationWhenEverythingEndedFirst(t *testing.T) {
	want := NamespaceGone{Namespace: "termlab-scale-x", ObservedAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), ResourceVersion: "42"}
	for i := 0; i < 200; i++ {
		got, err := settle(ready(struct{}{}, nil), ready(want, nil))
		if err != nil || got != want {
			t.Fatalf("read %d: got %+v, %v; want the observation %+v", i, got, err, want)
		}
	}
}

// A wait that failed is reported, whichever of the two ended first.
func TestSettleReportsEitherWaitsError(t *testing.T) {
	boom := errors.New("bound ran out")
	if _, err := settle(ready(struct{}{}, boom), ready(NamespaceGone{Namespace: "n"}, nil)); !errors.Is(err, boom) {
		t.Errorf("pods' wait failed: got %v, want %v", err, boom)
	}
	if _, err := settle(ready(struct{}{}, nil), ready(NamespaceGone{}, boom)); !errors.Is(err, boom) {
		t.Errorf("namespace watch failed: got %v, want %v", err, boom)
	}
}

// async's outcome carries the value and the error together, from a goroutine
// that has already ended by the time it is read.
func TestAsyncSendsOneOutcome(t *testing.T) {
	ch := async(func() (int, error) { return 7, nil })
	deadline := time.Now().Add(5 * time.Second)
	for len(ch) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	o := <-ch
	if o.val != 7 || o.err != nil {
		t.Errorf("got %+v, want 7 and no error", o)
	}
}
