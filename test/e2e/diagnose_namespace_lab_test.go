//go:build e2e

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/labs/namespace"
)

// namespaceMoments diagnoses lab:namespace's held namespaces at its stuck
// moments (the step that deleted each has finished; the lab waits for the
// hook), in the lab's first run in TestLabs: diagnose must name the cause
// each namespace's conditions name. At the custom resource's moment it also
// starts diagnose's --watch on that namespace, which must see the lab's
// release: the namespace gone between two looks.
type namespaceMoments struct{}

func (namespaceMoments) attach(t *testing.T, env *cluster.Env) (func(lab.Event), func(*testing.T, *report.Summary, error)) {
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	src := ownSource(ctx, t)

	type moment struct {
		step  string
		check func(t *testing.T, runID, runNS string, r diagnose.Report)
	}
	moments := []moment{
		{step: "apiservice: delete its namespace", check: func(t *testing.T, runID, runNS string, r diagnose.Report) {
			name := namespace.APIServiceName(runID)
			f := mustFinding(t, r, diagnose.FindAPIService(name), diagnose.Blocking, "unavailable")
			wantIn(t, "the APIService finding", f.Text, "service "+runNS+"/"+namespace.Service)
			mustFinding(t, r, diagnose.FindNSCondition("NamespaceDeletionDiscoveryFailure"), diagnose.Blocking, "True")
			wantIn(t, "the answer", r.Answer, "APIService "+name+" is unavailable")
		}},
		{step: "orphan: delete its namespace", check: func(t *testing.T, runID, runNS string, r diagnose.Report) {
			mustFinding(t, r, diagnose.FindRemaining(namespace.CRDName(runID)), diagnose.Blocking, "held")
			f, ok := r.Finding(diagnose.FindFinalizer(namespace.Finalizer))
			if !ok || f.Level != diagnose.Blocking || !strings.Contains(f.Text, "No controller") {
				t.Errorf("finalizer %s: %+v; want blocking, no controller", namespace.Finalizer, f)
			}
			wantIn(t, "the answer", r.Answer, "held by finalizer "+namespace.Finalizer)
		}},
		{step: "pvc: delete the namespace", check: func(t *testing.T, runID, runNS string, r diagnose.Report) {
			mustFinding(t, r, diagnose.FindNSOrdered, diagnose.Blocking, "waiting on pods")
			f := mustFinding(t, r, diagnose.FindFinalizer(diagnose.PVCProtection), diagnose.Blocking, "holds the namespace")
			wantIn(t, "the pvc-protection finding", f.Text, "persistentvolumeclaims/"+namespace.Claim+" is in use by "+namespace.Pod)
		}},
	}

	var (
		mu      sync.Mutex
		reports = map[string]diagnose.Report{}
		errs    = map[string]error{}
		runID   string
		watched = make(chan string, 1)
	)
	hook := func(e lab.Event) {
		if e.Kind != lab.StepFinished || e.Err != "" {
			return
		}
		for _, m := range moments {
			if !strings.HasPrefix(e.Step, m.step) {
				continue
			}
			runID = e.RunID
			ns := e.Namespace
			switch {
			case strings.HasPrefix(m.step, "apiservice"):
				ns = namespace.APIServiceNamespace(e.Namespace)
			case strings.HasPrefix(m.step, "orphan"):
				ns = namespace.OrphanNamespace(e.Namespace)
				// --watch, in the background: the lab's release comes once this hook returns.
				go func() {
					var lines []string
					last, err := diagnose.Watch(ctx, watchEvery, func(ctx context.Context) (diagnose.Look, error) {
						return diagnose.NamespaceLook(ctx, src, ns)
					}, func(s string) { lines = append(lines, s) })
					said := strings.Join(lines, "\n")
					if err != nil || last.Exists {
						said += "\n(watch ended with the namespace still there: " + errString(err) + ")"
					}
					watched <- said
				}()
			}
			dctx, dcancel := context.WithTimeout(ctx, diagnoseWithin)
			res, err := diagnose.RunNamespace(dctx, src, ns, project.ResultsDir(root))
			dcancel()
			mu.Lock()
			if err != nil {
				errs[m.step] = err
			} else {
				reports[m.step] = res.Summary.Report
				logDiagnosis(t, "namespace "+ns+" at "+m.step, res)
			}
			mu.Unlock()
		}
	}
	return hook, func(t *testing.T, s *report.Summary, err error) {
		defer cancel()
		if err != nil {
			t.Fatalf("lab:namespace with diagnose at its stuck moments: %v", err)
		}
		for _, m := range moments {
			t.Run(strings.Fields(m.step)[0], func(t *testing.T) {
				if err := errs[m.step]; err != nil {
					t.Fatalf("diagnose at %q: %v", m.step, err)
				}
				r, ok := reports[m.step]
				if !ok {
					t.Fatalf("the lab never finished step %q", m.step)
				}
				m.check(t, runID, s.Namespace, r)
			})
		}
		select {
		case said := <-watched:
			t.Logf("diagnose --watch of the custom resource's namespace said:\n%s", said)
			if !strings.Contains(said, "gone between ") {
				t.Errorf("--watch never saw the namespace go after the finalizer's release:\n%s", said)
			}
		case <-ctx.Done():
			t.Error("--watch did not end")
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
