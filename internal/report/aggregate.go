package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// AggregateAbove is the number of pods above which the picture counts pods
// instead of drawing their lanes. At two 40 px lanes a pod, 50 pods are
// already 4,000 px of rows that differ only in their times; what such a run
// shows is the shape of the crowd (how many were in each state when), which
// a stacked count draws at the same size for 300 pods or 50,000. Every
// pod's events stay in events.jsonl.
const AggregateAbove = 50

// Pod states the aggregate counts, bottom to top of the stack.
const (
	StateRunning     = "running"
	StatePending     = "pending"
	StateTerminating = "terminating"
	StateGone        = "gone"
)

var aggregateOrder = []string{StateRunning, StatePending, StateTerminating, StateGone}

var stateStyle = map[string]struct{ fill, legend string }{
	StateRunning:     {kindStyle[KindRunning].fill, "Running (no deletionTimestamp)"},
	StatePending:     {"#90a4ae", "Pending (no deletionTimestamp)"},
	StateTerminating: {kindStyle[KindDeleting].fill, "Terminating: deletionTimestamp set"},
	StateGone:        {"#bdbdbd", "gone: DELETED seen"},
}

// aggregateSamples is how many moments the counts are taken at: about one
// per 3 px of the plot, finer than the eye needs and independent of the
// number of pods.
const aggregateSamples = plotWidth / 3

// Counts is how many pods were in each state at one moment.
type Counts struct {
	At      time.Time
	ByState map[string]int
}

// Aggregate is what the picture of a large run shows.
type Aggregate struct {
	Start, End, Origin time.Time
	Pods               int
	Samples            []Counts
	// Moments are the lab's actions grouped by kind (a kind done many times
	// is one span, first to last) and the moments the lab reported itself.
	Moments []Moment
	// Rate is pods DELETED per second in each of RateBins equal bins.
	Rate    []float64
	BinSize time.Duration
	// MeanRate is the pods DELETED after the first delete per second, up to the last of them.
	MeanRate float64
}

// Moment is a mark on the aggregate: an instant, or a span when To is after From.
type Moment struct {
	From, To time.Time
	Label    string
	Kind     string // the action kind, or "moment" for one the lab reported
}

// RateBins is how many bars the deletion rate is drawn with.
const RateBins = 60

// UseAggregate reports whether the run is drawn as counts.
func UseAggregate(rec *evidence.Record) bool { return len(rec.Pods()) > AggregateAbove }

// BuildAggregate counts the run's pods by state over time, from their watch
// events; moments are the lab's own marks (Run.Moments).
func BuildAggregate(rec *evidence.Record, moments []Marker) Aggregate {
	tl := Timeline{Start: rec.StartedAt, End: rec.EndedAt}
	if tl.End.Before(tl.Start) || tl.End.IsZero() {
		tl.End = lastTime(rec)
	}
	ag := Aggregate{Start: tl.Start, End: tl.End, Origin: tl.Start}
	for _, a := range rec.Actions {
		if strings.HasSuffix(string(a.Kind), "delete") || a.Kind == evidence.ActionDeleteNamespace {
			if ag.Origin.Equal(ag.Start) || a.StartedAt.Before(ag.Origin) {
				ag.Origin = a.StartedAt
			}
		}
	}
	// A change is small (a pod's number, not its name): a run of tens of
	// thousands of pods has hundreds of thousands of them.
	type change struct {
		at    int64 // UnixNano
		pod   int32
		state string
	}
	var changes []change
	var deleted []time.Time
	pods := map[string]int32{} // name/UID → number
	_ = rec.EachPodEvent(func(e evidence.PodEvent) bool {
		key := e.Name + "/" + e.UID
		n, ok := pods[key]
		if !ok {
			n = int32(len(pods))
			pods[key] = n
		}
		st := podStateOf(e)
		changes = append(changes, change{e.ObservedAt.UnixNano(), n, st})
		if st == StateGone {
			deleted = append(deleted, e.ObservedAt)
		}
		return true
	})
	ag.Pods = len(pods)
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].at < changes[j].at })
	span := ag.End.Sub(ag.Start)
	current := make([]string, len(pods)) // "" until the pod's first change
	counts := map[string]int{}
	next := 0
	for i := 0; i <= aggregateSamples; i++ {
		t := ag.Start.Add(time.Duration(float64(span) * float64(i) / aggregateSamples))
		at := t.UnixNano()
		for ; next < len(changes) && changes[next].at <= at; next++ {
			c := changes[next]
			if prev := current[c.pod]; prev != "" {
				counts[prev]--
			}
			current[c.pod] = c.state
			counts[c.state]++
		}
		snapshot := map[string]int{}
		for _, s := range aggregateOrder {
			snapshot[s] = counts[s]
		}
		ag.Samples = append(ag.Samples, Counts{At: t, ByState: snapshot})
	}
	ag.Moments = actionMoments(rec)
	for _, m := range moments {
		ag.Moments = append(ag.Moments, Moment{From: m.At, To: m.At, Label: m.Label, Kind: "moment"})
	}
	sort.SliceStable(ag.Moments, func(i, j int) bool { return ag.Moments[i].From.Before(ag.Moments[j].From) })
	ag.MeanRate = meanRate(deleted, ag.Origin)
	ag.BinSize = span / RateBins
	if ag.BinSize > 0 {
		ag.Rate = make([]float64, RateBins)
		for _, t := range deleted {
			bin := int(t.Sub(ag.Start) / ag.BinSize)
			bin = max(0, min(RateBins-1, bin))
			ag.Rate[bin]++
		}
		for i := range ag.Rate {
			ag.Rate[i] /= ag.BinSize.Seconds()
		}
	}
	return ag
}

// podStateOf is the state one watch event puts its pod in.
func podStateOf(e evidence.PodEvent) string {
	switch {
	case e.Type == "DELETED":
		return StateGone
	case e.DeletionTimestamp != nil:
		return StateTerminating
	case e.Phase == "Running" || e.Phase == "Succeeded" || e.Phase == "Failed":
		return StateRunning
	default:
		return StatePending
	}
}

// actionMoments groups the lab's actions by kind, in order of first use: a
// kind done many times (lab:scale's finalizer releases) is one span.
func actionMoments(rec *evidence.Record) []Moment {
	var out []Moment
	index := map[evidence.ActionKind]int{}
	count := map[evidence.ActionKind]int{}
	for _, a := range rec.Actions {
		count[a.Kind]++
		i, ok := index[a.Kind]
		if !ok {
			index[a.Kind] = len(out)
			out = append(out, Moment{From: a.StartedAt, To: a.StartedAt, Kind: string(a.Kind), Label: string(a.Kind) + " " + a.Target})
			continue
		}
		out[i].From = minTime(out[i].From, a.StartedAt)
		out[i].To = maxTime(out[i].To, a.StartedAt)
	}
	for i := range out {
		if n := count[evidence.ActionKind(out[i].Kind)]; n > 1 {
			out[i].Label = fmt.Sprintf("%s ×%d", out[i].Kind, n)
		}
	}
	return out
}

// Aggregate picture geometry.
const (
	stackTop    = 112
	stackHeight = 260
	rateGap     = 40
	rateHeight  = 90
)

// AggregateSVG draws a large run: the stacked count of pods by state over
// time, the lab's actions and moments as numbered marks, and the deletion
// rate below it.
func AggregateSVG(run Run) []byte {
	ag := BuildAggregate(run.Record, run.Moments)
	span := ag.End.Sub(ag.Start)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		f := float64(t.Sub(ag.Start)) / float64(span)
		return plotLeft + math.Max(0, math.Min(1, f))*plotWidth
	}
	pods := max(1, ag.Pods)
	stackBottom := stackTop + stackHeight
	rateTop := stackBottom + rateGap
	rateBottom := rateTop + rateHeight
	legendTop := rateBottom + 34
	legendRows := (len(aggregateOrder) + 1) / 2
	listTop := legendTop + 20*legendRows + 14
	height := listTop + 18*len(ag.Moments) + 16

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" fill="%s" class="timeline aggregate" data-pods="%d" data-px-per-second="%.3f">`+"\n",
		svgWidth, height, svgWidth, height, textColour, ag.Pods, plotWidth/span.Seconds())
	p(`<title>%s</title>`+"\n", esc(run.Title+" "+run.Summary.RunID+" pods by state"))
	p(`<rect x="0" y="0" width="100%%" height="100%%" fill="%s"/>`+"\n", laneBackground)
	p(`<text x="10" y="22" font-size="16" font-weight="bold">%s — verdict %s</text>`, esc(run.Title), esc(strings.ToUpper(string(run.Summary.Verdict))))
	p(`<text x="%d" y="22" text-anchor="end" fill="%s">run %s</text>`+"\n", svgWidth-20, quietText, esc(run.Summary.RunID))
	p(`<text x="%d" y="44" fill="%s">%s</text>`+"\n", plotLeft, quietText,
		esc(fmt.Sprintf("%d pods by state; seconds from the first delete (0 = %s of the run)", ag.Pods, rel(ag.Start, ag.Origin))))

	// Axis and grid over both charts.
	step := tickStep(span)
	first := -time.Duration(math.Floor(float64(ag.Origin.Sub(ag.Start))/float64(step))) * step
	for t := first; ag.Origin.Add(t).Sub(ag.End) <= 0; t += step {
		px := x(ag.Origin.Add(t))
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, px, stackTop-6, px, rateBottom, gridColour)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", px, stackTop-8, quietText, trimFloat(t.Seconds()))
	}

	// The stack: one area per state, bottom to top.
	y := func(n int) float64 { return float64(stackBottom) - float64(n)/float64(pods)*stackHeight }
	below := make([]int, len(ag.Samples))
	for _, state := range aggregateOrder {
		var top, bottom []string
		peak := 0
		for i, c := range ag.Samples {
			n := c.ByState[state]
			peak = max(peak, n)
			top = append(top, fmt.Sprintf("%.1f,%.1f", x(c.At), y(below[i]+n)))
			bottom = append(bottom, fmt.Sprintf("%.1f,%.1f", x(c.At), y(below[i])))
			below[i] += n
		}
		for l, r := 0, len(bottom)-1; l < r; l, r = l+1, r-1 {
			bottom[l], bottom[r] = bottom[r], bottom[l]
		}
		p(`<polygon class="area area-%s" data-state="%s" data-peak="%d" points="%s" fill="%s"><title>%s, at most %d pods</title></polygon>`+"\n",
			state, state, peak, strings.Join(append(top, bottom...), " "), stateStyle[state].fill, esc(stateStyle[state].legend), peak)
	}
	p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s"/>`+"\n", plotLeft, stackTop, plotWidth, stackHeight, laneBorder)
	p(`<text x="%d" y="%d" text-anchor="end">%d pods</text><text x="%d" y="%d" text-anchor="end">0</text>`+"\n", plotLeft-6, stackTop+10, ag.Pods, plotLeft-6, stackBottom)

	// The deletion rate: DELETED events per second, one bar per bin.
	peakRate := 0.0
	for _, r := range ag.Rate {
		peakRate = math.Max(peakRate, r)
	}
	p(`<g class="rate" data-peak-per-second="%.1f">`, peakRate)
	p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s"/>`, plotLeft, rateTop, plotWidth, rateHeight, laneBorder)
	p(`<text x="%d" y="%d" text-anchor="end">%s/s</text><text x="%d" y="%d" text-anchor="end">0</text>`, plotLeft-6, rateTop+10, trimFloat(peakRate), plotLeft-6, rateBottom)
	p(`<text x="10" y="%d" font-weight="bold">deletion rate</text><text x="10" y="%d" fill="%s">pods DELETED per second</text>`, rateTop+30, rateTop+46, quietText)
	p(`<text class="rate-mean" data-per-second="%.1f" x="10" y="%d" fill="%s">%s</text>`+"\n", ag.MeanRate, rateTop+62, quietText, esc(fmt.Sprintf("mean %s/s after the delete", trimFloat1(ag.MeanRate))))
	for i, r := range ag.Rate {
		if r == 0 || peakRate == 0 {
			continue
		}
		from := ag.Start.Add(time.Duration(i) * ag.BinSize)
		h := r / peakRate * float64(rateHeight-4)
		p(`<rect class="rate-bar" %s data-per-second="%.1f" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%.1f pods/s</title></rect>`+"\n",
			aggregateSpan(ag, from, from.Add(ag.BinSize)), r, x(from), float64(rateBottom)-h, math.Max(1, x(from.Add(ag.BinSize))-x(from)-1), h, stateStyle[StateGone].fill, r)
	}
	p("</g>\n")

	// The lab's actions and moments: numbered lines (a span for a repeated action).
	for i, m := range ag.Moments {
		x0, x1 := x(m.From), x(m.To)
		name := fmt.Sprint(i + 1)
		p(`<g class="moment" data-kind="%s" %s>`, esc(m.Kind), aggregateSpan(ag, m.From, m.To))
		if x1-x0 >= 2 {
			p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.15"/>`, x0, stackTop, x1-x0, rateBottom-stackTop, markerColour)
		}
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="4,3"/>`, x0, stackTop-20, x0, rateBottom, markerColour)
		badgeY := stackTop - 40 - 20*(i%2) // alternate rows, so neighbours do not hide each other
		p(`<rect x="%.1f" y="%d" width="18" height="16" rx="8" fill="%s"/><text x="%.1f" y="%d" fill="#ffffff" text-anchor="middle" font-size="10">%s</text></g>`+"\n",
			x0-9, badgeY, markerColour, x0, badgeY+12, name)
	}

	for i, state := range aggregateOrder {
		lx, ly := 10+(i%2)*490, legendTop+(i/2)*20
		p(`<rect x="%d" y="%d" width="16" height="14" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, ly, stateStyle[state].fill, lx+22, ly+11, esc(stateStyle[state].legend))
	}
	for i, m := range ag.Moments {
		when := fmt.Sprintf("%+.1f s", m.From.Sub(ag.Origin).Seconds())
		if m.To.After(m.From) {
			when = fmt.Sprintf("%+.1f → %+.1f s", m.From.Sub(ag.Origin).Seconds(), m.To.Sub(ag.Origin).Seconds())
		}
		p(`<text x="10" y="%d">%s</text>`+"\n", listTop+i*18, esc(fmt.Sprintf("%d.  %s:  %s", i+1, when, m.Label)))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func aggregateSpan(ag Aggregate, from, to time.Time) string {
	return fmt.Sprintf(`data-from="%.3f" data-to="%.3f"`, from.Sub(ag.Origin).Seconds(), to.Sub(ag.Origin).Seconds())
}

// meanRate: DELETED events after origin per second, from origin to the last one.
func meanRate(deleted []time.Time, origin time.Time) float64 {
	n, last := 0, origin
	for _, t := range deleted {
		if t.After(origin) {
			n++
			last = maxTime(last, t)
		}
	}
	if n == 0 || !last.After(origin) {
		return 0
	}
	return float64(n) / last.Sub(origin).Seconds()
}

func trimFloat1(f float64) string { return fmt.Sprintf("%.1f", f) }
