package runlock

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/progress"
)

// The cluster's run lock is a Lease in the cluster itself, so that two
// termlabs on one cluster take turns whatever machine each runs on; the
// flock (Acquire) only orders what one machine does to its own kind cluster.
const (
	// LeaseNamespace holds the run lock: it exists on every cluster, and the
	// control plane's own leader leases live there too.
	LeaseNamespace = "kube-system"
	// LeaseName is the run lock's name.
	LeaseName = "termlab-run-lock"
	// AliveLease is the Lease a termlab keeps in a namespace it is still
	// using outside the run lock (node pods): repair leaves such a namespace
	// alone while it is renewed.
	AliveLease = "termlab-alive"
)

// The Lease's timing: a holder killed by SIGKILL blocks the next run for at
// most leaseDuration; renewDeadline leaves a loaded API server (lab:scale's
// thousands of writes) three retries to answer a renewal; a waiter notices a
// release within about retryPeriod.
// (Variables only so that a unit test can lose a lock in seconds.)
var (
	leaseDuration = 20 * time.Second
	renewDeadline = 15 * time.Second
	retryPeriod   = 2 * time.Second
)

const (
	// stillWaitingEvery is how often a waiter says it is still waiting.
	stillWaitingEvery = 30 * time.Second
	// requestTimeout bounds each request of the lock's own client.
	requestTimeout = 10 * time.Second
)

// Identity names a holder for whoever waits on it: what it does (with its
// run id), who, on which machine, which process.
func Identity(what string) string {
	who := "someone"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s (%s@%s pid %d)", what, who, host, os.Getpid())
}

// Lock is a held run lock. Release gives it back; Lost says whether it
// slipped away while held (its renewals failed for renewDeadline), after
// which another termlab may have taken it and repaired this run's objects.
type Lock struct {
	key      string
	identity string
	cancel   context.CancelFunc
	stopped  chan struct{}
	lostAt   atomic.Pointer[time.Time]
	// gone is closed when the lock is lost (Gone).
	gone     chan struct{}
	loseOnce sync.Once
	client   kubernetes.Interface

	mu sync.Mutex
	// lapsedSince is when renewals last failed for renewDeadline, while the
	// lock is not yet taken back (zero: held).
	lapsedSince time.Time
	lapses      []Lapse
}

// Lapse is a time the lock's renewals failed (the API server did not
// answer) and the lock was then taken back: the Lease still named this
// holder when the server answered again, so no other termlab held it.
type Lapse struct {
	From, To time.Time
	// Why is the last failed renewal's error.
	Why string
}

var (
	leaseMu sync.Mutex
	// leases are the locks this process holds, by API server: a lab target
	// that holds the lock calls code that takes it again (re-entrant, as
	// the flock is).
	leases = map[string]*heldLease{}
)

type heldLease struct {
	lock  *Lock
	count int
}

// Take takes the cluster's run lock (the Lease kube-system/termlab-run-lock)
// for identity, waiting at most Wait while another termlab holds it and
// saying who that is, or refusing at once with noWait. The lock is held, and
// renewed by a goroutine, until Release: past ctx's end too, so that a
// cancelled run's cleanup still runs under it.
func Take(ctx context.Context, log *progress.Logger, cfg *rest.Config, identity string, noWait bool) (*Lock, error) {
	client, err := lockClient(cfg)
	if err != nil {
		return nil, err
	}
	return take(ctx, log, client, cfg.Host, identity, noWait)
}

// take is Take with the lock's client; key names the cluster within this
// process.
func take(ctx context.Context, log *progress.Logger, client kubernetes.Interface, key, identity string, noWait bool) (*Lock, error) {
	leaseMu.Lock()
	if h, ok := leases[key]; ok {
		h.count++
		leaseMu.Unlock()
		return h.lock, nil
	}
	leaseMu.Unlock()

	where := LeaseNamespace + "/" + LeaseName
	holder, err := currentHolder(ctx, client, time.Now())
	if err != nil {
		return nil, err
	}
	if holder != "" {
		if noWait {
			return nil, fmt.Errorf("the cluster's run lock (Lease %s) is held by %s: run again when it is done, or without %s to wait for it", where, holder, invocation.Flag("-nowait"))
		}
		log.Infof("another termlab holds this cluster's run lock (Lease %s): %s; waiting for it (at most %s)", where, holder, Wait)
	}

	l := &Lock{key: key, identity: identity, stopped: make(chan struct{}), gone: make(chan struct{}), client: client}
	// The lock outlives ctx (see above); Release ends it.
	runCtx, cancel := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), logr.Discard()))
	l.cancel = cancel
	leading := make(chan struct{})
	var started atomic.Bool
	// announced is the holder last named to the user.
	var announcedMu sync.Mutex
	announced := holder
	swapAnnounced := func(id string) bool {
		announcedMu.Lock()
		defer announcedMu.Unlock()
		changed := id != announced
		announced = id
		return changed
	}
	elector, err := newElector(client, LeaseNamespace, LeaseName, identity, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) { started.Store(true); close(leading) },
		OnStoppedLeading: func() {},
		OnNewLeader: func(id string) {
			// Called once the elector first reads the Lease, then on every change.
			if id != "" && id != identity && !started.Load() && swapAnnounced(id) {
				log.Infof("the run lock is now held by %s; still waiting", id)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("setting up the run lock (Lease %s): %w", where, err)
	}
	go func() {
		defer close(l.stopped)
		elector.Run(runCtx)
		// Run returns when runCtx ends (Release) or when renewals failed for
		// renewDeadline: the lock lapsed, and is taken back if nobody took it.
		for runCtx.Err() == nil && started.Load() {
			if !l.takeBack(runCtx) {
				return
			}
			again, err := newElector(client, LeaseNamespace, LeaseName, identity, leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {},
			})
			if err != nil {
				now := time.Now()
				l.lostAt.Store(&now)
				return
			}
			again.Run(runCtx)
		}
	}()

	waitCtx, stopWaiting := context.WithTimeout(ctx, Wait)
	defer stopWaiting()
	begin := time.Now()
	tick := time.NewTicker(stillWaitingEvery)
	defer tick.Stop()
	for {
		select {
		case <-leading:
			leaseMu.Lock()
			leases[key] = &heldLease{lock: l, count: 1}
			leaseMu.Unlock()
			if holder != "" {
				log.Infof("took the run lock after waiting %s", time.Since(begin).Round(time.Second))
			}
			return l, nil
		case <-l.stopped:
			// Run returns without leading only when runCtx ends, which
			// nothing but Release does: this is not expected.
			cancel()
			return nil, fmt.Errorf("taking the cluster's run lock (Lease %s): the election ended before it was taken", where)
		case <-waitCtx.Done():
			cancel()
			<-l.stopped
			if started.Load() {
				l.deleteIfFree()
			}
			return nil, fmt.Errorf("waiting for the cluster's run lock (Lease %s, held by %s): %w", where, holderOr(elector.GetLeader(), holder), context.Cause(waitCtx))
		case <-tick.C:
			log.Infof("still waiting for the run lock (%s so far), held by %s", time.Since(begin).Round(time.Second), holderOr(elector.GetLeader(), holder))
		}
	}
}

func holderOr(id, fallback string) string {
	if id == "" {
		return fallback
	}
	return id
}

// Release gives the lock back (the last release in this process does) and
// deletes the Lease if nobody took it meanwhile, so the cluster is left
// as found. Each Take is paired with one Release.
func (l *Lock) Release() {
	leaseMu.Lock()
	h := leases[l.key]
	if h == nil || h.lock != l {
		leaseMu.Unlock()
		return
	}
	if h.count--; h.count > 0 {
		leaseMu.Unlock()
		return
	}
	delete(leases, l.key)
	leaseMu.Unlock()
	l.cancel()
	<-l.stopped // the elector released the Lease (holder cleared)
	l.deleteIfFree()
}

// Lost is nil while the lock was held throughout, or taken back after each
// lapse (Lapses); otherwise it says when it slipped away.
func (l *Lock) Lost() error {
	if at := l.lostAt.Load(); at != nil {
		return fmt.Errorf("the cluster's run lock (Lease %s/%s) was lost at %s: its renewals failed for %s, and then the Lease no longer named this run, so another termlab may have run (and repaired this run's objects) since",
			LeaseNamespace, LeaseName, at.UTC().Format(time.RFC3339), renewDeadline)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lapsedSince.IsZero() {
		return fmt.Errorf("the cluster's run lock (Lease %s/%s) lapsed at %s (its renewals failed for %s) and was not taken back: the API server has not answered since",
			LeaseNamespace, LeaseName, l.lapsedSince.UTC().Format(time.RFC3339), renewDeadline)
	}
	return nil
}

// Holder is the identity the Lease names while this lock is held (the
// first taker's, when the lock was taken again in the same process).
func (l *Lock) Holder() string { return l.identity }

// Gone is closed when the lock is lost (Lost says how): a run stops its
// steps at once, since another termlab may be repairing its objects.
func (l *Lock) Gone() <-chan struct{} { return l.gone }

// Lapses are the times the lock lapsed and was taken back.
func (l *Lock) Lapses() []Lapse {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Lapse(nil), l.lapses...)
}

// takeBack is what happens after renewals failed for renewDeadline: the
// Lease is read every retryPeriod until the API server answers. If it still
// names this holder, nobody took the lock in between (a taker writes its
// own name; a release clears or deletes it), and renewing it under its
// resourceVersion takes it back; otherwise the lock is lost.
func (l *Lock) takeBack(ctx context.Context) bool {
	l.mu.Lock()
	l.lapsedSince = time.Now()
	l.mu.Unlock()
	why := "renewals failed"
	leases := l.client.CoordinationV1().Leases(LeaseNamespace)
	for {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		lease, err := leases.Get(rctx, LeaseName, metav1.GetOptions{})
		if err == nil && (lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != l.identity) {
			cancel()
			l.lose()
			return false
		}
		if err == nil {
			now := metav1.NewMicroTime(time.Now())
			lease.Spec.RenewTime = &now
			_, err = leases.Update(rctx, lease, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				cancel()
				l.lose() // written by another since it was read
				return false
			}
		}
		cancel()
		if apierrors.IsNotFound(err) {
			l.lose() // released and deleted by a termlab that took it
			return false
		}
		if err == nil {
			l.mu.Lock()
			l.lapses = append(l.lapses, Lapse{From: l.lapsedSince, To: time.Now(), Why: why})
			l.lapsedSince = time.Time{}
			l.mu.Unlock()
			return true
		}
		why = err.Error()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(retryPeriod):
		}
	}
}

// lose marks the lock lost at the time it lapsed.
func (l *Lock) lose() {
	l.mu.Lock()
	at := l.lapsedSince
	l.lapsedSince = time.Time{}
	l.mu.Unlock()
	l.lostAt.Store(&at)
	l.loseOnce.Do(func() { close(l.gone) })
}

// deleteIfFree deletes the Lease when nobody holds it, guarded by its
// resourceVersion so that a waiter who just took it keeps it.
func (l *Lock) deleteIfFree() {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	leases := l.client.CoordinationV1().Leases(LeaseNamespace)
	lease, err := leases.Get(ctx, LeaseName, metav1.GetOptions{})
	if err != nil || Holder(lease, time.Now()) != "" {
		return
	}
	_ = leases.Delete(ctx, LeaseName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &lease.ResourceVersion}})
}

// currentHolder is who holds the run lock now ("" for nobody).
func currentHolder(ctx context.Context, client kubernetes.Interface, now time.Time) (string, error) {
	lease, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking at the cluster's run lock (Lease %s/%s; termlab needs to get, create and update Leases there): %w", LeaseNamespace, LeaseName, err)
	}
	return Holder(lease, now), nil
}

// Holder is who holds a Lease at now: its holder identity while its last
// renewal plus its duration lies ahead, "" when it is free or expired.
// (The holder's clock wrote the renewal; leases last tens of seconds, far
// beyond the clock offsets of one cluster.)
func Holder(lease *coordinationv1.Lease, now time.Time) string {
	s := lease.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.LeaseDurationSeconds == nil {
		return ""
	}
	renewed := s.RenewTime
	if renewed == nil {
		renewed = s.AcquireTime
	}
	if renewed == nil {
		return ""
	}
	if renewed.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second).Before(now) {
		return ""
	}
	return *s.HolderIdentity
}

// lockClient is a client of the lock's own: a lab's client may be queued
// behind thousands of its own writes by client-side rate limiting, and a
// renewal must not wait behind them.
func lockClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 5, 10
	c.Timeout = requestTimeout
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("a client for the cluster's run lock: %w", err)
	}
	return client, nil
}

// newElector is client-go's leader election on a Lease, with the timing
// above, giving the Lease back when its context ends.
func newElector(client kubernetes.Interface, namespace, name, identity string, callbacks leaderelection.LeaderCallbacks) (*leaderelection.LeaderElector, error) {
	return leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
		ReleaseOnCancel: true,
		Name:            "termlab",
		Callbacks:       callbacks,
	})
}
