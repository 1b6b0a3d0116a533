package labs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/workloadlog"
)

// Each picture check can fail: the lab's reference run is rendered with
// the element that carries its answer taken away — from the record (the
// claims then decide on the record without it) or from the picture alone
// (the claims still have it, the picture does not) — and the check must
// find fault with it.
func TestPictureChecksCatchAMissingAnswer(t *testing.T) {
	type mutation struct {
		lab, what string
		record    func(rec *evidence.Record)
		run       func(run *report.Run)
	}
	cases := []mutation{
		{lab: "graceful", what: "exit-now's failed requests left out of the picture",
			run: func(run *report.Run) { service(run, "exit-now").Failed = nil }},
		{lab: "graceful", what: "a record where no request to exit-now failed",
			record: func(rec *evidence.Record) {
				for i := range rec.Requests {
					if rec.Requests[i].Target == "exit-now" {
						rec.Requests[i].Outcome = workloadlog.OutcomeOK
					}
				}
			}},
		{lab: "graceful", what: "exit-now's failures drawn on exec-sleep (a preStop sleep)",
			run: func(run *report.Run) { service(run, "exec-sleep").Failed = service(run, "exit-now").Failed }},
		{lab: "graceful", what: "exit-now's failures drawn in the wrong window",
			run: func(run *report.Run) {
				s := service(run, "exit-now")
				for i := range s.Failed {
					s.Failed[i].Why = "in flight somewhere else"
				}
			}},
		{lab: "graceful", what: "no endpoint conditions",
			run: func(run *report.Run) {
				for i := range run.Traffic().Services {
					run.Traffic().Services[i].Endpoint = nil
				}
			}},
		{lab: "graceful", what: "the lane picture instead of the traffic picture",
			run: func(run *report.Run) {
				for i := range run.Sections {
					run.Sections[i].Traffic = nil
				}
			}},
		{lab: "namespace", what: "no namespace marked held or gone",
			run: func(run *report.Run) { run.Moments = nil }},
		{lab: "sidecar", what: "no shutdown order drawn",
			run: func(run *report.Run) { run.Moments = nil }},
		{lab: "sidecar", what: "sidecar-a and sidecar-b swapped in the order",
			run: func(run *report.Run) {
				for i := range run.Moments {
					if run.Moments[i].Pod != "sidecars" {
						continue
					}
					switch run.Moments[i].Container {
					case "sidecar-a":
						run.Moments[i].Container = "sidecar-b"
					case "sidecar-b":
						run.Moments[i].Container = "sidecar-a"
					}
				}
			}},
		{lab: "mount", what: "no failed unmounts marked",
			run: func(run *report.Run) { run.Moments = nil }},
		{lab: "mount", what: "a record where the kubelet's unmount never failed",
			record: func(rec *evidence.Record) { rec.Journal = nil }},
		{lab: "stuck", what: "no force-delete mark",
			run: func(run *report.Run) { run.Moments = nil }},
		{lab: "stuck", what: "a record where the node never turned NotReady",
			record: func(rec *evidence.Record) {
				rec.NodeEvents = slices.DeleteFunc(rec.NodeEvents, func(e evidence.NodeEvent) bool { return e.Ready != "True" })
			}},
		{lab: "force", what: "a record without the DELETED event",
			record: func(rec *evidence.Record) {
				rec.PodEvents = slices.DeleteFunc(rec.PodEvents, func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
			}},
		{lab: "force", what: "a record where the container stopped as its object went",
			record: func(rec *evidence.Record) {
				gone, _ := rec.Deleted("slow-exit")
				for i := range rec.Containers {
					if rec.Containers[i].FinishedAt != nil {
						at := gone.ObservedAt
						rec.Containers[i].FinishedAt = &at
					}
				}
			}},
		{lab: "statefulset", what: "a record without the replacement's container",
			record: func(rec *evidence.Record) {
				var first string
				rec.Containers = slices.DeleteFunc(rec.Containers, func(o evidence.ContainerObservation) bool {
					if first == "" && o.Pod == "ident-0" {
						first = o.ContainerID
					}
					return o.Pod == "ident-0" && o.ContainerID != first
				})
			}},
		{lab: "orphan", what: "a record without the DELETED event",
			record: func(rec *evidence.Record) {
				rec.PodEvents = slices.DeleteFunc(rec.PodEvents, func(e evidence.PodEvent) bool { return e.Type == "DELETED" })
			}},
		{lab: "scale", what: "no moments (the namespace gone)",
			run: func(run *report.Run) { run.Moments = nil }},
		{lab: "finalizer", what: "a record without fake nodes",
			record: func(rec *evidence.Record) { unfake(rec) }},
		{lab: "kwok", what: "a record without fake nodes",
			record: func(rec *evidence.Record) { unfake(rec) }},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.lab] = true
		t.Run(c.lab+": "+c.what, func(t *testing.T) {
			d, ok := ByName(c.lab)
			if !ok {
				t.Fatalf("no lab %s", c.lab)
			}
			dir := filepath.Join("..", "results", "reference", c.lab)
			rec, err := evidence.Load(dir)
			if err != nil {
				t.Skipf("no reference run: %v", err)
			}
			if c.record != nil {
				c.record(rec)
			}
			run, decided := reportRun(t, d, dir, rec)
			if c.run != nil {
				c.run(&run)
			}
			var p probe
			p.check(pictureChecks[c.lab], parse(t, report.SVG(run)), rec, decided)
			if len(p.failures) == 0 {
				t.Errorf("the check of lab:%s passed a picture with %s", c.lab, c.what)
			}
			t.Logf("found: %s", strings.Join(p.failures, "; "))
		})
	}
	for name := range pictureChecks {
		if !covered[name] {
			t.Errorf("lab:%s's picture check is never shown to fail", name)
		}
	}
}

// service is a Service's timeline in the run's traffic picture.
func service(run *report.Run, name string) *report.ServiceTimeline {
	tp := run.Traffic()
	for i := range tp.Services {
		if tp.Services[i].Name == name {
			return &tp.Services[i]
		}
	}
	panic("no service " + name)
}

// unfake moves every pod off the kwok fake nodes, as if they were real.
func unfake(rec *evidence.Record) {
	for i := range rec.PodEvents {
		rec.PodEvents[i].NodeName = strings.TrimPrefix(rec.PodEvents[i].NodeName, "kwok-")
	}
}

// probe is a checker that collects what a check finds; a fatal finding
// stops the check.
type probe struct{ failures []string }

type stopCheck struct{}

func (p *probe) Helper()           {}
func (p *probe) Error(args ...any) { p.failures = append(p.failures, fmt.Sprint(args...)) }
func (p *probe) Errorf(f string, args ...any) {
	p.failures = append(p.failures, fmt.Sprintf(f, args...))
}
func (p *probe) Fatal(args ...any)            { p.Error(args...); panic(stopCheck{}) }
func (p *probe) Fatalf(f string, args ...any) { p.Errorf(f, args...); panic(stopCheck{}) }

func (p *probe) check(check func(checker, picture, *evidence.Record, []claims.Claim), pic picture, rec *evidence.Record, decided []claims.Claim) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopCheck); !ok {
				panic(r)
			}
		}
	}()
	check(p, pic, rec, decided)
}
