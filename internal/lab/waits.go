package lab

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

// containerProbeEvery is how often crictl inspect is asked while waiting for
// a container to stop: often enough to see a container the kubelet removes a
// second after it exits (the watch, not this, is the record of the pod).
const containerProbeEvery = 250 * time.Millisecond

// WaitNotReady waits on the recorder's node watch, at most within, for the
// node's Ready condition to leave True. A wait that runs out is noted in the
// record (the claims that need it will fail) and the run goes on.
func (r *Run) WaitNotReady(ctx context.Context, node string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	defer cancel()
	e, err := r.Rec.WaitNode(wctx, node, "turn NotReady", func(e evidence.NodeEvent) bool { return e.Ready != "True" })
	if err == nil {
		r.Infof("node %s Ready=%s (%s)", node, e.Ready, e.Reason)
	}
	return r.Unobserved(ctx, err)
}

// WaitStopped polls crictl on the node, at most within, until the container
// has exited or is gone, and records that observation. A wait that runs out
// is noted in the record and the run goes on.
func (r *Run) WaitStopped(ctx context.Context, node cluster.Node, pod, containerID string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	defer cancel()
	o, err := r.Rec.WaitContainer(wctx, node, pod, containerID, "stop running", containerProbeEvery, evidence.ContainerObservation.Stopped)
	if err == nil {
		r.Infof("crictl: %s", o.Describe())
	}
	return r.Unobserved(ctx, err)
}

// WaitDeleted waits on the recorder's pod watch, at most within, for the
// pod's DELETED event, then reads the pod (a GET that should answer
// NotFound) into the record. A wait that runs out is noted in the record and
// the run goes on.
func (r *Run) WaitDeleted(ctx context.Context, pod string, within time.Duration) error {
	wctx, cancel := Within(ctx, within)
	e, err := r.Rec.WaitPod(wctx, pod, "be deleted", func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
	cancel()
	if err == nil {
		r.Infof("%s DELETED (resourceVersion %s, phase %s): the API object is gone", pod, e.ResourceVersion, e.Phase)
	}
	if err := r.Unobserved(ctx, err); err != nil {
		return err
	}
	_, err = r.Rec.Snapshot(ctx, pod)
	return err
}

// Look records what crictl on the node says about the container now and
// tells the user, with remark after it.
func (r *Run) Look(ctx context.Context, node cluster.Node, pod, containerID, remark string) (evidence.ContainerObservation, error) {
	o, err := r.Rec.ObserveContainer(ctx, node, pod, containerID)
	if err == nil {
		r.Infof("crictl on %s: %s%s", node, o.Describe(), remark)
	}
	return o, r.Unobserved(ctx, err)
}

// A Bound is how long the cluster may take for something once the actions
// it follows are done, and why it has that value.
type Bound struct {
	What  string        // "every finalizer pod DELETED and the namespace gone"
	Allow time.Duration // the cluster's share
	Why   string        // "60 s + 200 ms per pod: a floor of 5 pods/s"
}

// BoundError is a Bound that ran out: the run fails with it, naming the
// bound and what its clock started from.
type BoundError struct {
	Bound
	After string // "the last of 60 finalizer releases (scripts/scale.sh: 53.1 s for all)"
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("%s: not within %s of %s (the bound: %s)", e.What, e.Allow, e.After, e.Why)
}

// BoundAfter returns a context for waits on b whose clock starts only when
// start is called, once the actions the waits follow are done. The waits may
// begin before the actions (so they miss nothing), but who acts never eats
// the cluster's share: termlab sends a request in milliseconds, a script
// takes a kubectl call and the audit log's confirmation per action, a person
// longer still, and each such action has its actor's own bound (by.go).
// When b runs out the context ends with a *BoundError as its cause, which
// Unobserved does not swallow: the run fails and says which bound it was.
func BoundAfter(ctx context.Context, b Bound) (wctx context.Context, start func(after string), cancel func()) {
	wctx, cancelCause := context.WithCancelCause(ctx)
	var mu sync.Mutex
	var timer *time.Timer
	start = func(after string) {
		mu.Lock()
		defer mu.Unlock()
		if timer == nil && wctx.Err() == nil {
			timer = time.AfterFunc(b.Allow, func() { cancelCause(&BoundError{Bound: b, After: after}) })
		}
	}
	cancel = func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		cancelCause(context.Canceled)
	}
	return wctx, start, cancel
}

// ActedBy names who does the run's actions: termlab, scripts/<lab>.sh or
// "you" (Options.By).
func (r *Run) ActedBy() string {
	switch r.opts.By {
	case ByScript:
		return "scripts/" + r.Lab + ".sh"
	case ByYou:
		return "you"
	}
	return "termlab"
}

// A Stall is how long a wait that counts its progress may go without any:
// a slow cluster still moves, a stuck one does not, so a wait with a bound
// generous enough for a busy machine still ends soon after it stops moving.
type Stall struct {
	What  string        // "pods DELETED or held"
	After time.Duration // no progress for this long ends the wait
	Why   string        // why a healthy run never goes this long without one
}

// StallError is a Stall that happened: the run fails with it.
type StallError struct {
	Stall
	At int64 // the progress count it stopped at
}

func (e *StallError) Error() string {
	return fmt.Sprintf("%s: no progress for %s, stopped at %d (%s)", e.What, e.After, e.At, e.Why)
}

// stallCheckEvery is how often UnlessStalled looks at the count.
var stallCheckEvery = time.Second

// UnlessStalled returns ctx, ended with a *StallError as its cause once
// count() has not changed for s.After after start was called (like
// BoundAfter, the actions the wait follows are not the cluster's time);
// cancel releases it.
func UnlessStalled(ctx context.Context, s Stall, count func() int64) (sctx context.Context, start func(), cancel func()) {
	sctx, cancelCause := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var startOnce, cancelOnce sync.Once
	start = func() {
		startOnce.Do(func() { go watchStall(sctx, done, s, count, cancelCause) })
	}
	cancel = func() {
		cancelOnce.Do(func() { close(done); cancelCause(context.Canceled) })
	}
	return sctx, start, cancel
}

func watchStall(ctx context.Context, done <-chan struct{}, s Stall, count func() int64, end context.CancelCauseFunc) {
	last, since := count(), time.Now()
	t := time.NewTicker(stallCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n := count(); n != last {
				last, since = n, now
			} else if now.Sub(since) >= s.After {
				end(&StallError{Stall: s, At: n})
				return
			}
		}
	}
}
