//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/nodepod"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs/finalizer"
)

// diagnoseWithin bounds one diagnosis: a handful of GETs and node commands,
// plus a node pod's start where one is used.
const diagnoseWithin = 2 * time.Minute

// access is one way diagnose reaches the cluster.
type access struct {
	name string
	// kubeconfig: reached through the kubeconfig file alone, as any cluster
	// would be (no docker); otherwise termlab's own cluster through kind.
	kubeconfig, nodeAccess bool
}

var (
	throughKind     = access{name: "kind"}
	throughNodePod  = access{name: "kubeconfig+nodeaccess", kubeconfig: true, nodeAccess: true}
	throughAPIAlone = access{name: "kubeconfig", kubeconfig: true}
)

// diagnosis is one diagnose run at a lab's stuck moment.
type diagnosis struct {
	access access
	res    *diagnose.Result
	err    error
	took   time.Duration
}

// stuckMoment is a diagnosis at a lab's stuck moment: TestLabs runs it in
// the lab's first run (the lab waits while the hook runs), through each way
// of reaching the cluster that works at that moment. The answers must name
// what holds the pod (or, for the orphan, what is left of it), and the lab
// must still pass: diagnose changes nothing and leaves nothing behind.
type stuckMoment struct {
	lab, afterStep, pod string
	// through lists the ways to diagnose; a node pod cannot start on a
	// node whose kubelet is stopped, so those labs use kind and the API alone.
	through []access
	answer  map[access][]string
	check   func(t *testing.T, a access, r diagnose.Report)
	// watchRelease: diagnose.Watch, started at the stuck moment, must see
	// the pod go once the lab releases what held it.
	watchRelease bool
}

// momentsHook is what TestLabs attaches to a lab's first run: the run's
// event hook, and the checks of what it found, for after the run.
type momentsHook interface {
	attach(t *testing.T, env *cluster.Env) (hook func(lab.Event), check func(t *testing.T, s *report.Summary, runErr error))
}

// stuckMoments are the labs' stuck moments diagnose is run at, by lab.
func stuckMoments(t *testing.T, env *cluster.Env) map[string]momentsHook {
	if len(env.Workers) < 2 {
		t.Fatalf("the cluster has %d real workers; lab:stuck needs two", len(env.Workers))
	}
	worker2 := env.Workers[1].String()
	moments := map[string]momentsHook{"namespace": namespaceMoments{}}
	for _, tc := range []stuckMoment{

		{
			lab: "finalizer", afterStep: "kubelet: force delete", pod: "held",
			through: []access{throughKind, throughNodePod, throughAPIAlone},
			answer: map[access][]string{
				throughKind:     {"held by finalizer " + finalizer.Finalizer, "whose controller is not running", "already exited", "would be accepted"},
				throughNodePod:  {"held by finalizer " + finalizer.Finalizer, "whose controller is not running", "already exited", "would be accepted"},
				throughAPIAlone: {"held by finalizer " + finalizer.Finalizer, "Whether the container (heartbeat) still runs was not checked"},
			},
			check: func(t *testing.T, a access, r diagnose.Report) {
				f, ok := r.Finding(diagnose.FindFinalizer(finalizer.Finalizer))
				if !ok || !strings.Contains(f.Text, "added by ") {
					t.Errorf("the finalizer finding does not name who added it: %+v", f)
				}
				k, _ := r.Finding(diagnose.FindKubelet)
				switch {
				case a.nodeAccess || a == throughKind:
					if k.Verdict != "active" {
						t.Errorf("kubelet finding %+v, want active", k)
					}
				case k.Level != diagnose.NotChecked || !strings.Contains(k.Text, "needs -nodeaccess"):
					t.Errorf("without node access the kubelet finding is %+v; want not checked, needs -nodeaccess", k)
				}
			},
		},
		{
			lab: "stuck", afterStep: "ordinary delete of stuck", pod: "stuck",
			through: []access{throughKind, throughAPIAlone},
			answer: map[access][]string{
				throughKind:     {"kubelet on " + worker2 + " is not running", "NotReady", "cannot finish", "still running"},
				throughAPIAlone: {"Node " + worker2 + " is NotReady", "was not checked"},
			},
			check: func(t *testing.T, a access, r diagnose.Report) {
				want := map[string]string{diagnose.FindDeletion: "requested", diagnose.FindNodeReady: "NotReady",
					diagnose.FindNodeTaints: "unreachable", diagnose.FindNodeLease: "stale"}
				if a == throughKind {
					want[diagnose.FindKubelet] = "inactive"
				}
				for id, v := range want {
					if f, _ := r.Finding(id); f.Verdict != v {
						t.Errorf("%s: %+v, want %s", id, f, v)
					}
				}
			},
		},
		{
			lab: "orphan", afterStep: "force delete orphan-process", pod: "orphan-process",
			through: []access{throughKind, throughAPIAlone},
			answer: map[access][]string{
				throughKind:     {"does not exist in the API", "Its container still runs", "heartbeat", "on " + worker2, "kubelet on " + worker2 + " is not running"},
				throughAPIAlone: {"does not exist in the API", "was not checked on " + worker2},
			},
			check: func(t *testing.T, a access, r diagnose.Report) {
				f, ok := r.Finding(diagnose.FindLeftover(worker2))
				switch {
				case !ok:
					t.Errorf("no finding about what %s still has of the pod: %+v", worker2, r.Findings)
				case a == throughKind && f.Verdict != "running":
					t.Errorf("leftover finding %+v, want running", f)
				case a != throughKind && f.Level != diagnose.NotChecked:
					t.Errorf("leftover finding %+v, want not checked", f)
				}
			},
		},
		{
			lab: "mount", afterStep: "ordinary delete of mounted", pod: "mounted", watchRelease: true,
			through: []access{throughKind, throughNodePod, throughAPIAlone},
			answer: map[access][]string{
				throughKind:     {"cannot unmount volume scratch", "the mount is busy", "only once its volumes are unmounted"},
				throughNodePod:  {"cannot unmount volume scratch", "the mount is busy"},
				throughAPIAlone: {"Terminating"},
			},
			check: func(t *testing.T, a access, r diagnose.Report) {
				f, ok := r.Finding(diagnose.FindTeardown)
				switch {
				case !ok:
					t.Errorf("no volume teardown finding: %+v", r.Findings)
				case a == throughAPIAlone && f.Level != diagnose.NotChecked:
					t.Errorf("without node access the teardown finding is %+v; want not checked", f)
				case a != throughAPIAlone && (f.Verdict != "busy" || !strings.Contains(f.Text, "kubernetes.io~empty-dir/scratch") || !strings.Contains(f.Text, "Its containers exited")):
					t.Errorf("teardown finding %+v, want busy, naming the volume's path and the exited containers", f)
				}
				if a != throughAPIAlone && !strings.Contains(strings.Join(r.Advice, "\n"), "/proc/*/cwd") {
					t.Errorf("the advice does not say how to find what keeps the mount busy: %v", r.Advice)
				}
			},
		},
	} {
		moments[tc.lab] = tc
	}
	return moments
}

// attach returns the lab run's event hook that diagnoses at the stuck
// moment, and the checks of what it found, for after the run.
func (tc stuckMoment) attach(t *testing.T, env *cluster.Env) (hook func(lab.Event), check func(t *testing.T, s *report.Summary, runErr error)) {
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := env.KubeconfigPath
	var runs []diagnosis
	var finalizersAfter []string
	var cleanups []func(context.Context) error
	type watched struct {
		last diagnose.Look
		err  error
		said []string
	}
	watchDone := make(chan watched, 1)
	hook = func(e lab.Event) {
		if runs != nil || e.Kind != lab.StepFinished || !strings.HasPrefix(e.Step, tc.afterStep) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), diagnoseWithin)
		defer cancel()
		for _, a := range tc.through {
			d := diagnosis{access: a}
			kc := ""
			if a.kubeconfig {
				kc = kubeconfig
			}
			na := a.nodeAccess || a == throughKind
			src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), kc, &na)
			if err != nil {
				d.err = err
				runs = append(runs, d)
				continue
			}
			cleanups = append(cleanups, cleanup)
			begin := time.Now()
			r, err := diagnose.Run(ctx, src, e.Namespace, tc.pod, project.ResultsDir(root))
			d.took, d.err = time.Since(begin), err
			if err == nil {
				d.res = &r
			}
			runs = append(runs, d)
		}
		if tc.watchRelease {
			src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), "", nil)
			if err != nil {
				watchDone <- watched{err: err}
			} else {
				cleanups = append(cleanups, cleanup)
				go func() {
					wctx, wcancel := context.WithTimeout(context.Background(), 4*time.Minute)
					defer wcancel()
					var said []string
					last, err := diagnose.Watch(wctx, 2*time.Second, func(ctx context.Context) (diagnose.Look, error) {
						return diagnose.PodLook(ctx, src, e.Namespace, tc.pod)
					}, func(s string) { said = append(said, s) })
					watchDone <- watched{last, err, said}
				}()
			}
		}
		// The dry run must have left the finalizers where they were.
		if p, err := env.Client.CoreV1().Pods(e.Namespace).Get(ctx, tc.pod, metav1.GetOptions{}); err == nil {
			finalizersAfter = p.Finalizers
		}
	}
	return hook, func(t *testing.T, s *report.Summary, err error) {
		if tc.watchRelease && runs != nil {
			w := <-watchDone
			t.Logf("diagnose's watch said:\n%s", strings.Join(w.said, "\n"))
			if w.err != nil || w.last.Exists || !strings.Contains(strings.Join(w.said, "\n"), "gone between ") {
				t.Errorf("diagnose's watch ended with %v (the pod exists: %v); want it to see the pod gone after the release", w.err, w.last.Exists)
			}
		}
		for _, c := range cleanups {
			if cerr := c(context.Background()); cerr != nil {
				t.Errorf("removing diagnose's node pods: %v", cerr)
			}
		}
		if err != nil {
			t.Fatalf("lab:%s with diagnose at its stuck moment: %v", tc.lab, err)
		}
		for _, c := range s.Claims {
			if !c.Passed() {
				t.Errorf("claim %s failed with diagnose at its stuck moment: %s", c.ID, c.Reason)
			}
		}
		if runs == nil {
			t.Fatalf("no step starting with %q finished: diagnose never ran", tc.afterStep)
		}
		for _, d := range runs {
			if d.err != nil {
				t.Errorf("diagnose through %s at the stuck moment: %v", d.access.name, d.err)
				continue
			}
			answer := d.res.Summary.Answer
			t.Logf("diagnose %s through %s in %s: %s\n%s", tc.pod, d.access.name, d.took.Round(time.Millisecond), d.res.Dir, answer)
			for _, w := range tc.answer[d.access] {
				if !strings.Contains(answer, w) {
					t.Errorf("through %s the answer lacks %q:\n%s", d.access.name, w, answer)
				}
			}
			tc.check(t, d.access, d.res.Summary.Report)
			if leaks, err := credscan.Dir(d.res.Dir); err != nil || len(leaks) > 0 {
				t.Errorf("the diagnosis folder holds credentials %v (%v)", leaks, err)
			}
			if len(d.res.Summary.Dropped) > 0 {
				t.Logf("left out: %v", d.res.Summary.Dropped)
			}
		}
		if tc.lab == "finalizer" && (len(finalizersAfter) != 1 || finalizersAfter[0] != finalizer.Finalizer) {
			t.Errorf("after diagnose the pod's finalizers are %v, want [%s]: the dry run changed something", finalizersAfter, finalizer.Finalizer)
		}
		assertNoNodePods(t, env.Client)
	}
}

// assertNoNodePods fails when a node-access namespace is left on the cluster.
func assertNoNodePods(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: nodepod.PurposeLabel})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range list.Items {
		t.Errorf("namespace %s (node pods) is left on the cluster", ns.Name)
	}
}

// checkReplay decides the report folder's diagnosis again from its
// raw/collected.json: the same report.md shows the folder holds everything
// the diagnosis rested on (so it can become a testdata/decide case).
func checkReplay(t *testing.T, dir string) {
	t.Helper()
	got, err := diagnose.Replay(dir)
	if err != nil {
		t.Errorf("replay: %v", err)
		return
	}
	want, err := os.ReadFile(filepath.Join(dir, diagnose.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: report.md differs from what its raw/collected.json decides:\n--- report.md\n%s\n--- replayed\n%s", dir, want, got)
	}
}
