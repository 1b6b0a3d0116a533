package recorder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/termlab/termlab/internal/evidence"
)

// listed is the event type of an object's state as a LIST returned it (at the
// start, and after a re-list).
const listed watch.EventType = "LISTED"

// Delays before another attempt to watch or re-list after a failed one: short
// at first, then a second apart, so a gap closes soon after the server is back.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = time.Second
)

// watchSource is one of the recorder's watches: what it lists and watches.
type watchSource struct {
	name  string // evidence.WatchPods, WatchEvents or WatchNodes
	what  string // for errors, e.g. "pods in termlab-x"
	list  func(ctx context.Context) (items []runtime.Object, resourceVersion string, err error)
	watch func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
}

// sources are the run's pods, the namespace's events and the nodes.
func (r *Recorder) sources() []watchSource {
	core := r.cfg.Client.CoreV1()
	ns, selector := r.cfg.Namespace, r.cfg.PodSelector
	sources := []watchSource{
		{
			name: evidence.WatchPods, what: "pods in " + ns,
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				return core.Pods(ns).Watch(ctx, o)
			},
		},
		{
			name: evidence.WatchEvents, what: "events in " + ns,
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := core.Events(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return core.Events(ns).Watch(ctx, o)
			},
		},
		{
			name: evidence.WatchNodes, what: "nodes",
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := core.Nodes().List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return core.Nodes().Watch(ctx, o)
			},
		},
	}
	if r.cfg.EndpointSlices {
		slices := r.cfg.Client.DiscoveryV1().EndpointSlices(ns)
		sources = append(sources, watchSource{
			name: evidence.WatchEndpointSlices, what: "endpointslices in " + ns,
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := slices.List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return slices.Watch(ctx, o)
			},
		})
	}
	if c := r.cfg.Controllers; c != nil {
		pods := r.cfg.Client.CoreV1().Pods(c.Namespace)
		sources = append(sources, watchSource{
			name: evidence.WatchControllers, what: "pods " + c.Selector + " in " + c.Namespace,
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: c.Selector})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = c.Selector
				return pods.Watch(ctx, o)
			},
		})
	}
	if sel := r.cfg.NamespaceSelector; sel != "" {
		nss := r.cfg.Client.CoreV1().Namespaces()
		sources = append(sources, watchSource{
			name: evidence.WatchNamespaces, what: "namespaces " + sel,
			list: func(ctx context.Context) ([]runtime.Object, string, error) {
				l, err := nss.List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					return nil, "", err
				}
				return objects(l.Items), l.ResourceVersion, nil
			},
			watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = sel
				return nss.Watch(ctx, o)
			},
		})
	}
	return sources
}

func objects[T any, P interface {
	*T
	runtime.Object
}](items []T) []runtime.Object {
	out := make([]runtime.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// watchLoop watches src from resourceVersion rv until ctx ends, recording
// every event in order. When the stream ends or fails it opens a gap and
// watches again from the last resourceVersion seen, which closes the gap;
// when the server no longer has that version (410 Gone, "too old resource
// version") it re-lists, records the listed state as LISTED and closes the gap
// saying that changes in between may be lost.
func (r *Recorder) watchLoop(ctx context.Context, src watchSource, rv string) {
	defer r.wg.Done()
	var delay time.Duration
	relist := false
	failed := func() {
		delay = min(max(2*delay, retryFirst), retryMax)
	}
	for {
		if delay > 0 && !sleep(ctx, delay) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		if relist {
			items, listedRV, err := src.list(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.gapBegins(src.name, fmt.Sprintf("re-listing %s failed: %v", src.what, err))
				failed()
				continue
			}
			for _, o := range items {
				r.handle(src.name, watch.Event{Type: listed, Object: o})
			}
			how := fmt.Sprintf("re-listed at resourceVersion %s: changes in between may be lost (the listed state is recorded as LISTED)", listedRV)
			if src.name == evidence.WatchPods {
				if lost := r.podsMissingFrom(items); len(lost) > 0 {
					how += "; pods recorded before and missing from the re-list, deleted with their DELETED event lost: " + strings.Join(lost, ", ")
				}
			}
			r.gapEnds(src.name, how)
			rv, relist, delay = listedRV, false, 0
		}
		w, err := src.watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if tooOld(err) {
				r.gapBegins(src.name, fmt.Sprintf("the server no longer has resourceVersion %s: %v", rv, err))
				relist, delay = true, 0
				continue
			}
			r.gapBegins(src.name, fmt.Sprintf("watching %s from resourceVersion %s failed: %v", src.what, rv, err))
			failed()
			continue
		}
		r.gapResumed(src.name, rv)
		delay = 0
		var why string
		rv, why, relist = r.follow(ctx, src.name, w, rv)
		if ctx.Err() != nil {
			return
		}
		r.gapBegins(src.name, why)
	}
}

// follow records the events of one watch until it ends or ctx does. It
// returns the last resourceVersion seen, why the watch ended, and whether it
// ended because that version is too old to watch from.
//
// One goroutine only takes events off the stream and stamps them; this one
// records them. The API server closes a watch whose client falls behind (its
// buffer of about a second of events full for longer than a 100 ms budget),
// so taking events off must never wait on recording them (the JSON, the
// files, the lock the lab's waits share).
func (r *Recorder) follow(ctx context.Context, source string, w watch.Interface, rv string) (lastRV, why string, expired bool) {
	defer w.Stop()
	q := &inbox{ready: make(chan struct{}, 1)}
	go q.fill(w)
	for {
		if ctx.Err() != nil {
			return rv, "", false
		}
		batch, open := q.take()
		for _, in := range batch {
			ev := in.ev
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				return rv, fmt.Sprintf("the watch reported an error after resourceVersion %s: %v", rv, err), tooOld(err)
			}
			r.handleAt(source, ev, in.at)
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
				rv = m.GetResourceVersion()
			}
		}
		if len(batch) > 0 {
			continue
		}
		if !open {
			return rv, fmt.Sprintf("the watch stream ended after resourceVersion %s", rv), false
		}
		select {
		case <-ctx.Done():
			return rv, "", false
		case <-q.ready:
		}
	}
}

// received is a watch event and when it came off the stream.
type received struct {
	ev watch.Event
	at time.Time
}

// inbox holds the events taken off one watch stream until they are recorded.
type inbox struct {
	mu     sync.Mutex
	events []received
	closed bool
	ready  chan struct{} // a token whenever events arrive or the stream ends
}

// fill takes every event off the stream as it comes, until the stream ends.
func (q *inbox) fill(w watch.Interface) {
	for ev := range w.ResultChan() {
		at := now()
		q.mu.Lock()
		q.events = append(q.events, received{ev, at})
		q.mu.Unlock()
		q.signal()
	}
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *inbox) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the events waiting (nil when none) and whether the stream is still open.
func (q *inbox) take() ([]received, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.events
	q.events = nil
	return batch, !q.closed || len(batch) > 0
}

// tooOld reports whether err says the server can no longer serve a watch
// from the resourceVersion asked for.
func tooOld(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code == http.StatusGone {
		return true
	}
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || strings.Contains(err.Error(), "too old resource version")
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// openGap is a gap still open: its cause, and the failed attempts to end it.
type openGap struct {
	gap         evidence.WatchGap
	failures    int
	lastFailure string
}

// gapBegins opens a gap of the source's watch now, for the reason why; while
// one is open, why is a failed attempt to end it.
func (r *Recorder) gapBegins(source, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g := r.gaps[source]; g != nil {
		g.failures++
		g.lastFailure = why
		return
	}
	r.gaps[source] = &openGap{gap: evidence.WatchGap{Source: source, From: now(), Why: why}}
	r.broadcast()
}

// gapEnds closes the source's open gap, if there is one, now: how says how
// the watch came back. The gap goes into the record and watch-gaps.jsonl.
func (r *Recorder) gapEnds(source, how string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeGapLocked(source, now(), how)
}

// gapResumed closes the source's open gap, if there is one, now: its watch
// started again from rv, the last resourceVersion it delivered.
func (r *Recorder) gapResumed(source, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g := r.gaps[source]; g != nil {
		g.gap.ResumedFrom = rv
	}
	r.closeGapLocked(source, now(), "watching again from resourceVersion "+rv)
}

// closeGapLocked ends the source's open gap at t; r.mu must be held.
func (r *Recorder) closeGapLocked(source string, t time.Time, how string) {
	g := r.gaps[source]
	if g == nil {
		return
	}
	delete(r.gaps, source)
	gap := g.gap
	gap.To = t
	if g.failures > 0 {
		gap.Why += fmt.Sprintf("; %d failed attempt(s) to watch again, the last: %s", g.failures, g.lastFailure)
	}
	gap.Why += "; " + how
	r.rec.Gaps = append(r.rec.Gaps, gap)
	r.appendLine(evidence.WatchGapsFile, gap)
	r.broadcast()
}

// closeOpenGapsLocked ends every gap still open at the end of the record; r.mu must be held.
func (r *Recorder) closeOpenGapsLocked() {
	sources := make([]string, 0, len(r.gaps))
	for s := range r.gaps {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	for _, s := range sources {
		r.closeGapLocked(s, r.rec.EndedAt, "still down when the recorder stopped")
	}
}

// openGapsLocked returns the gaps still open, with a zero To; r.mu must be held.
func (r *Recorder) openGapsLocked() []evidence.WatchGap {
	var out []evidence.WatchGap
	for _, g := range r.gaps {
		out = append(out, g.gap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out
}

// podsMissingFrom names the pods recorded as existing that a re-list no longer returned.
func (r *Recorder) podsMissingFrom(items []runtime.Object) []string {
	listedNames := map[string]bool{}
	for _, o := range items {
		if p, ok := o.(*corev1.Pod); ok {
			listedNames[p.Name] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	exists := map[string]bool{}
	var order []string
	events := r.rec.PodEvents
	if r.stream != nil {
		events = r.stream.latest
	}
	for _, e := range events {
		if _, seen := exists[e.Name]; !seen {
			order = append(order, e.Name)
		}
		exists[e.Name] = e.Type != string(watch.Deleted)
	}
	var out []string
	for _, name := range order {
		if exists[name] && !listedNames[name] {
			out = append(out, name)
		}
	}
	return out
}
