package scale

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Figures are a run's throughput and cost, all from its record.
type Figures struct {
	Size Size
	// CreatePerSecond: pods / (the create batch's start → the last ADDED).
	CreatePerSecond float64
	// RunningPerSecond: pods / (the create batch's start → the last pod first Running).
	RunningPerSecond float64
	// MostNotRunning: the most pods ADDED and not yet Running at once (the
	// creates wait beyond aheadOfRunning).
	MostNotRunning int
	// DeletedPerSecond: pods without a finalizer / (namespace delete → the last of their DELETED).
	DeletedPerSecond float64
	// DeleteToLastDeleted: namespace delete → the last DELETED of any pod (finalizer pods after their release).
	DeleteToLastDeleted float64
	// HeldFor: namespace delete → the first finalizer release.
	HeldFor float64
	// ReleaseSeconds: the first release's start → the last one's end.
	ReleaseSeconds float64
	// DeleteToNamespaceGone: namespace delete → its DELETED.
	DeleteToNamespaceGone float64
	// GoneAfterRelease: the last release's end → the namespace's DELETED.
	GoneAfterRelease float64
	PodEvents        int
	// MarkedToDeleted: for the pods without a finalizer, their first watch
	// event with a deletionTimestamp → their DELETED (both the recorder's clock).
	MarkedToDeleted Spread
	// Deleters are the senders of delete requests on the run's pods, as the
	// API server's audit log has them, most requests first.
	Deleters []Deleter
	// MarkedPerSecond: pods without a finalizer / (namespace delete → the
	// last of them first seen deleting): how fast the namespace controller's
	// deletes of the collection marked them, before kwok deleted them.
	MarkedPerSecond float64
	// Pacers are the senders of writes on the run's pods with their busiest
	// rate against their client's limit; Limits the control plane's.
	Pacers   []Pacer
	Limits   cluster.ControlPlaneLimits
	LimitsOK bool
	Usage    Usage
	UsageOK  bool
	// Replays are kwok's stages played on stale pod states.
	Replays Replays
}

// Spread is a sample's percentiles, in seconds.
type Spread struct {
	N                  int
	P50, P95, P99, Max float64
}

// spreadOf is the nearest-rank percentiles of xs (sorted in place).
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	sort.Float64s(xs)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(xs)))) - 1
		return round3(xs[max(0, min(len(xs)-1, i))])
	}
	return Spread{N: len(xs), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: round3(xs[len(xs)-1])}
}

// Deleter is one sender of delete requests on the run's pods: how many, how
// many removed a pod then (the rest marked one, or found it gone), and at
// what rate between its first and its last.
type Deleter struct {
	Sender    string
	UserAgent string
	Requests  int
	// Collections are DELETEs of a collection (the namespace controller's):
	// one request, many pods marked.
	Collections int
	// Removed: a delete that removed the pod; NotFound: one that found it
	// already gone (404), a request spent on nothing.
	Removed, NotFound int
	PerSecond         float64
	first, last       time.Time
}

// FiguresOf computes the figures from the record (pure).
func FiguresOf(rec *evidence.Record) Figures { return figuresOf(read(rec)) }

func figuresOf(f *facts) Figures {
	fig := Figures{Size: f.size, Usage: f.usage, UsageOK: f.usageOK, PodEvents: f.podEvents, Limits: f.limits, LimitsOK: f.limitsOK}
	fig.Pacers = pacersOf(f)
	fig.Replays = f.replays
	fig.MarkedToDeleted = spreadOf(slices.Clone(f.markedToDeleted))
	for _, d := range f.deletes {
		c := *d
		if span := d.last.Sub(d.first).Seconds(); span > 0 {
			c.PerSecond = round1(float64(d.Requests) / span)
		}
		c.first, c.last = time.Time{}, time.Time{}
		fig.Deleters = append(fig.Deleters, c)
	}
	sort.Slice(fig.Deleters, func(i, j int) bool {
		a, b := fig.Deleters[i], fig.Deleters[j]
		if a.Requests != b.Requests {
			return a.Requests > b.Requests
		}
		return a.Sender < b.Sender
	})
	rate := func(n int, from, to time.Time) float64 {
		if n == 0 || from.IsZero() || !to.After(from) {
			return 0
		}
		return round1(float64(n) / to.Sub(from).Seconds())
	}
	if f.createOK {
		fig.CreatePerSecond = rate(f.size.Pods, f.create.StartedAt, f.lastAdded)
		fig.RunningPerSecond = rate(f.running, f.create.StartedAt, f.lastRunning)
		fig.MostNotRunning = f.mostAhead
	}
	if f.nsDeleteOK {
		fig.DeletedPerSecond = rate(f.plainDeleted, f.nsDelete.StartedAt, f.lastPlainDeleted)
		fig.MarkedPerSecond = rate(len(f.markedToDeleted), f.nsDelete.StartedAt, f.lastMarked)
		fig.DeleteToLastDeleted = since(f.nsDelete.StartedAt, f.lastDeleted)
		fig.HeldFor = since(f.nsDelete.StartedAt, f.firstRel)
		if f.goneOK {
			fig.DeleteToNamespaceGone = since(f.nsDelete.StartedAt, f.gone.ObservedAt)
		}
	}
	fig.ReleaseSeconds = since(f.firstRel, f.lastRel)
	if f.goneOK {
		fig.GoneAfterRelease = since(f.lastRel, f.gone.ObservedAt)
	}
	return fig
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func since(from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() {
		return 0
	}
	return seconds(to.Sub(from))
}

// inflight names an API server inflight limit (0 is none).
func inflight(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// Rows are the figures as a table, for the report and the terminal.
func (fig Figures) Rows() [][]string {
	rows := [][]string{
		{"size", fmt.Sprintf("%d fake nodes, %d pods, %d with a finalizer, stage set %s", fig.Size.FakeNodes, fig.Size.Pods, fig.Size.Finalized(), fig.Size.StageSet)},
		{"create (create batch → last ADDED)", fmt.Sprintf("%.1f pods/s", fig.CreatePerSecond)},
		{"Running (create batch → last pod Running and Ready)", fmt.Sprintf("%.1f pods/s", fig.RunningPerSecond)},
		{"most pods created and not yet Running at once (events.jsonl)", fmt.Sprint(fig.MostNotRunning)},
		{"DELETED (namespace delete → last DELETED of a pod without finalizer)", fmt.Sprintf("%.1f pods/s", fig.DeletedPerSecond)},
		{"namespace delete → last DELETED (finalizer pods after their release)", fmt.Sprintf("%.1f s", fig.DeleteToLastDeleted)},
		{"finalizer pods held (namespace delete → first release)", fmt.Sprintf("%.1f s", fig.HeldFor)},
		{"releasing the finalizers (first → last request)", fmt.Sprintf("%.1f s", fig.ReleaseSeconds)},
		{"namespace delete → namespace gone", fmt.Sprintf("%.1f s", fig.DeleteToNamespaceGone)},
		{"last release → namespace gone", fmt.Sprintf("%.1f s", fig.GoneAfterRelease)},
		{"pod watch events recorded", fmt.Sprint(fig.PodEvents)},
		{"kwok playing stages on stale pod states (events.jsonl; audit log)", fig.Replays.String()},
	}
	if m := fig.MarkedToDeleted; m.N > 0 {
		rows = append(rows, []string{"first seen deleting → DELETED, per pod without a finalizer", fmt.Sprintf("p50 %.1f s, p95 %.1f s, p99 %.1f s, max %.1f s (%d pods)", m.P50, m.P95, m.P99, m.Max, m.N)})
	}
	if fig.MarkedPerSecond > 0 {
		rows = append(rows, []string{"marked (namespace delete → last pod without finalizer first seen deleting)", fmt.Sprintf("%.1f pods/s", fig.MarkedPerSecond)})
	}
	if fig.LimitsOK {
		l := fig.Limits
		rows = append(rows, []string{"control plane's limits (" + orDefault(fig.Size.Limits) + ", from its command lines)",
			fmt.Sprintf("scheduler %g/s (burst %d), controller-manager %g/s (burst %d) per controller; API server in flight %s, mutating %s, priority and fairness %t%s",
				l.Scheduler.QPS, l.Scheduler.Burst, l.ControllerManager.QPS, l.ControllerManager.Burst, inflight(l.MaxRequestsInflight), inflight(l.MaxMutatingRequestsInflight), l.PriorityAndFairness, collectionWorkers(l))})
	}
	for _, p := range fig.Pacers {
		limit := "its limit not known here"
		if n := fig.Limits.KwokPodPlayParallelism; fig.LimitsOK && n > 0 && isKwok(p) {
			limit = fmt.Sprintf("no rate limit: at most %d requests at once (kwok's podPlayStageParallelism); in flight a median %d while any (max %d), %d or more %.0f %% of that time",
				n, p.InFlight.Median, p.InFlight.Max, n, 100*p.InFlight.ShareAtLeast(n))
		}
		if p.LimitKnown {
			limit = fmt.Sprintf("its limit %g/s", p.Limit.QPS)
			if p.AtLimit {
				limit += ": AT ITS LIMIT, which set its pace"
			}
		}
		rows = append(rows, []string{"writes on the run's pods by " + p.Sender + " (" + p.UserAgent + ", audit log)",
			fmt.Sprintf("%d requests, %.1f/s in its busiest %s; %s", p.Requests, p.Busiest, paceWindow, limit)})
	}
	for _, d := range fig.Deleters {
		what := fmt.Sprintf("%d requests at %.1f/s (first → last): %d removed a pod, %d found it already gone (404)", d.Requests, d.PerSecond, d.Removed, d.NotFound)
		if d.Collections > 0 {
			what = fmt.Sprintf("%d requests, %d of them on a collection (each marks many pods)", d.Requests, d.Collections)
		}
		rows = append(rows, []string{"DELETEs of the run's pods by " + d.Sender + " (" + d.UserAgent + ", audit log)", what})
	}
	if fig.UsageOK {
		u := fig.Usage
		rows = append(rows,
			[]string{"termlab process CPU (recorder + the lab's requests)", fmt.Sprintf("%.1f s over %.1f s (%.0f %% of one core)", u.CPUSeconds, u.WallSeconds, 100*u.CPUSeconds/max(u.WallSeconds, 0.001))},
			[]string{"termlab process peak memory (RSS)", fmt.Sprintf("%.0f MiB", u.PeakRSSMiB)},
			[]string{"bytes the recorder wrote", fmt.Sprintf("%.1f MiB (%s)", float64(u.BytesWritten)/(1<<20), files(u.Files))},
		)
	}
	return rows
}

// collectionWorkers says how many deletes of a collection the API server
// runs at once, where the run read it.
func collectionWorkers(l cluster.ControlPlaneLimits) string {
	if l.DeleteCollectionWorkers == 0 {
		return ""
	}
	return fmt.Sprintf(", collection delete workers %d", l.DeleteCollectionWorkers)
}

func files(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for f := range m {
		names = append(names, f)
	}
	// Largest first; equal sizes by name, so the report renders the same every time.
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, f := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f MiB", f, float64(m[f])/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

// Report renders the figures.
func Report(rec *evidence.Record, _ []claims.Claim) []report.Section {
	fig := FiguresOf(rec)
	var b strings.Builder
	b.WriteString("All from this run's record: rates count pods over the time from the lab's request to the last watch event of the kind; the process figures are the whole termlab process (the recorder and the lab's own requests), read with getrusage at the end of the run, and the sizes of the files the recorder appended to.\n\n")
	b.WriteString(report.Table([]string{"figure", "value"}, fig.Rows()))
	return []report.Section{{Title: "Figures", Body: b.String()}}
}
