package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// style is how one meaning is drawn. Every meaning has its own colour; fills
// keep at least 3:1 contrast against the lane background and against the
// text written on them (TestPaletteContrast).
type style struct {
	fill   string
	text   string // colour of a label written on the fill
	thin   bool   // drawn as a thin bar: an absence (object gone, container removed)
	legend string
}

var kindStyle = map[string]style{
	KindExists:         {"#1565c0", "#ffffff", false, "API: object exists"},
	KindDeleting:       {"#b35900", "#ffffff", false, "API: deletionTimestamp set"},
	KindTerminated:     {"#6a1b9a", "#ffffff", false, "API: deletionTimestamp set, container reported terminated"},
	KindGone:           {"#707070", "#ffffff", true, "API: object gone"},
	KindRunning:        {"#2e7d32", "#ffffff", false, "crictl: container running"},
	KindExited:         {"#455a64", "#ffffff", false, "crictl: container exited (exit code)"},
	KindRemoved:        {"#8d5a3b", "#ffffff", true, "crictl: container removed"},
	KindKubeletStopped: {"#212121", "#ffffff", false, "node: kubelet stopped"},
	KindReady:          {"#00796b", "#ffffff", false, "node: Ready=True"},
	KindNotReady:       {"#c2185b", "#ffffff", false, "node: NotReady"},
	// The traffic picture's (TrafficSVG).
	KindEndpointReady:       {"#283593", "#ffffff", false, "EndpointSlice: ready (new connections sent to it)"},
	KindEndpointTerminating: {"#8c6d00", "#ffffff", false, "EndpointSlice: ready=false, terminating, serving"},
	KindEndpointNotServing:  {"#ad1457", "#ffffff", false, "EndpointSlice: ready=false, not serving"},
	KindEndpointRemoved:     {"#6d6d6d", "#ffffff", true, "EndpointSlice: the pod's endpoint removed"},
	KindRulesForward:        {"#33691e", "#ffffff", false, "client node's rules forward new connections to the pod"},
	KindRulesDropped:        {"#5c5c5c", "#ffffff", true, "client node's rules no longer forward to the pod"},
	KindPreStop:             {"#4e342e", "#ffffff", false, "preStop hook running (dashed: not logged, its known length)"},
}

var legendOrder = []string{KindExists, KindDeleting, KindTerminated, KindGone, KindRunning, KindExited, KindRemoved, KindKubeletStopped, KindReady, KindNotReady}

// markStyle is how a moment is drawn: a symbol in the gap above its lane.
var markStyle = map[string]struct{ colour, symbol, legend string }{
	MarkSIGTERM:           {"#e65100", "▼", "SIGTERM logged by the workload"},
	MarkSIGKILL:           {"#000000", "✕", "SIGKILL: exit code 137 (crictl)"},
	MarkFinalizersEmptied: {"#827717", "◆", "finalizers emptied, not by the lab"},
}

var markOrder = []string{MarkSIGTERM, MarkSIGKILL, MarkFinalizersEmptied}

// Colours of the picture itself, also checked for contrast.
const (
	laneBackground = "#ffffff"
	laneBorder     = "#8a8a8a"
	textColour     = "#1a1a1a"
	quietText      = "#595959" // axis, notes, run id
	orphanColour   = "#d50000"
	overlapColour  = "#4a148c"
	writeColour    = "#1a1a1a"
	markerColour   = "#333333"
	momentColour   = "#0277bd" // the lab's own moments: numbered circles
	gridColour     = "#e0e0e0" // grid lines only: decoration, not information
)

const (
	svgWidth    = 1000
	labelWidth  = 260
	plotLeft    = labelWidth + 10
	plotWidth   = svgWidth - plotLeft - 20
	laneHeight  = 24
	laneGap     = 16
	topMargin   = 92
	charWidth   = 6.5 // average width of a 12 px sans-serif character, for fitting labels
	clusterNear = 16  // markers closer than this (px) share one numbered badge
)

// SVG renders the timeline (a run of more than AggregateAbove pods: the
// aggregate, AggregateSVG): one row per lane, the lab's actions as numbered
// vertical lines, signals as marks, and every interval where a container ran
// with its API object gone hatched over that pod's lanes.
func SVG(run Run) []byte {
	if UseAggregate(run.Record) {
		return AggregateSVG(run)
	}
	if tp := run.Traffic(); tp != nil {
		return TrafficSVG(run, *tp)
	}
	tl := BuildTimeline(run.Record, run.Summary.Claims)
	tl.AddMoments(run.Moments)
	span := tl.End.Sub(tl.Start)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		f := float64(t.Sub(tl.Start)) / float64(span)
		return plotLeft + math.Max(0, math.Min(1, f))*plotWidth
	}
	laneY := func(i int) int { return topMargin + i*(laneHeight+laneGap) }
	lanesBottom := laneY(len(tl.Lanes)) - laneGap
	clusters := clusterMarkers(tl.Markers, x)
	legend := usedLegend(tl)
	legendTop := lanesBottom + 30
	legendRows := (len(legend) + 1) / 2
	actionLines := append(actionList(tl, clusters), momentList(tl)...)
	height := legendTop + 20*legendRows + 14 + 18*len(actionLines) + 16

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	// data-px-per-second lets a test turn drawn widths back into seconds.
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" fill="%s" class="timeline" data-px-per-second="%.3f">`+"\n", svgWidth, height, svgWidth, height, textColour, plotWidth/span.Seconds())
	p(`<title>%s</title>`+"\n", esc(run.Title+" "+run.Summary.RunID+" timeline"))
	p(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="%s" stroke-width="2"/></pattern></defs>`+"\n", orphanColour)
	p(`<rect x="0" y="0" width="100%%" height="100%%" fill="%s"/>`+"\n", laneBackground)
	p(`<text x="10" y="22" font-size="16" font-weight="bold">%s — verdict %s</text>`, esc(run.Title), esc(strings.ToUpper(string(run.Summary.Verdict))))
	p(`<text x="%d" y="22" text-anchor="end" fill="%s">run %s</text>`+"\n", svgWidth-20, quietText, esc(run.Summary.RunID))

	// Time axis: zero at the first delete.
	originLabel := "seconds from the start of the run"
	if !tl.Origin.Equal(tl.Start) {
		originLabel = fmt.Sprintf("seconds from the first delete (0 = %s of the run)", rel(tl.Start, tl.Origin))
	}
	p(`<text x="%d" y="44" fill="%s">%s</text>`+"\n", plotLeft, quietText, esc(originLabel))
	step := tickStep(span)
	first := -time.Duration(math.Floor(float64(tl.Origin.Sub(tl.Start))/float64(step))) * step
	for t := first; tl.Origin.Add(t).Sub(tl.End) <= 0; t += step {
		px := x(tl.Origin.Add(t))
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, px, topMargin-6, px, lanesBottom, gridColour)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", px, topMargin-8, quietText, trimFloat(t.Seconds()))
	}

	// Lanes.
	for i, lane := range tl.Lanes {
		y := laneY(i)
		p(`<g class="lane lane-%s" data-lane="%d" data-pod="%s" data-uid="%s" data-incarnation="%d" data-node="%s">`+"\n", lane.Kind, i, esc(lane.Pod), esc(lane.UID), lane.Incarnation, esc(lane.Node))
		p(`<text x="10" y="%d">%s</text>`+"\n", y+laneHeight/2+4, esc(fit(lane.Label, labelWidth-10)))
		p(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s"/>`+"\n", plotLeft, y, plotWidth, laneHeight, laneBackground, laneBorder)
		if len(lane.Writes) > 0 {
			drawWrites(p, lane, y, x, func(t time.Time) string { return axis(tl, t) })
		} else if len(lane.Segments) == 0 {
			p(`<text x="%d" y="%d" fill="%s" font-style="italic">%s</text>`+"\n", plotLeft+8, y+laneHeight/2+4, quietText, esc(fit(lane.Note, plotWidth-16)))
		}
		for _, s := range lane.Segments {
			st := kindStyle[s.Kind]
			x0, x1 := x(s.From), x(s.To)
			w := math.Max(1.5, x1-x0)
			sy, sh := y+2, laneHeight-4
			if st.thin {
				sy, sh = y+laneHeight/2-2, 4
			}
			p(`<rect class="segment segment-%s" %s x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				s.Kind, spanData(tl, s.From, s.To), x0, sy, w, sh, st.fill, esc(fmt.Sprintf("%s: %s → %s", st.legend, axis(tl, s.From), axis(tl, s.To))))
			if s.Label == "" || st.thin || textWidth(s.Label)+8 > w {
				continue
			}
			p(`<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x0+4, y+laneHeight/2+4, st.text, esc(s.Label))
		}
		b.WriteString("</g>\n")
	}

	// Orphan intervals: hatched over the lanes of their incarnation.
	for _, o := range tl.Orphans {
		x0, x1 := x(o.From), x(o.To)
		y0, y1 := laneY(o.Top)-3, laneY(o.Bottom)+laneHeight+3
		p(`<rect class="orphan" %s x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#hatch)" fill-opacity="0.35" stroke="%s" stroke-width="2"><title>%s</title></rect>`+"\n",
			spanData(tl, o.From, o.To), x0, y0, math.Max(1, x1-x0), y1-y0, orphanColour, esc(o.Label))
		// Inside the band if it fits, else left of it (a short band ends near the picture's edge).
		length := FormatSeconds(o.Seconds())
		text := fmt.Sprintf("orphan for %s (%s → %s s): container running, its API object gone", length, axisNumber(tl, o.From), axisNumber(tl, o.To))
		tx, anchor := x0+4, "start"
		if textWidth(text)+8 > x1-x0 {
			text = fmt.Sprintf("orphan for %s", length)
			if textWidth(text)+8 > x1-x0 {
				text += " ▸"
				tx, anchor = x0-4, "end"
			}
		}
		p(`<text class="orphan-label" x="%.1f" y="%d" text-anchor="%s" fill="%s" font-weight="bold" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n", tx, laneY(o.Top)+laneHeight/2-2, anchor, orphanColour, laneBackground, esc(text))
	}

	// Overlaps: two incarnations' containers running at once, outlined
	// across their lanes and labelled with the length in the gap below.
	for _, o := range tl.Overlaps {
		x0, x1 := x(o.From), x(o.To)
		y0, y1 := laneY(o.Top)-2, laneY(o.Bottom)+laneHeight+2
		p(`<rect class="overlap" %s data-seconds="%.3f" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.12" stroke="%s" stroke-width="2" stroke-dasharray="6,3"><title>%s</title></rect>`+"\n",
			spanData(tl, o.From, o.To), o.Seconds(), x0, y0, math.Max(1, x1-x0), y1-y0, overlapColour, overlapColour, esc(o.Label))
		tx, anchor := (x0+x1)/2, "middle"
		if tx+textWidth(o.Label)/2 > svgWidth-10 {
			tx, anchor = x1, "end"
		}
		p(`<text class="overlap-label" data-seconds="%.3f" x="%.1f" y="%d" text-anchor="%s" fill="%s" font-weight="bold" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
			o.Seconds(), tx, y1+12, anchor, overlapColour, laneBackground, esc(o.Label))
	}

	// Marks: a symbol in the gap above the lane, a line through it.
	for _, m := range tl.Marks {
		ms := markStyle[m.Kind]
		px, y := x(m.At), laneY(m.Lane)
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="4"/><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`,
			px, y-4, px, y+laneHeight, laneBackground, px, y-4, px, y+laneHeight, ms.colour)
		p(`<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="%s"><title>%s at %s</title>%s</text>`+"\n", px, y-4, ms.colour, esc(ms.legend), esc(axis(tl, m.At)), ms.symbol)
	}
	// The gap between SIGTERM and SIGKILL on one lane is the kubelet's grace: say it.
	for _, term := range tl.Marks {
		if term.Kind != MarkSIGTERM {
			continue
		}
		for _, kill := range tl.Marks {
			if kill.Kind != MarkSIGKILL || kill.Lane != term.Lane {
				continue
			}
			x0, x1, y := x(term.At), x(kill.At), laneY(term.Lane)-8
			text := fmt.Sprintf("SIGKILL %s after SIGTERM", FormatSeconds(kill.At.Sub(term.At).Seconds()))
			if textWidth(text) > x1-x0-16 {
				text = FormatSeconds(kill.At.Sub(term.At).Seconds())
			}
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, x0+6, y, x1-6, y, textColour)
			p(`<text x="%.1f" y="%d" text-anchor="middle" font-size="11" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n", (x0+x1)/2, y+4, laneBackground, esc(text))
		}
	}

	// The lab's moments: a numbered badge on the lower edge of their lane
	// (clear of the marks above it), keyed below the legend.
	for _, m := range tl.Moments {
		px := x(m.At)
		y0, y1 := topMargin-4, lanesBottom
		cy := y1 + 8
		if m.Lane >= 0 {
			y0, y1 = laneY(m.Lane), laneY(m.Lane)+laneHeight
			cy = y1
		}
		p(`<g class="moment" data-n="%d" data-kind="%s" data-pod="%s" data-container="%s" data-lane="%d" data-at="%.3f"><title>%s</title>`,
			m.N, esc(m.Kind), esc(m.Pod), esc(m.Container), m.Lane, m.At.Sub(tl.Origin).Seconds(), esc(fmt.Sprintf("%d. %s: %s", m.N, axis(tl, m.At), m.Label)))
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`, px, y0, px, y1, momentColour)
		p(`<circle cx="%.1f" cy="%d" r="8" fill="%s" stroke="%s" stroke-width="1.5"/><text x="%.1f" y="%d" text-anchor="middle" font-size="10" font-weight="bold" fill="#ffffff">%d</text></g>`+"\n",
			px, cy, momentColour, laneBackground, px, cy+4, m.N)
	}

	// Action markers, clustered.
	for _, c := range clusters {
		for _, i := range c.members {
			px := x(tl.Markers[i].At)
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="3,3"/>`, px, topMargin-4, px, lanesBottom, markerColour)
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, c.x, topMargin-20, px, topMargin-4, markerColour)
		}
		w := math.Max(18, textWidth(c.name)*0.85+10)
		p(`<rect x="%.1f" y="%d" width="%.1f" height="16" rx="8" fill="%s"/><text x="%.1f" y="%d" fill="#ffffff" text-anchor="middle" font-size="10">%s</text>`+"\n",
			c.x-w/2, topMargin-36, w, markerColour, c.x, topMargin-24, esc(c.name))
	}

	// Legend: what this picture uses.
	for i, item := range legend {
		lx := 10 + (i%2)*490
		ly := legendTop + (i/2)*20
		p(`%s<text x="%d" y="%d">%s</text>`+"\n", item.swatch(lx, ly), lx+22, ly+11, esc(item.text))
	}
	ly := legendTop + 20*legendRows + 14
	for i, line := range actionLines {
		p(`<text x="10" y="%d">%s</text>`+"\n", ly+i*18, esc(line))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// drawWrites draws a ledger lane: one tick per write, incarnation #1's in
// the lane's upper half and #2's in its lower half, so two writers at once
// read as two rows of ticks.
func drawWrites(p func(string, ...any), lane Lane, y int, x func(time.Time) float64, at func(time.Time) string) {
	rows := 1
	for _, w := range lane.Writes {
		rows = max(rows, w.Incarnation)
	}
	h := float64(laneHeight-4) / float64(rows)
	for _, w := range lane.Writes {
		top := float64(y+2) + float64(w.Incarnation-1)*h
		p(`<rect class="write" data-incarnation="%d" x="%.1f" y="%.1f" width="1.5" height="%.1f" fill="%s"><title>write of #%d at %s</title></rect>`+"\n",
			w.Incarnation, x(w.At), top+1, h-2, writeColour, w.Incarnation, at(w.At))
	}
}

type legendItem struct {
	text     string
	kind     string // a segment kind, or
	mark     string // a mark kind, or
	swatchOf string
}

func (l legendItem) swatch(x, y int) string {
	switch {
	case l.kind != "":
		st := kindStyle[l.kind]
		if st.thin {
			return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="4" fill="%s"/>`, x, y+5, st.fill)
		}
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" fill="%s"/>`, x, y, st.fill)
	case l.mark != "":
		ms := markStyle[l.mark]
		return fmt.Sprintf(`<text x="%d" y="%d" text-anchor="middle" fill="%s">%s</text>`, x+8, y+11, ms.colour, ms.symbol)
	case l.swatchOf == "none":
		return ""
	case l.swatchOf == "write":
		return fmt.Sprintf(`<rect x="%d" y="%d" width="2" height="6" fill="%s"/><rect x="%d" y="%d" width="2" height="6" fill="%s"/><rect x="%d" y="%d" width="2" height="6" fill="%s"/>`,
			x+3, y, writeColour, x+9, y+8, writeColour, x+13, y, writeColour)
	case l.swatchOf == "overlap":
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" fill="%s" fill-opacity="0.12" stroke="%s" stroke-width="2" stroke-dasharray="4,2"/>`, x, y, overlapColour, overlapColour)
	case l.swatchOf == "dropped":
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" fill="url(#dropped)" stroke="%s"/>`, x, y, droppedColour)
	case l.swatchOf == "window":
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" fill="%s" fill-opacity="0.10" stroke="%s" stroke-width="1.5" stroke-dasharray="4,2"/>`, x, y, windowColour, windowColour)
	case strings.HasPrefix(l.swatchOf, "window-"):
		return fmt.Sprintf(`<rect x="%d" y="%d" width="6" height="14" fill="%s"/>`, x+5, y, windowStyle[strings.TrimPrefix(l.swatchOf, "window-")].fill)
	case l.swatchOf == "moment":
		return fmt.Sprintf(`<circle cx="%d" cy="%d" r="7" fill="%s"/>`, x+8, y+7, momentColour)
	case l.swatchOf == "orphan":
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" fill="url(#hatch)" stroke="%s" stroke-width="2"/>`, x, y, orphanColour)
	default:
		return fmt.Sprintf(`<rect x="%d" y="%d" width="16" height="14" rx="7" fill="%s"/>`, x, y, markerColour)
	}
}

// usedLegend lists what the picture draws, in a fixed order.
func usedLegend(tl Timeline) []legendItem {
	used := map[string]bool{}
	for _, l := range tl.Lanes {
		for _, s := range l.Segments {
			used[s.Kind] = true
		}
	}
	for _, m := range tl.Marks {
		used[m.Kind] = true
	}
	var out []legendItem
	for _, k := range legendOrder {
		if used[k] {
			out = append(out, legendItem{text: kindStyle[k].legend, kind: k})
		}
	}
	for _, k := range markOrder {
		if used[k] {
			out = append(out, legendItem{text: markStyle[k].legend, mark: k})
		}
	}
	if len(tl.Orphans) > 0 {
		out = append(out, legendItem{text: "orphan: container running while its own API object is gone", swatchOf: "orphan"})
	}
	if len(tl.Overlaps) > 0 {
		out = append(out, legendItem{text: "two incarnations of one pod name running at once", swatchOf: "overlap"})
	}
	if slices.ContainsFunc(tl.Lanes, func(l Lane) bool { return len(l.Writes) > 0 }) {
		out = append(out, legendItem{text: "ledger: a tick per write received; upper row #1, lower row #2", swatchOf: "write"})
	}
	if slices.ContainsFunc(tl.Lanes, func(l Lane) bool { return l.Fake }) {
		out = append(out, legendItem{text: "kwok fake-node pod: no container exists, so no crictl lane", swatchOf: "none"})
	}
	if len(tl.Markers) > 0 {
		out = append(out, legendItem{text: "the lab's requests and node commands (numbered below)", swatchOf: "marker"})
	}
	if len(tl.Moments) > 0 {
		out = append(out, legendItem{text: "what the lab's record shows happened (numbered circles, below)", swatchOf: "moment"})
	}
	return out
}

// momentList is the key to the moments' badges, one line each.
func momentList(tl Timeline) []string {
	var out []string
	for _, m := range tl.Moments {
		out = append(out, fmt.Sprintf("(%d)  %s s:  %s", m.N, axisNumber(tl, m.At), m.Label))
	}
	return out
}

type cluster struct {
	members []int
	x       float64
	name    string
}

// clusterMarkers groups markers that would overlap into one numbered badge
// ("9–16"), placed where its first member is, kept inside the picture.
func clusterMarkers(ms []Marker, x func(time.Time) float64) []cluster {
	idx := make([]int, len(ms))
	for i := range ms {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ms[idx[a]].At.Before(ms[idx[b]].At) })
	var out []cluster
	for _, i := range idx {
		px := x(ms[i].At)
		if n := len(out); n > 0 && px-x(ms[out[n-1].members[len(out[n-1].members)-1]].At) < clusterNear {
			out[n-1].members = append(out[n-1].members, i)
			continue
		}
		out = append(out, cluster{members: []int{i}, x: px})
	}
	prevRight := -100.0
	for k := range out {
		c := &out[k]
		c.name = fmt.Sprint(c.members[0] + 1)
		if len(c.members) > 1 {
			c.name = fmt.Sprintf("%d–%d", c.members[0]+1, c.members[len(c.members)-1]+1)
		}
		w := math.Max(18, textWidth(c.name)*0.85+10)
		c.x = math.Max(c.x, prevRight+w/2+2)
		c.x = math.Min(c.x, svgWidth-4-w/2)
		prevRight = c.x + w/2
	}
	return out
}

// actionList is the key to the badges: one line per badge, wrapped.
func actionList(tl Timeline, clusters []cluster) []string {
	var out []string
	for _, c := range clusters {
		first := tl.Markers[c.members[0]]
		var what []string
		for _, i := range c.members {
			what = append(what, tl.Markers[i].Label)
		}
		line := fmt.Sprintf("%s.  %s s:  %s", c.name, axisNumber(tl, first.At), strings.Join(what, ", "))
		maxChars := int(math.Floor((svgWidth - 30) / charWidth))
		for len(line) > maxChars {
			cut := strings.LastIndex(line[:maxChars], ", ")
			if cut < 0 {
				break
			}
			out = append(out, line[:cut+1])
			line = "      " + line[cut+2:]
		}
		out = append(out, line)
	}
	return out
}

// spanData are an interval's data- attributes: seconds from the axis' zero,
// for tests and browsers to read what a shape stands for.
func spanData(tl Timeline, from, to time.Time) string {
	return fmt.Sprintf(`data-from="%.3f" data-to="%.3f"`, from.Sub(tl.Origin).Seconds(), to.Sub(tl.Origin).Seconds())
}

// axis is t on the picture's axis, e.g. "+2.3 s" after the first delete.
func axis(tl Timeline, t time.Time) string { return axisNumber(tl, t) + " s" }

func axisNumber(tl Timeline, t time.Time) string {
	return fmt.Sprintf("%+.1f", t.Sub(tl.Origin).Seconds())
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

func textWidth(s string) float64 { return float64(len([]rune(s))) * charWidth }

// fit shortens s with an ellipsis to fit width pixels.
func fit(s string, width int) string {
	r := []rune(s)
	max := int(float64(width) / charWidth)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}
