// Package apiload measures how many pod writes per second a cluster's API
// server sustains with nothing but itself and etcd in the way: pods held by
// a scheduling gate (no scheduler, kubelet, kwok or pod garbage collector
// acts on a pod that was never bound) created, then deleted with grace
// period 0, by many clients without a client-side rate limit. It is the
// ceiling lab:scale's rates are compared with (#27): a rate near it is the
// machine's, one far below it is some component's limit.
package apiload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/termlab/termlab/internal/progress"
)

// Gate holds the load's pods out of scheduling.
const Gate = "termlab.dev/apiload"

// Options size the load.
type Options struct {
	Pods    int // created, then deleted (default 2000)
	Workers int // requests in flight at once (default 32)
	// Namespace is created for the load and deleted after it.
	Namespace string
	// Labels go on the namespace and each pod (a run id, for cleanup).
	Labels map[string]string
	Log    *progress.Logger
}

// Figures are one load's rates: requests answered per second of wall
// time, from the first request sent to the last answer.
type Figures struct {
	Pods, Workers   int
	CreatePerSecond float64
	DeletePerSecond float64
	// Failed counts requests answered with an error (a 429 is the API
	// server's own limit: max-requests-inflight / priority and fairness).
	CreateFailed, DeleteFailed int
	TooManyRequests            int
}

// Run creates the namespace, the pods, deletes them, and deletes the
// namespace (also when it fails or ctx ends).
func Run(ctx context.Context, cfg *rest.Config, o Options) (f Figures, err error) {
	if o.Pods <= 0 {
		o.Pods = 2000
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	f.Pods, f.Workers = o.Pods, o.Workers
	c := rest.CopyConfig(cfg)
	c.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter() // the server's limit, not client-go's
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return f, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: o.Labels}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return f, fmt.Errorf("creating the load's namespace %s: %w", o.Namespace, err)
	}
	defer func() {
		zero := int64(0)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = client.CoreV1().Pods(o.Namespace).DeleteCollection(cctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if derr := client.CoreV1().Namespaces().Delete(cctx, o.Namespace, metav1.DeleteOptions{}); derr != nil && !apierrors.IsNotFound(derr) && err == nil {
			err = fmt.Errorf("deleting the load's namespace %s: %w", o.Namespace, derr)
		}
	}()
	pods := client.CoreV1().Pods(o.Namespace)
	var throttled atomic.Int64
	count := func(err error) {
		if apierrors.IsTooManyRequests(err) {
			throttled.Add(1)
		}
	}
	rate, failed, err := o.each(ctx, "created", func(ctx context.Context, i int) error {
		_, err := pods.Create(ctx, pod(i, o.Labels), metav1.CreateOptions{})
		count(err)
		return err
	})
	f.CreatePerSecond, f.CreateFailed = rate, failed
	if err != nil {
		return f, err
	}
	zero := int64(0)
	rate, failed, err = o.each(ctx, "deleted", func(ctx context.Context, i int) error {
		err := pods.Delete(ctx, podName(i), metav1.DeleteOptions{GracePeriodSeconds: &zero})
		count(err)
		return err
	})
	f.DeletePerSecond, f.DeleteFailed = rate, failed
	f.TooManyRequests = int(throttled.Load())
	return f, err
}

// each sends call for every pod from o.Workers goroutines and returns the
// answered requests per second and how many failed; it fails only when ctx
// ends.
func (o Options) each(ctx context.Context, what string, call func(context.Context, int) error) (perSecond float64, failed int, err error) {
	next := make(chan int)
	var done, bad atomic.Int64
	stop := func() {}
	if o.Log != nil {
		stop = o.Log.Every(5*time.Second, func() string {
			return fmt.Sprintf("  API write load: %d of %d pods %s", done.Load(), o.Pods, what)
		})
	}
	begin := time.Now()
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if call(ctx, i) != nil {
					bad.Add(1)
				}
				done.Add(1)
			}
		}()
	}
feed:
	for i := range o.Pods {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	took := time.Since(begin)
	stop()
	if err := ctx.Err(); err != nil {
		return 0, int(bad.Load()), fmt.Errorf("the API write load (%s): %w", what, err)
	}
	return Rate(int(done.Load()-bad.Load()), took), int(bad.Load()), nil
}

// Rate is n per second of took (0 for no time).
func Rate(n int, took time.Duration) float64 {
	if took <= 0 {
		return 0
	}
	return float64(n) / took.Seconds()
}

func podName(i int) string { return fmt.Sprintf("load-%05d", i) }

// pod is a gated pod: never scheduled, so no node-side component touches
// it and a delete with grace period 0 removes it at once.
func pod(i int, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName(i), Labels: labels},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: Gate}},
			Containers:      []corev1.Container{{Name: "never-runs", Image: "termlab.local/never-pulled:0"}},
		},
	}
}

// Fraction says what share of the ceiling a rate is ("38 %").
func Fraction(rate, ceiling float64) string {
	if ceiling <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*rate/ceiling)
}

// Median is rounds' median create rate and median delete rate (each its own:
// they may come from different rounds), with the rounds' failures summed; of
// an even count, the lower middle (the ceiling errs low, the fraction of it
// high).
func Median(rounds []Figures) Figures {
	if len(rounds) == 0 {
		return Figures{}
	}
	m := Figures{Pods: rounds[0].Pods, Workers: rounds[0].Workers}
	m.CreatePerSecond = median(rounds, func(r Figures) float64 { return r.CreatePerSecond })
	m.DeletePerSecond = median(rounds, func(r Figures) float64 { return r.DeletePerSecond })
	for _, r := range rounds {
		m.CreateFailed += r.CreateFailed
		m.DeleteFailed += r.DeleteFailed
		m.TooManyRequests += r.TooManyRequests
	}
	return m
}

func median(rounds []Figures, rate func(Figures) float64) float64 {
	xs := make([]float64, len(rounds))
	for i, r := range rounds {
		xs[i] = rate(r)
	}
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}

// Spread is the rounds' range of a rate, "min–max/s over n rounds".
func Spread(rounds []Figures, rate func(Figures) float64) string {
	if len(rounds) == 0 {
		return "no rounds"
	}
	lo, hi := rate(rounds[0]), rate(rounds[0])
	for _, r := range rounds[1:] {
		lo, hi = min(lo, rate(r)), max(hi, rate(r))
	}
	return fmt.Sprintf("%.0f–%.0f/s over %d rounds", lo, hi, len(rounds))
}
