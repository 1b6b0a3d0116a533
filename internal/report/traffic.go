package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// TrafficPicture is the picture of Services whose pods a lab deleted while
// a client sent them requests (lab:graceful). Its answer is a table of
// Service × failed requests × why, so it draws one group of lanes per
// Service, each on its own pod's clock (0: that pod's delete): the
// endpoint's conditions in the EndpointSlice, the client node's rules, the
// container (preStop, SIGTERM, exit) and the failed requests, each placed
// in the window the lab's claims attribute it to. The lab builds it from
// the facts its claims decide on; a Section carries it.
type TrafficPicture struct {
	// ClientNode is the node the client ran on: the rules drawn are its.
	ClientNode string
	Services   []ServiceTimeline
}

// ServiceTimeline is one Service and its deleted pod.
type ServiceTimeline struct {
	// Name is the Service's (and its deleted pod's) name; Title what the
	// pod does on its way out.
	Name, Title string
	// Deleted is the zero of this Service's clock: its pod's delete.
	Deleted time.Time
	// Endpoint is the pod's endpoint in the Service's EndpointSlice over
	// time: segments of the Endpoint* kinds.
	Endpoint []Segment
	// DroppedFrom and DroppedTo bound when the client node's rules stopped
	// forwarding new connections to the pod (DroppedTo zero: never seen).
	DroppedFrom, DroppedTo time.Time
	// Started and Exited are the container's start and exit (zero: not
	// recorded), ExitCode its exit code (nil: unknown).
	Started, Exited time.Time
	ExitCode        *int32
	// PreStopFrom/To is the preStop hook's run; PreStopLogged is false for a
	// hook that cannot log (the native sleep), whose span is its known
	// length ending at the SIGTERM.
	PreStopFrom, PreStopTo time.Time
	PreStopLogged          bool
	// SIGTERM is when the workload logged it; StoppedAccepting when the
	// process stopped accepting connections (its SIGTERM, or its exit when
	// it ignores SIGTERM).
	SIGTERM, StoppedAccepting time.Time
	// Requests is how many requests the client sent to the Service.
	Requests int
	Failed   []FailedRequest
}

// FailedRequest is one request of the client that failed.
type FailedRequest struct {
	Start, End time.Time
	Outcome    string
	// Window is one of the Window* kinds; Why the window as the lab's
	// claims name it.
	Window, Why string
}

// The windows a failed request is attributed to.
const (
	WindowInFlight    = "in-flight"   // in flight when the process stopped accepting
	WindowUnreachable = "unreachable" // sent after that, before the client's node dropped the pod
	WindowStall       = "stall"       // lost in a stall of the client's node, not the deletion
	// WindowStaleConntrack: sent after the drop on a port whose conntrack
	// entry still sends it to the deleted pod (kubernetes#101607).
	WindowStaleConntrack = "stale-conntrack"
	WindowUnexplained    = "unexplained" // a window the deletion does not explain
)

// Segment kinds of the traffic picture's lanes.
const (
	KindEndpointReady       = "endpoint-ready"       // ready=true: new connections are sent to it
	KindEndpointTerminating = "endpoint-terminating" // ready=false, terminating=true, serving=true
	KindEndpointNotServing  = "endpoint-not-serving" // ready=false, serving=false
	KindEndpointRemoved     = "endpoint-removed"     // the pod's endpoint is no longer in the slice
	KindRulesForward        = "rules-forward"        // the client node's rules forward to the pod
	KindRulesDropped        = "rules-dropped"        // they no longer do
	KindPreStop             = "prestop"              // the preStop hook runs
)

var windowStyle = map[string]struct{ fill, legend string }{
	WindowInFlight:       {"#b71c1c", "failed: in flight when its process stopped accepting (upper row)"},
	WindowUnreachable:    {"#311b92", "failed: sent after that, before the rules dropped it (lower row)"},
	WindowStall:          {"#616161", "failed: lost in a stall of the client's node (not the deletion)"},
	WindowStaleConntrack: {"#5d4037", "failed: after the drop, sent to the deleted pod by a conntrack entry an unanswered connection left"},
	WindowUnexplained:    {"#880e4f", "failed: in a window the deletion does not explain"},
}

var windowOrder = []string{WindowInFlight, WindowUnreachable, WindowStaleConntrack, WindowStall, WindowUnexplained}

const (
	droppedColour = "#263238" // the hatch of "the rules dropped the pod in here"
	windowColour  = "#c62828" // the band from the stop to the rules' drop
)

// The traffic picture's geometry: small lanes grouped by Service.
const (
	trafficTop      = 74
	serviceHeading  = 22
	trafficLane     = 22
	trafficLaneGap  = 4
	serviceGap      = 14
	lanesPerService = 4
)

// TrafficSVG draws a TrafficPicture.
func TrafficSVG(run Run, tp TrafficPicture) []byte {
	from, to := trafficSpan(tp)
	span := to - from
	xAt := func(s ServiceTimeline, t time.Time) float64 {
		f := (t.Sub(s.Deleted).Seconds() - from) / span
		return plotLeft + math.Max(0, math.Min(1, f))*plotWidth
	}
	groupHeight := serviceHeading + lanesPerService*(trafficLane+trafficLaneGap) + serviceGap
	groupTop := func(i int) int { return trafficTop + i*groupHeight }
	lanesBottom := groupTop(len(tp.Services)) - serviceGap
	legend := trafficLegend(tp)
	legendTop := lanesBottom + 24
	legendRows := (len(legend) + 1) / 2
	notes := []string{
		"Each Service on its own clock: 0 is its pod's delete (a Service's requests, endpoint and rules are its own).",
		"The client's node is " + tp.ClientNode + ": its kube-proxy rules decide where each new connection goes.",
	}
	height := legendTop + 20*legendRows + 10 + 18*len(notes) + 10

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" fill="%s" class="timeline traffic" data-px-per-second="%.3f">`+"\n", svgWidth, height, svgWidth, height, textColour, plotWidth/span)
	p(`<title>%s</title>`+"\n", esc(run.Title+" "+run.Summary.RunID+" timeline"))
	p(`<defs><pattern id="dropped" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="5" stroke="%s" stroke-width="2"/></pattern></defs>`+"\n", droppedColour)
	p(`<rect x="0" y="0" width="100%%" height="100%%" fill="%s"/>`+"\n", laneBackground)
	p(`<text x="10" y="22" font-size="16" font-weight="bold">%s — verdict %s</text>`, esc(run.Title), esc(strings.ToUpper(string(run.Summary.Verdict))))
	p(`<text x="%d" y="22" text-anchor="end" fill="%s">run %s</text>`+"\n", svgWidth-20, quietText, esc(run.Summary.RunID))
	p(`<text x="%d" y="44" fill="%s">seconds from each pod's own delete</text>`+"\n", plotLeft, quietText)
	step := tickStep(time.Duration(span * float64(time.Second))).Seconds()
	for i := math.Ceil(from / step); i*step <= to; i++ {
		t := i * step
		px := plotLeft + (t-from)/span*plotWidth
		stroke := gridColour
		if t == 0 {
			stroke = markerColour
		}
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, px, trafficTop-6, px, lanesBottom, stroke)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", px, trafficTop-8, quietText, trimFloat(t+0)) // t+0: -0 becomes 0
	}

	lane := 0
	for i, s := range tp.Services {
		top := groupTop(i)
		x := func(t time.Time) float64 { return xAt(s, t) }
		rel := func(t time.Time) string { return fmt.Sprintf("%+.2f s", t.Sub(s.Deleted).Seconds()) }
		data := func(a, z time.Time) string {
			return fmt.Sprintf(`data-from="%.3f" data-to="%.3f"`, a.Sub(s.Deleted).Seconds(), z.Sub(s.Deleted).Seconds())
		}
		end := s.Deleted.Add(time.Duration(to * float64(time.Second)))
		laneTop := func(k int) int { return top + serviceHeading + k*(trafficLane+trafficLaneGap) }
		p(`<g class="service" data-service="%s" data-requests="%d" data-failed="%d">`+"\n", esc(s.Name), s.Requests, len(s.Failed))
		p(`<text x="10" y="%d"><tspan font-weight="bold">%s</tspan> — %s</text>`, top+14, esc(s.Name), esc(fit(s.Title, svgWidth-300)))
		count, colour := fmt.Sprintf("%d of %d requests failed", len(s.Failed), s.Requests), windowStyle[WindowInFlight].fill
		if len(s.Failed) == 0 {
			count, colour = fmt.Sprintf("no request failed (of %d)", s.Requests), kindStyle[KindRulesForward].fill
		}
		p(`<text class="failed-count" x="%d" y="%d" text-anchor="end" font-weight="bold" fill="%s">%s</text>`+"\n", svgWidth-20, top+14, colour, esc(count))

		// The window the deletion leaves open: from the stop to the rules' drop.
		if !s.StoppedAccepting.IsZero() && !s.DroppedTo.IsZero() && s.StoppedAccepting.Before(s.DroppedTo) {
			x0, x1 := x(s.StoppedAccepting), x(s.DroppedTo)
			p(`<rect class="window" data-service="%s" %s x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.10" stroke="%s" stroke-width="1.5" stroke-dasharray="4,2"><title>%s</title></rect>`+"\n",
				esc(s.Name), data(s.StoppedAccepting, s.DroppedTo), x0, laneTop(0)-2, math.Max(1, x1-x0), laneTop(lanesPerService)-laneTop(0), windowColour, windowColour,
				esc(fmt.Sprintf("%s: its process stopped accepting at %s; the client's node sent it new connections until %s at most", s.Name, rel(s.StoppedAccepting), rel(s.DroppedTo))))
		}

		begin := func(k int, kind, label string) int {
			y := laneTop(k)
			p(`<g class="lane lane-%s" data-lane="%d" data-service="%s">`+"\n", kind, lane, esc(s.Name))
			p(`<text x="22" y="%d">%s</text>`, y+trafficLane/2+4, esc(label))
			p(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s"/>`+"\n", plotLeft, y, plotWidth, trafficLane, laneBackground, laneBorder)
			lane++
			return y
		}
		segment := func(y int, kind, label string, a, z time.Time, attrs string) {
			st := kindStyle[kind]
			x0, x1 := x(a), x(z)
			if x1 <= x0 && !z.After(a) {
				return
			}
			w := math.Max(1.5, x1-x0)
			sy, sh := y+2, trafficLane-4
			if st.thin {
				sy, sh = y+trafficLane/2-2, 4
			}
			p(`<rect class="segment segment-%s" %s %s x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				kind, data(a, z), attrs, x0, sy, w, sh, st.fill, esc(fmt.Sprintf("%s: %s → %s", st.legend, rel(a), rel(z))))
			if label != "" && !st.thin && textWidth(label)+8 <= w {
				p(`<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x0+4, y+trafficLane/2+4, st.text, esc(label))
			}
		}

		// 1. The endpoint's conditions, as the EndpointSlice watch saw them.
		y := begin(0, "endpoint", "EndpointSlice endpoint")
		if len(s.Endpoint) == 0 {
			p(`<text x="%d" y="%d" fill="%s" font-style="italic">no EndpointSlice event of this pod's endpoint</text>`+"\n", plotLeft+8, y+trafficLane/2+4, quietText)
		}
		for _, g := range s.Endpoint {
			segment(y, g.Kind, g.Label, g.From, minTime(g.To, end), "")
		}
		b.WriteString("</g>\n")

		// 2. The client node's rules: forwarding, dropped somewhere in the
		// hatched interval (between two reads), no longer forwarding.
		y = begin(1, "rules", "client node's rules")
		start := s.Deleted.Add(time.Duration(from * float64(time.Second)))
		if s.DroppedTo.IsZero() {
			segment(y, KindRulesForward, "forwards to the pod (never seen dropped)", start, end, "")
		} else {
			segment(y, KindRulesForward, "forwards to the pod", start, s.DroppedFrom, "")
			x0, x1 := x(s.DroppedFrom), x(s.DroppedTo)
			p(`<rect class="rules-dropped-between" %s x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#dropped)" stroke="%s"><title>%s</title></rect>`+"\n",
				data(s.DroppedFrom, s.DroppedTo), x0, y+2, math.Max(2, x1-x0), trafficLane-4, droppedColour,
				esc(fmt.Sprintf("the client node's rules dropped the pod between %s and %s", rel(s.DroppedFrom), rel(s.DroppedTo))))
			segment(y, KindRulesDropped, "", s.DroppedTo, end, "")
			label := "dropped by " + rel(s.DroppedTo)
			p(`<text x="%.1f" y="%d" fill="%s" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n", x1+4, y+trafficLane/2+4, textColour, laneBackground, esc(label))
		}
		b.WriteString("</g>\n")

		// 3. The container: running, its preStop, SIGTERM, its exit.
		y = begin(2, "container", "container")
		exited := s.Exited
		if exited.IsZero() {
			exited = end
		}
		if !s.Started.IsZero() {
			segment(y, KindRunning, "running", s.Started, exited, "")
		}
		if !s.Exited.IsZero() {
			label := "exited"
			if s.ExitCode != nil {
				label = fmt.Sprintf("exited %d", *s.ExitCode)
			}
			segment(y, KindExited, label, s.Exited, end, fmt.Sprintf(`data-code="%s"`, codeOf(s.ExitCode)))
		}
		if !s.PreStopFrom.IsZero() {
			x0, x1 := x(s.PreStopFrom), x(s.PreStopTo)
			st := kindStyle[KindPreStop]
			how, dash := "preStop", ""
			if !s.PreStopLogged {
				// A native sleep logs nothing: its known length, ending at the SIGTERM.
				how, dash = "preStop (not logged: its sleep, ending at SIGTERM)", ` stroke="#ffffff" stroke-dasharray="4,3"`
			}
			p(`<rect class="segment segment-%s" %s data-logged="%t" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"%s><title>%s</title></rect>`+"\n",
				KindPreStop, data(s.PreStopFrom, s.PreStopTo), s.PreStopLogged, x0, y+5, math.Max(1.5, x1-x0), trafficLane-10, st.fill, dash,
				esc(fmt.Sprintf("%s: %s → %s", how, rel(s.PreStopFrom), rel(s.PreStopTo))))
			if label := "preStop"; textWidth(label)+8 <= x1-x0 {
				p(`<text x="%.1f" y="%d" fill="%s" font-size="11">%s</text>`+"\n", x0+4, y+trafficLane/2+4, st.text, label)
			}
		}
		mark := func(kind string, t time.Time) {
			ms := markStyle[kind]
			px := x(t)
			p(`<g class="mark mark-%s" data-at="%.3f"><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="4"/><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/><text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="%s"><title>%s at %s</title>%s</text></g>`+"\n",
				kind, t.Sub(s.Deleted).Seconds(), px, y, px, y+trafficLane, laneBackground, px, y, px, y+trafficLane, ms.colour, px, y+1, ms.colour, esc(ms.legend), rel(t), ms.symbol)
		}
		if !s.SIGTERM.IsZero() {
			mark(MarkSIGTERM, s.SIGTERM)
		}
		if s.ExitCode != nil && *s.ExitCode == 137 && !s.Exited.IsZero() {
			mark(MarkSIGKILL, s.Exited)
		}
		b.WriteString("</g>\n")

		// 4. The failed requests, each from its start to its end, in the
		// row of its window, and what they add up to.
		y = begin(3, "requests", "failed requests")
		last := plotLeft
		for _, q := range s.Failed {
			ws := windowStyle[q.Window]
			ry, rh := y+2, trafficLane-4
			switch q.Window {
			case WindowInFlight:
				rh = trafficLane/2 - 3
			case WindowUnreachable:
				ry, rh = y+trafficLane/2+1, trafficLane/2-3
			}
			x0, x1 := x(q.Start), x(q.End)
			p(`<rect class="failed-request" data-window="%s" data-why="%s" data-outcome="%s" %s x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				q.Window, esc(q.Why), esc(q.Outcome), data(q.Start, q.End), x0, ry, math.Max(2, x1-x0), rh, ws.fill,
				esc(fmt.Sprintf("%s, sent %s, ended %s: %s", q.Outcome, rel(q.Start), rel(q.End), q.Why)))
			last = max(last, int(math.Max(x0+2, x1)))
		}
		summary := failedSummary(s)
		tx, anchor := float64(last+6), "start"
		if len(s.Failed) == 0 {
			tx = plotLeft + 6
		} else if tx+textWidth(summary) > svgWidth-20 {
			tx, anchor = svgWidth-24, "end"
		}
		p(`<text class="failed-summary" x="%.1f" y="%d" text-anchor="%s" fill="%s" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
			tx, y+trafficLane/2+4, anchor, textColour, laneBackground, esc(summary))
		b.WriteString("</g>\n</g>\n")
	}

	for i, item := range legend {
		lx := 10 + (i%2)*490
		ly := legendTop + (i/2)*20
		p(`%s<text x="%d" y="%d">%s</text>`+"\n", item.swatch(lx, ly), lx+22, ly+11, esc(fit(item.text, 465)))
	}
	ny := legendTop + 20*legendRows + 14
	for i, n := range notes {
		p(`<text x="10" y="%d" fill="%s">%s</text>`+"\n", ny+i*18, quietText, esc(n))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// trafficSpan is the axis, in seconds from each pod's delete: from a second
// before to a second after the last thing any Service's lanes show.
func trafficSpan(tp TrafficPicture) (from, to float64) {
	from, to = -1, 5
	for _, s := range tp.Services {
		bump := func(t time.Time) {
			if !t.IsZero() && !s.Deleted.IsZero() {
				to = math.Max(to, t.Sub(s.Deleted).Seconds()+1)
			}
		}
		for _, t := range []time.Time{s.DroppedTo, s.Exited, s.SIGTERM, s.PreStopTo} {
			bump(t)
		}
		for _, g := range s.Endpoint {
			bump(g.From)
		}
		for _, q := range s.Failed {
			bump(q.End)
			from = math.Min(from, q.Start.Sub(s.Deleted).Seconds()-0.5)
		}
	}
	return from, math.Ceil(to)
}

// failedSummary says what a Service's failed requests add up to, by window.
func failedSummary(s ServiceTimeline) string {
	if len(s.Failed) == 0 {
		if s.DroppedTo.IsZero() || s.StoppedAccepting.IsZero() {
			return "none"
		}
		rel := func(t time.Time) string { return fmt.Sprintf("%+.1f s", t.Sub(s.Deleted).Seconds()) }
		return fmt.Sprintf("none: the client's node dropped the pod by %s, its process stopped accepting at %s", rel(s.DroppedTo), rel(s.StoppedAccepting))
	}
	count := map[string]int{}
	outcomes := map[string]map[string]bool{}
	for _, q := range s.Failed {
		count[q.Window]++
		if outcomes[q.Window] == nil {
			outcomes[q.Window] = map[string]bool{}
		}
		outcomes[q.Window][q.Outcome] = true
	}
	words := map[string]string{
		WindowInFlight:       "in flight at the stop",
		WindowUnreachable:    "sent before the rules dropped it",
		WindowStall:          "in a stall of the client's node",
		WindowStaleConntrack: "by a stale conntrack entry",
		WindowUnexplained:    "unexplained",
	}
	var parts []string
	for _, w := range windowOrder {
		if count[w] == 0 {
			continue
		}
		var os []string
		for o := range outcomes[w] {
			os = append(os, o)
		}
		sort.Strings(os)
		parts = append(parts, fmt.Sprintf("%d %s (%s)", count[w], words[w], strings.Join(os, ", ")))
	}
	return strings.Join(parts, " · ")
}

func codeOf(c *int32) string {
	if c == nil {
		return ""
	}
	return fmt.Sprint(*c)
}

// trafficLegend lists what the traffic picture draws.
func trafficLegend(tp TrafficPicture) []legendItem {
	used := map[string]bool{}
	for _, s := range tp.Services {
		for _, g := range s.Endpoint {
			used[g.Kind] = true
		}
		for _, q := range s.Failed {
			used["window-"+q.Window] = true
		}
		used[MarkSIGTERM] = used[MarkSIGTERM] || !s.SIGTERM.IsZero()
		used[MarkSIGKILL] = used[MarkSIGKILL] || s.ExitCode != nil && *s.ExitCode == 137
		used[KindPreStop] = used[KindPreStop] || !s.PreStopFrom.IsZero()
		used["window"] = used["window"] || !s.StoppedAccepting.IsZero() && s.StoppedAccepting.Before(s.DroppedTo)
	}
	var out []legendItem
	for _, k := range []string{KindEndpointReady, KindEndpointTerminating, KindEndpointNotServing, KindEndpointRemoved} {
		if used[k] {
			out = append(out, legendItem{text: kindStyle[k].legend, kind: k})
		}
	}
	out = append(out,
		legendItem{text: kindStyle[KindRulesForward].legend, kind: KindRulesForward},
		legendItem{text: "client node's rules dropped the pod in here (between two reads)", swatchOf: "dropped"},
		legendItem{text: kindStyle[KindRunning].legend, kind: KindRunning},
		legendItem{text: kindStyle[KindExited].legend, kind: KindExited})
	if used[KindPreStop] {
		out = append(out, legendItem{text: kindStyle[KindPreStop].legend, kind: KindPreStop})
	}
	for _, k := range []string{MarkSIGTERM, MarkSIGKILL} {
		if used[k] {
			out = append(out, legendItem{text: markStyle[k].legend, mark: k})
		}
	}
	for _, w := range windowOrder {
		if used["window-"+w] {
			out = append(out, legendItem{text: windowStyle[w].legend, swatchOf: "window-" + w})
		}
	}
	if used["window"] {
		out = append(out, legendItem{text: "its process stopped accepting; the client's node still sent to it", swatchOf: "window"})
	}
	return out
}
