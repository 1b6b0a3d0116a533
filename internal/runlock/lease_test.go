package runlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/syncbuf"
)

func lease(holder string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(seconds)}}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	if !renewed.IsZero() {
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
	}
	return l
}

// A Lease is held only by a named holder whose last renewal plus its
// duration lies ahead; every other record is free.
func TestHolder(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	acquiredOnly := lease("b", time.Time{}, 20)
	acquiredOnly.Spec.AcquireTime = &metav1.MicroTime{Time: now.Add(-5 * time.Second)}
	for _, c := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  string
	}{
		{"renewed 5 s ago, lasts 20 s", lease("a", now.Add(-5*time.Second), 20), "a"},
		{"renewed 25 s ago, lasts 20 s: expired", lease("a", now.Add(-25*time.Second), 20), ""},
		{"released (no holder)", lease("", now, 1), ""},
		{"no renewal, acquired 5 s ago", acquiredOnly, "b"},
		{"no time at all", lease("a", time.Time{}, 20), ""},
		{"no duration", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), RenewTime: &metav1.MicroTime{Time: now}}}, ""},
	} {
		if got := Holder(c.lease, now); got != c.want {
			t.Errorf("%s: Holder = %q, want %q", c.name, got, c.want)
		}
	}
}

// Two termlabs (two keys: as two processes) on one cluster: the second
// refuses with noWait naming the holder, or waits saying who holds it and
// gets the lock once the first releases it; the last release deletes the
// Lease, leaving the cluster as found. Within one key the lock is re-entrant.
func TestLeaseTakesTurns(t *testing.T) {
	client := fake.NewClientset()
	ctx := context.Background()
	first, err := take(ctx, progress.New(&syncbuf.Buffer{}), client, "machine-a", "lab:finalizer run 1", false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := take(ctx, progress.New(&syncbuf.Buffer{}), client, "machine-a", "lab:finalizer run 1", false)
	if err != nil || again != first {
		t.Fatalf("taking the lock again in the same process: %v (same lock: %v)", err, again == first)
	}
	again.Release()

	if _, err := take(ctx, progress.New(&syncbuf.Buffer{}), client, "machine-b", "lab:force run 2", true); err == nil || !strings.Contains(err.Error(), "held by lab:finalizer run 1") {
		t.Fatalf("-nowait while another holds the lock: %v, want a refusal naming the holder", err)
	}

	out := &syncbuf.Buffer{}
	got := make(chan *Lock, 1)
	go func() {
		second, err := take(ctx, progress.New(out), client, "machine-b", "lab:force run 2", false)
		if err != nil {
			t.Error(err)
		}
		got <- second
	}()
	time.Sleep(3 * retryPeriod)
	select {
	case <-got:
		t.Fatal("the second termlab got the lock while the first held it")
	default:
	}
	if !strings.Contains(out.String(), "lab:finalizer run 1") {
		t.Errorf("the waiting termlab did not say who holds the lock: %q", out.String())
	}
	released := time.Now()
	first.Release()
	var second *Lock
	select {
	case second = <-got:
	case <-time.After(3 * retryPeriod):
		t.Fatalf("the second termlab did not get the lock within %s of its release", 3*retryPeriod)
	}
	t.Logf("the waiter had the lock %s after the release", time.Since(released).Round(time.Millisecond))
	l, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, LeaseName, metav1.GetOptions{})
	if err != nil || Holder(l, time.Now()) != "lab:force run 2" {
		t.Fatalf("after the hand-over the Lease says %v (%v)", l, err)
	}
	if second.Lost() != nil {
		t.Errorf("a lock held throughout says %v", second.Lost())
	}
	second.Release()
	if _, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, LeaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Lease is still there after the last release (%v)", err)
	}
}

// A lock whose renewals fail for the renew deadline lapses: Lost says so
// while the API server does not answer. When it answers again, a Lease that
// still names the holder is taken back (the lapse kept for the record); one
// another termlab wrote in between means the lock is lost (a lab run then
// fails: that termlab may have repaired its objects).
func TestLeaseLapsesThenTakenBackOrLost(t *testing.T) {
	defer func(l, r, p time.Duration) { leaseDuration, renewDeadline, retryPeriod = l, r, p }(leaseDuration, renewDeadline, retryPeriod)
	leaseDuration, renewDeadline, retryPeriod = 2*time.Second, 1500*time.Millisecond, 200*time.Millisecond
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("another holder meanwhile=%v", other), func(t *testing.T) {
			client := fake.NewClientset()
			var down atomic.Bool // the reactor goes in first: the fake's reactor chain is not safe to change in use
			client.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
				if down.Load() {
					return true, nil, errors.New("the API server does not answer")
				}
				return false, nil, nil
			})
			l, err := take(context.Background(), progress.New(&syncbuf.Buffer{}), client, "machine-a", "lab:stuck run 3", false)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if l.Lost() != nil {
				t.Fatalf("lost at once: %v", l.Lost())
			}
			down.Store(true)
			waitFor(t, "a lapse", func() bool { return l.Lost() != nil })
			if err := l.Lost(); !strings.Contains(err.Error(), "lapsed at") {
				t.Fatalf("while the API server does not answer: Lost() = %v", err)
			}
			if other {
				// Written past the reactors, as another termlab's update would be.
				gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
				obj, err := client.Tracker().Get(gvr, LeaseNamespace, LeaseName)
				if err != nil {
					t.Fatal(err)
				}
				lease := obj.(*coordinationv1.Lease).DeepCopy()
				someone := "lab:force run 4"
				lease.Spec.HolderIdentity = &someone
				if err := client.Tracker().Update(gvr, lease, LeaseNamespace); err != nil {
					t.Fatal(err)
				}
			}
			down.Store(false)
			if other {
				waitFor(t, "the loss", func() bool { err := l.Lost(); return err != nil && strings.Contains(err.Error(), "was lost at") })
				select {
				case <-l.Gone():
				default:
					t.Error("the lock is lost and Gone() is not closed: the run's steps would go on")
				}
				return
			}
			select {
			case <-l.Gone():
				t.Error("Gone() closed on a lapse the lock was taken back from")
			default:
			}
			waitFor(t, "the lock taken back", func() bool { return l.Lost() == nil })
			if lapses := l.Lapses(); len(lapses) != 1 || !lapses[0].To.After(lapses[0].From) || !strings.Contains(lapses[0].Why, "does not answer") {
				t.Errorf("lapses %+v, want the one, with its cause", lapses)
			}
			// Held again: renewed, and still this run's.
			time.Sleep(2 * leaseDuration)
			lease, err := client.CoordinationV1().Leases(LeaseNamespace).Get(context.Background(), LeaseName, metav1.GetOptions{})
			if err != nil || Holder(lease, time.Now()) != "lab:stuck run 3" || l.Lost() != nil {
				t.Errorf("after the lapse the Lease says %v (%v), Lost() %v", lease, err, l.Lost())
			}
		})
	}
}

// waitFor polls cond for at most ten renew deadlines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * renewDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, 10*renewDeadline)
		}
		time.Sleep(retryPeriod / 2)
	}
}
