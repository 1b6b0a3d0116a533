package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// Colours per segment kind, and the legend's words for them.
var kindStyle = map[string]struct{ fill, legend string }{
	KindExists:         {"#4a90d9", "API object exists"},
	KindDeleting:       {"#f0ad4e", "API object has deletionTimestamp"},
	KindGone:           {"#e6e6e6", "API object gone"},
	KindRunning:        {"#3c9a3c", "container running on the node"},
	KindExited:         {"#9e9e9e", "container exited"},
	KindRemoved:        {"#f4f4f4", "container removed from the node"},
	KindKubeletStopped: {"#c9302c", "kubelet stopped"},
	KindNotReady:       {"#f2b8b5", "node NotReady"},
}

var legendOrder = []string{KindExists, KindDeleting, KindGone, KindRunning, KindExited, KindRemoved, KindKubeletStopped, KindNotReady}

const (
	svgWidth   = 1000
	labelWidth = 250
	plotWidth  = svgWidth - labelWidth - 30
	laneHeight = 26
	laneGap    = 8
	topMargin  = 58
)

// SVG renders the timeline: one row per lane, the lab's actions as numbered
// vertical lines, and every interval where a container ran with its API
// object gone outlined in red and labelled, so the orphan shows at a glance.
func SVG(run Run) []byte {
	tl := BuildTimeline(run.Record)
	span := tl.End.Sub(tl.Start)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		f := float64(t.Sub(tl.Start)) / float64(span)
		return labelWidth + math.Max(0, math.Min(1, f))*plotWidth
	}
	lanesBottom := topMargin + len(tl.Lanes)*(laneHeight+laneGap)
	legendTop := lanesBottom + 40
	height := legendTop + 22*((len(legendOrder)+2)/3) + 20*len(tl.Markers) + 40

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(run.Title+" "+run.Summary.RunID+" timeline"))
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#c9302c" stroke-width="2"/></pattern></defs>` + "\n")
	b.WriteString(`<rect x="0" y="0" width="100%" height="100%" fill="#ffffff"/>` + "\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">%s — run %s — verdict %s</text>`+"\n", esc(run.Title), esc(run.Summary.RunID), esc(strings.ToUpper(string(run.Summary.Verdict))))

	// Time axis.
	step := tickStep(span)
	for t := time.Duration(0); t <= span; t += step {
		px := labelWidth + float64(t)/float64(span)*plotWidth
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`, px, topMargin-6, px, lanesBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%ss</text>`+"\n", px, topMargin-10, trimFloat(t.Seconds()))
	}

	// Lanes.
	for i, lane := range tl.Lanes {
		y := topMargin + i*(laneHeight+laneGap)
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y+laneHeight/2+4, esc(lane.Label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#cccccc"/>`+"\n", labelWidth, y, plotWidth, laneHeight)
		if len(lane.Segments) == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#777" font-style="italic">%s</text>`+"\n", labelWidth+8, y+laneHeight/2+4, esc(truncate(lane.Note, 110)))
			continue
		}
		for _, s := range lane.Segments {
			x0, x1 := x(s.From), x(s.To)
			w := math.Max(1, x1-x0)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				x0, y+2, w, laneHeight-4, kindStyle[s.Kind].fill, esc(fmt.Sprintf("%s: %s → %s", kindStyle[s.Kind].legend, rel(tl.Start, s.From), rel(tl.Start, s.To))))
			if w > 60 && s.Label != "" {
				fill := "#ffffff"
				if s.Kind == KindGone || s.Kind == KindRemoved || s.Kind == KindNotReady || s.Kind == KindDeleting {
					fill = "#333333"
				}
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x0+4, y+laneHeight/2+4, fill, esc(s.Label))
			}
		}
	}

	// Orphan intervals, across all lanes.
	for _, o := range tl.Orphans {
		x0, x1 := x(o.From), x(o.To)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#hatch)" fill-opacity="0.25" stroke="#c9302c" stroke-width="2"><title>%s</title></rect>`+"\n",
			x0, topMargin-4, math.Max(1, x1-x0), lanesBottom-topMargin, esc(o.Label))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#c9302c" font-weight="bold">ORPHAN %s: %s</text>`+"\n", x0+4, lanesBottom+14, esc(rel(tl.Start, o.From)+"–"+rel(tl.Start, o.To)), esc(o.Label))
	}

	// Action markers.
	prevCircle := -100.0
	for i, m := range tl.Markers {
		px := x(m.At)
		cx := math.Max(px, prevCircle+17) // markers close in time get their numbers side by side
		prevCircle = cx
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333" stroke-dasharray="3,3"/>`, px, topMargin-4, px, lanesBottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`, cx, topMargin-18, px, topMargin-4)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%d" r="8" fill="#333"/><text x="%.1f" y="%d" fill="#fff" text-anchor="middle" font-size="10">%d</text>`+"\n", cx, topMargin-26, cx, topMargin-22, i+1)
	}

	// Legend.
	for i, k := range legendOrder {
		lx := 10 + (i%3)*320
		ly := legendTop + (i/3)*22
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="14" fill="%s" stroke="#999"/><text x="%d" y="%d">%s</text>`+"\n", lx, ly, kindStyle[k].fill, lx+20, ly+11, esc(kindStyle[k].legend))
	}
	ly := legendTop + 22*((len(legendOrder)+2)/3)
	fmt.Fprintf(&b, `<rect x="10" y="%d" width="14" height="14" fill="url(#hatch)" stroke="#c9302c" stroke-width="2"/><text x="30" y="%d">orphan: container running while its API object is gone</text>`+"\n", ly, ly+11)
	for i, m := range tl.Markers {
		fmt.Fprintf(&b, `<text x="10" y="%d">%d. %s %s</text>`+"\n", ly+36+i*20, i+1, esc(rel(tl.Start, m.At)), esc(m.Label))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// tickStep picks an axis step giving 5–12 ticks.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute} {
		if span/s <= 12 {
			return s
		}
	}
	return 10 * time.Minute
}

// rel is t as seconds after start, e.g. "+12.3s".
func rel(start, t time.Time) string { return fmt.Sprintf("+%.1fs", t.Sub(start).Seconds()) }

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.0f", f), ".0") }

func esc(s string) string { return html.EscapeString(s) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
