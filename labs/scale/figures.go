package scale

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
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
	Usage            Usage
	UsageOK          bool
}

// FiguresOf computes the figures from the record (pure).
func FiguresOf(rec *evidence.Record) Figures {
	f := read(rec)
	fig := Figures{Size: f.size, Usage: f.usage, UsageOK: f.usageOK, PodEvents: len(rec.PodEvents)}
	finalized := map[string]bool{}
	if f.before != nil {
		for _, p := range f.before.Pods {
			finalized[p.Name] = hasFinalizer(p.Finalizers)
		}
	}
	var lastAdded, lastRunning, lastPlainDeleted, lastDeleted time.Time
	running := map[string]bool{}
	plain := 0
	for _, e := range rec.PodEvents {
		switch {
		case e.Type == "ADDED":
			lastAdded = later(lastAdded, e.ObservedAt)
		case e.Type == "DELETED":
			lastDeleted = later(lastDeleted, e.ObservedAt)
			if !finalized[e.Name] {
				plain++
				lastPlainDeleted = later(lastPlainDeleted, e.ObservedAt)
			}
		case isRunning(e) && !running[e.Name]:
			running[e.Name] = true
			lastRunning = later(lastRunning, e.ObservedAt)
		}
	}
	rate := func(n int, from, to time.Time) float64 {
		if n == 0 || from.IsZero() || !to.After(from) {
			return 0
		}
		return round1(float64(n) / to.Sub(from).Seconds())
	}
	if f.createOK {
		fig.CreatePerSecond = rate(f.size.Pods, f.create.StartedAt, lastAdded)
		fig.RunningPerSecond = rate(len(running), f.create.StartedAt, lastRunning)
	}
	if f.nsDeleteOK {
		fig.DeletedPerSecond = rate(plain, f.nsDelete.StartedAt, lastPlainDeleted)
		fig.DeleteToLastDeleted = since(f.nsDelete.StartedAt, lastDeleted)
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

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// Rows are the figures as a table, for the report and the terminal.
func (fig Figures) Rows() [][]string {
	rows := [][]string{
		{"size", fmt.Sprintf("%d fake nodes, %d pods, %d with a finalizer, stage set %s", fig.Size.FakeNodes, fig.Size.Pods, fig.Size.Finalized(), fig.Size.StageSet)},
		{"create (create batch → last ADDED)", fmt.Sprintf("%.1f pods/s", fig.CreatePerSecond)},
		{"Running (create batch → last pod Running and Ready)", fmt.Sprintf("%.1f pods/s", fig.RunningPerSecond)},
		{"DELETED (namespace delete → last DELETED of a pod without finalizer)", fmt.Sprintf("%.1f pods/s", fig.DeletedPerSecond)},
		{"namespace delete → last DELETED (finalizer pods after their release)", fmt.Sprintf("%.1f s", fig.DeleteToLastDeleted)},
		{"finalizer pods held (namespace delete → first release)", fmt.Sprintf("%.1f s", fig.HeldFor)},
		{"releasing the finalizers (first → last request)", fmt.Sprintf("%.1f s", fig.ReleaseSeconds)},
		{"namespace delete → namespace gone", fmt.Sprintf("%.1f s", fig.DeleteToNamespaceGone)},
		{"last release → namespace gone", fmt.Sprintf("%.1f s", fig.GoneAfterRelease)},
		{"pod watch events recorded", fmt.Sprint(fig.PodEvents)},
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
