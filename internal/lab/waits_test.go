package lab

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The bound's clock starts at start, not at BoundAfter: actions slower than
// the bound itself (a script's) leave the cluster's share whole.
func TestBoundAfterStartsItsClockAfterTheActions(t *testing.T) {
	b := Bound{What: "the namespace gone", Allow: 50 * time.Millisecond, Why: "a test's bound"}
	ctx, start, cancel := BoundAfter(context.Background(), b)
	defer cancel()
	time.Sleep(150 * time.Millisecond) // the actions: three times the bound
	if ctx.Err() != nil {
		t.Fatalf("the bound ran out before the actions were done: %v", context.Cause(ctx))
	}
	began := time.Now()
	start("the last of 3 releases")
	<-ctx.Done()
	if took := time.Since(began); took < b.Allow {
		t.Errorf("ran out %s after start, before its %s", took, b.Allow)
	}
	var be *BoundError
	if !errors.As(context.Cause(ctx), &be) {
		t.Fatalf("cause %v, want a *BoundError", context.Cause(ctx))
	}
	msg := be.Error()
	for _, want := range []string{"the namespace gone", "50ms", "the last of 3 releases", "a test's bound"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	// Not a deadline that Unobserved would note and go past: the run fails.
	r := &Run{}
	if err := r.Unobserved(context.Background(), context.Cause(ctx)); err == nil {
		t.Error("Unobserved swallowed a bound that ran out")
	}
}

// Cancelled before (or without) start: the cause is Canceled, never a bound.
func TestBoundAfterCancelIsNotABound(t *testing.T) {
	ctx, start, cancel := BoundAfter(context.Background(), Bound{Allow: time.Millisecond})
	cancel()
	start("too late")
	time.Sleep(10 * time.Millisecond)
	var be *BoundError
	if errors.As(context.Cause(ctx), &be) || !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause %v, want context.Canceled", context.Cause(ctx))
	}
}

func TestUnlessStalledEndsAWaitThatStopsMoving(t *testing.T) {
	defer func(d time.Duration) { stallCheckEvery = d }(stallCheckEvery)
	stallCheckEvery = 5 * time.Millisecond
	s := Stall{What: "pods DELETED", After: 60 * time.Millisecond, Why: "a test"}

	// Moving: the count changes faster than After, so the wait is not ended.
	var n atomic.Int64
	ctx, start, cancel := UnlessStalled(context.Background(), s, n.Load)
	time.Sleep(3 * s.After) // not started: the actor's time is not counted
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("ended before start: %v", err)
	}
	start()
	for range 20 {
		n.Add(1)
		time.Sleep(10 * time.Millisecond)
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("a moving count was ended: %v", err)
	}
	cancel()

	// Stopped: ended with a StallError naming where it stopped.
	ctx, start, cancel = UnlessStalled(context.Background(), s, n.Load)
	defer cancel()
	start()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a stopped count was never ended")
	}
	var se *StallError
	if !errors.As(context.Cause(ctx), &se) || se.At != 20 {
		t.Fatalf("cause %v, want a StallError at 20", context.Cause(ctx))
	}
	if !strings.Contains(se.Error(), "no progress for 60ms, stopped at 20 (a test)") {
		t.Errorf("error %q", se.Error())
	}
}
