//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
	"github.com/termlab/termlab/labs/finalizer"
)

// diagnoseWithin bounds one diagnosis: a handful of GETs and node commands.
const diagnoseWithin = 30 * time.Second

// TestDiagnoseAtLabsStuckMoments runs lab:finalizer and lab:stuck and, at
// the moment each one's pod is stuck, diagnoses that pod from the lab's
// event hook (the lab waits while the hook runs). The answers must name what
// holds the pod, and the labs must still pass: diagnose changes nothing.
func TestDiagnoseAtLabsStuckMoments(t *testing.T) {
	env := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]nodes.Node{env.ControlPlane.String(): env.ControlPlane}
	for _, w := range env.Workers {
		byName[w.String()] = w
	}
	src := diagnose.Source{Client: env.Client, Node: stack.KindNodeAccess(byName)}
	if len(env.Workers) < 2 {
		t.Fatalf("the cluster has %d real workers; lab:stuck needs two", len(env.Workers))
	}
	worker2 := env.Workers[1].String()

	for _, tc := range []struct {
		lab, afterStep, pod string
		answer              []string
		check               func(t *testing.T, r diagnose.Report)
	}{
		{
			lab: "finalizer", afterStep: "kubelet: force delete", pod: "held",
			answer: []string{"held by finalizer " + finalizer.Finalizer, "whose controller is not running", "already exited", "would be accepted"},
			check: func(t *testing.T, r diagnose.Report) {
				f, ok := r.Finding(diagnose.FindFinalizer(finalizer.Finalizer))
				if !ok || !strings.Contains(f.Text, "added by ") {
					t.Errorf("the finalizer finding does not name who added it: %+v", f)
				}
				if f, _ := r.Finding(diagnose.FindKubelet); f.Verdict != "active" {
					t.Errorf("kubelet finding %+v, want active", f)
				}
			},
		},
		{
			lab: "stuck", afterStep: "ordinary delete of stuck", pod: "stuck",
			answer: []string{"kubelet on " + worker2 + " is not running", "NotReady", "cannot finish", "still running"},
			check: func(t *testing.T, r diagnose.Report) {
				for id, want := range map[string]string{
					diagnose.FindDeletion: "requested", diagnose.FindKubelet: "inactive", diagnose.FindNodeReady: "NotReady",
					diagnose.FindNodeTaints: "unreachable", diagnose.FindNodeLease: "stale",
				} {
					if f, _ := r.Finding(id); f.Verdict != want {
						t.Errorf("%s: %+v, want %s", id, f, want)
					}
				}
			},
		},
	} {
		t.Run(tc.lab, func(t *testing.T) {
			def, ok := labs.ByName(tc.lab)
			if !ok {
				t.Fatalf("no lab %q", tc.lab)
			}
			var res *diagnose.Result
			var derr error
			var finalizersAfter []string
			hook := func(e lab.Event) {
				if res != nil || derr != nil || e.Kind != lab.StepFinished || !strings.HasPrefix(e.Step, tc.afterStep) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), diagnoseWithin)
				defer cancel()
				r, err := diagnose.Run(ctx, src, e.Namespace, tc.pod, project.ResultsDir(root))
				if err != nil {
					derr = err
					return
				}
				res = &r
				// The dry run must have left the finalizers where they were.
				if p, err := env.Client.CoreV1().Pods(e.Namespace).Get(ctx, tc.pod, metav1.GetOptions{}); err == nil {
					finalizersAfter = p.Finalizers
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			s, err := lab.Execute(ctx, env, def, lab.Options{Events: hook})
			if err != nil {
				t.Fatalf("%s: %v", def.Title(), err)
			}
			for _, c := range s.Claims {
				if !c.Passed() {
					t.Errorf("claim %s failed with diagnose at its stuck moment: %s", c.ID, c.Reason)
				}
			}
			if derr != nil {
				t.Fatalf("diagnose at the stuck moment: %v", derr)
			}
			if res == nil {
				t.Fatalf("no step starting with %q finished: diagnose never ran", tc.afterStep)
			}
			answer := res.Summary.Answer
			t.Logf("diagnose %s in %s: %s\n%s", tc.pod, res.Took.Round(time.Millisecond), res.Dir, answer)
			for _, w := range tc.answer {
				if !strings.Contains(answer, w) {
					t.Errorf("the answer lacks %q:\n%s", w, answer)
				}
			}
			tc.check(t, res.Summary.Report)
			if tc.lab == "finalizer" && (len(finalizersAfter) != 1 || finalizersAfter[0] != finalizer.Finalizer) {
				t.Errorf("after diagnose the pod's finalizers are %v, want [%s]: the dry run changed something", finalizersAfter, finalizer.Finalizer)
			}
			if leaks, err := credscan.Dir(res.Dir); err != nil || len(leaks) > 0 {
				t.Errorf("the diagnosis folder holds credentials %v (%v)", leaks, err)
			}
			if len(res.Summary.Dropped) > 0 {
				t.Logf("left out: %v", res.Summary.Dropped)
			}
			if res.Took > 10*time.Second {
				t.Errorf("diagnose took %s", res.Took)
			}
		})
	}
}
