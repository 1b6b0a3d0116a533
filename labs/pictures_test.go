package labs

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
)

// pictureChecks are, per lab, the check that its picture carries its
// answer. Every lab has one (TestEveryLabHasAPictureCheck), and each is
// shown to fail on a picture that lacks what it checks
// (TestPictureChecksCatchAMissingAnswer).
var pictureChecks = map[string]func(t checker, pic picture, rec *evidence.Record, decided []claims.Claim){
	"statefulset": showsSplitBrain,
	"orphan":      showsOrphan,
	"scale":       showsAggregate,
	"finalizer":   showsNoCrictlLaneOnFakeNodes,
	"kwok":        showsNoCrictlLaneOnFakeNodes,
	"graceful":    showsFailedRequestsInTheirWindows,
	"sidecar":     showsShutdownOrder,
	"stuck":       showsTerminatingPastNotReady,
	"force":       showsObjectGoneContainerRunning,
	"mount":       showsHeldByBusyMount,
	"namespace":   showsEachNamespaceHeldThenGone,
}

// Each lab's picture shows its answer: the committed runs (the reference
// run and the lab's testdata) are rendered with this code, and the shapes
// that carry the answer are looked up by their classes and data- attributes.
func TestEachLabsPictureShowsItsAnswer(t *testing.T) {
	for _, d := range All {
		dirs := []string{filepath.Join("..", "results", "reference", d.Name)}
		testdata, _ := filepath.Glob(filepath.Join(d.Name, "testdata", "2*"))
		for _, dir := range append(dirs, testdata...) {
			t.Run(strings.ReplaceAll(dir, string(filepath.Separator), "_"), func(t *testing.T) {
				rec, err := evidence.Load(dir)
				if err != nil {
					t.Skipf("no record: %v", err)
				}
				run, decided := reportRun(t, d, dir, rec)
				pictureChecks[d.Name](t, parse(t, report.SVG(run)), rec, decided)
			})
		}
	}
}

func TestEveryLabHasAPictureCheck(t *testing.T) {
	for _, d := range All {
		if pictureChecks[d.Name] == nil {
			t.Errorf("lab:%s has no check that its picture shows its answer", d.Name)
		}
	}
}

// reportRun is what the reports render for the run in dir, with its claims
// decided anew from rec.
func reportRun(t *testing.T, d lab.Definition, dir string, rec *evidence.Record) (report.Run, []claims.Claim) {
	t.Helper()
	decided := d.Claims(rec)
	sum, err := report.ReadSummary(dir)
	if err != nil { // a testdata record keeps no summary.json
		sum = &report.Summary{Lab: rec.Lab, RunID: rec.RunID, StartedAt: rec.StartedAt, FinishedAt: rec.EndedAt}
	}
	sum.Claims, sum.Verdict = decided, claims.Overall(decided)
	return d.ReportRun(*sum, rec, decided), decided
}

// checker is what a picture check reports to: *testing.T, or a probe that
// collects what a check finds wrong with a picture made to lack its answer.
type checker interface {
	Helper()
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// showsSplitBrain: two incarnation lanes of one pod name whose running spans
// overlap by the length crictl measured (± one pixel), the overlap outlined
// and labelled with it, and the helper Deployment's pod not drawn.
func showsSplitBrain(t checker, pic picture, rec *evidence.Record, decided []claims.Claim) {
	var running []element
	for _, lane := range pic.all("lane-crictl") {
		for _, s := range pic.inside(lane, "segment-running") {
			running = append(running, s)
		}
	}
	if len(running) != 2 || running[0].lane.attr("data-uid") == running[1].lane.attr("data-uid") {
		t.Fatalf("running spans %v, want one in each of two incarnations' crictl lanes", running)
	}
	measured := measuredOverlap(rec, running[0].lane.attr("data-pod"))
	pxPerSecond := pic.root.num("data-px-per-second")
	a, b := running[0], running[1]
	drawn := (math.Min(a.num("x")+a.num("width"), b.num("x")+b.num("width")) - math.Max(a.num("x"), b.num("x"))) / pxPerSecond
	if precision := 1 / pxPerSecond; math.Abs(drawn-measured) > precision {
		t.Errorf("the running spans overlap by %.3f s as drawn, crictl measured %.3f s (± %.3f s)", drawn, measured, precision)
	}
	labels := pic.all("overlap-label")
	if len(labels) != 1 || !strings.Contains(labels[0].text, report.FormatSeconds(measured)) {
		t.Errorf("overlap labels %v, want one saying %s", labels, report.FormatSeconds(measured))
	}
	if len(pic.all("overlap")) != 1 {
		t.Error("the overlap is not outlined")
	}
	// The ledger's window of writes from both lies inside both containers' running.
	for _, c := range decided {
		if c.ID == "statefulset.split_brain" {
			if ledger, ok := c.Observed["overlap_seconds"].(float64); ok && ledger > measured+0.001 {
				t.Errorf("the ledger saw both write for %.3f s, longer than the drawn overlap %.3f s", ledger, measured)
			}
		}
	}
	writers := map[string]int{}
	for _, w := range pic.all("write") {
		writers[w.attr("data-incarnation")]++
	}
	if writers["1"] == 0 || writers["2"] == 0 {
		t.Errorf("the ledger lane shows writes of incarnations %v, want #1 and #2", writers)
	}
	for _, lane := range pic.all("lane") {
		if strings.HasPrefix(lane.attr("data-pod"), "ledger-") {
			t.Errorf("the ledger Deployment's pod %s has a lane; no claim cites it", lane.attr("data-pod"))
		}
	}
}

// measuredOverlap is how long two of pod's containers ran at once, by
// crictl's start and finish times (a container not seen finished runs to
// the record's end).
func measuredOverlap(rec *evidence.Record, pod string) float64 {
	type span struct{ from, to time.Time }
	spans := map[string]*span{}
	var order []string
	for _, o := range rec.ContainersFor(pod) {
		s, ok := spans[o.ContainerID]
		if !ok {
			s = &span{to: rec.EndedAt}
			spans[o.ContainerID] = s
			order = append(order, o.ContainerID)
		}
		if o.StartedAt != nil {
			s.from = *o.StartedAt
		}
		if o.FinishedAt != nil {
			s.to = *o.FinishedAt
		}
	}
	if len(order) != 2 {
		return math.NaN()
	}
	a, b := spans[order[0]], spans[order[1]]
	from, to := a.from, a.to
	if b.from.After(from) {
		from = b.from
	}
	if b.to.Before(to) {
		to = b.to
	}
	return to.Sub(from).Seconds()
}

// showsOrphan: the container's running span goes on after its API object's
// end, and the orphan band covers exactly that time.
func showsOrphan(t checker, pic picture, rec *evidence.Record, _ []claims.Claim) {
	gone := pic.all("segment-gone")
	running := pic.all("segment-running")
	orphans := pic.all("orphan")
	if len(gone) != 1 || len(running) != 1 || len(orphans) != 1 {
		t.Fatalf("%d gone, %d running, %d orphan shapes; want one of each", len(gone), len(running), len(orphans))
	}
	objectEnd, runEnd := gone[0].num("data-from"), running[0].num("data-to")
	if runEnd <= objectEnd+1 {
		t.Fatalf("the container's running ends at %+.3f s, not after its object's end %+.3f s", runEnd, objectEnd)
	}
	if running[0].num("x")+running[0].num("width") <= gone[0].num("x") {
		t.Error("the running span is not drawn past the object's end")
	}
	o := orphans[0]
	if o.num("data-from") != objectEnd || o.num("data-to") != runEnd {
		t.Errorf("orphan band %+.3f → %+.3f s, want %+.3f → %+.3f s", o.num("data-from"), o.num("data-to"), objectEnd, runEnd)
	}
}

// showsAggregate: counts by state, no per-pod lanes, the lab's actions and
// the namespace gone as marks, the deletion rate.
func showsAggregate(t checker, pic picture, rec *evidence.Record, _ []claims.Claim) {
	if !strings.Contains(pic.root.attr("class"), "aggregate") {
		t.Fatal("a run of many pods is not drawn as an aggregate")
	}
	if n := len(pic.all("lane")); n != 0 {
		t.Errorf("%d per-pod lanes in the aggregate", n)
	}
	for _, state := range []string{"running", "pending", "terminating", "gone"} {
		if len(pic.all("area-"+state)) != 1 {
			t.Errorf("no %s area", state)
		}
	}
	if gone := pic.all("area-gone"); len(gone) == 1 && gone[0].num("data-peak") != pic.root.num("data-pods") {
		t.Errorf("%v of %v pods gone at the end", gone[0].attr("data-peak"), pic.root.attr("data-pods"))
	}
	kinds := map[string]element{}
	for _, m := range pic.all("moment") {
		kinds[m.attr("data-kind")] = m
	}
	for _, k := range []string{"delete-namespace", "remove-finalizers", "moment"} {
		if _, ok := kinds[k]; !ok {
			t.Errorf("no %s mark", k)
		}
	}
	if r := kinds["remove-finalizers"]; r.num("data-to") <= r.num("data-from") {
		t.Error("the finalizer releases are not one span")
	}
	if len(pic.all("rate-bar")) == 0 || pic.all("rate-mean")[0].num("data-per-second") <= 0 {
		t.Error("no deletion rate")
	}
}

// showsEachNamespaceHeldThenGone (lab:namespace): each namespace held by a
// cause has a mark where its conditions named it, and one where it was gone,
// after it.
func showsEachNamespaceHeldThenGone(t checker, pic picture, rec *evidence.Record, _ []claims.Claim) {
	var held, gone []element
	for _, m := range pic.all("moment") {
		switch m.attr("data-kind") {
		case "held":
			held = append(held, m)
		case "namespace-gone":
			gone = append(gone, m)
		}
	}
	if len(held) < 2 {
		t.Errorf("%d namespaces marked held by their conditions; want the APIService's and the custom resource's", len(held))
	}
	if len(gone) < 3 {
		t.Errorf("%d namespaces marked gone; want all three", len(gone))
	}
	for i := range min(len(held), len(gone)) {
		if gone[i].num("data-at") < held[i].num("data-at") {
			t.Errorf("namespace %d gone before it was held", i)
		}
	}
}

// showsNoCrictlLaneOnFakeNodes: a pod on a kwok fake node has one API lane
// and no crictl lane.
func showsNoCrictlLaneOnFakeNodes(t checker, pic picture, rec *evidence.Record, _ []claims.Claim) {
	crictl := map[string]bool{}
	for _, l := range pic.all("lane-crictl") {
		crictl[l.attr("data-pod")] = true
	}
	fake := 0
	for _, l := range pic.all("lane-api") {
		if !strings.Contains(l.text, "(kwok)") {
			continue
		}
		fake++
		if crictl[l.attr("data-pod")] {
			t.Errorf("fake-node pod %s has a crictl lane", l.attr("data-pod"))
		}
	}
	if fake == 0 {
		t.Error("no fake-node pod drawn")
	}
	if !strings.Contains(pic.source, "no container exists, so no crictl lane") {
		t.Error("the legend does not say why fake-node pods have no crictl lane")
	}
}

// picture is a parsed SVG: its elements with a class, in document order.
type picture struct {
	root     element
	elements []element
	source   string
}

type element struct {
	attrs map[string]string
	text  string   // the text inside, children included
	lane  *element // the lane group it is drawn in
	depth int
}

func (e element) attr(name string) string { return e.attrs[name] }

func (e element) num(name string) float64 {
	f, err := strconv.ParseFloat(e.attrs[name], 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

func (e element) has(class string) bool {
	for _, c := range strings.Fields(e.attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

func (p picture) all(class string) []element {
	var out []element
	for _, e := range p.elements {
		if e.has(class) {
			out = append(out, e)
		}
	}
	return out
}

// apiLane is the pod's API lane (the last drawn, for a pod drawn twice).
func (p picture) apiLane(pod string) element {
	var api element
	for _, l := range p.all("lane-api") {
		if l.attr("data-pod") == pod {
			api = l
		}
	}
	return api
}

func (p picture) inside(lane element, class string) []element {
	var out []element
	for _, e := range p.elements {
		if e.lane != nil && e.lane.attr("data-lane") == lane.attr("data-lane") && e.has(class) {
			out = append(out, e)
		}
	}
	return out
}

func parse(t *testing.T, svg []byte) picture {
	t.Helper()
	pic := picture{source: string(svg)}
	d := xml.NewDecoder(bytes.NewReader(svg))
	var open []int // indices into pic.elements of the open elements with a class (-1 without)
	var lane *element
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			e := element{attrs: map[string]string{}, lane: lane, depth: len(open)}
			for _, a := range x.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			if x.Name.Local == "svg" {
				pic.root = e
			}
			if e.attrs["class"] == "" {
				open = append(open, -1)
				continue
			}
			pic.elements = append(pic.elements, e)
			open = append(open, len(pic.elements)-1)
			if e.has("lane") {
				l := e
				lane = &l
			}
		case xml.CharData:
			for _, i := range open {
				if i >= 0 {
					pic.elements[i].text += string(x)
				}
			}
		case xml.EndElement:
			if i := open[len(open)-1]; i >= 0 && pic.elements[i].has("lane") {
				lane = nil
			}
			open = open[:len(open)-1]
		}
	}
	if pic.root.attrs == nil {
		t.Fatal("no <svg> element")
	}
	return pic
}
