//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/credscan"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/labtest"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/labs"
)

// labChecks are checks beyond the common ones, for the labs that have them.
var labChecks = map[string]func(t *testing.T, s *report.Summary){
	"kwok":      checkKwokRun,
	"namespace": checkNamespaceRun,
}

// TestLabs runs every registered lab on the real cluster and checks
// verdicts, evidence and cleanup: first with termlab doing the actions, then
// with scripts/<lab>.sh doing them (-by=script), judged by the same claims
// with every action read from the API server's audit log or the node. Some
// of these runs are made by other tests, which check them the same way
// (checkRun): one run serves both, as CI's time is short (madeBy).
// In the first run of a lab with a stuck moment, diagnose runs at that
// moment (stuckMoments), for the same reason.
func TestLabs(t *testing.T) {
	env := connect(t)
	moments := stuckMoments(t, env)
	// Another tenant's secrets sit on every worker while the labs record
	// those nodes: no run's folder may hold them.
	planted := plantTenantSecrets(t, env)
	for round, by := range []string{lab.ByTermlab, lab.ByScript} {
		for _, def := range labs.All {
			if madeBy(def, by) != inTestLabs {
				continue
			}
			name := fmt.Sprintf("%s/run%d", def.Name, round+1)
			if by == lab.ByScript {
				name = def.Name + "/by-script"
			}
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
				defer cancel()
				begin := time.Now()
				opts := lab.Options{By: by}
				var diagnosed func(*testing.T, *report.Summary, error)
				if m, ok := moments[def.Name]; ok && by == lab.ByTermlab {
					opts.Events, diagnosed = m.attach(t, env)
				}
				s, err := lab.Execute(ctx, env, def, opts)
				if diagnosed != nil {
					diagnosed(t, s, err)
				}
				if err != nil {
					t.Fatalf("%s: %v", def.Title(), err)
				}
				t.Logf("%s run %s: %s in %s (%s)", def.Title(), s.RunID, s.Verdict, time.Since(begin).Round(100*time.Millisecond), s.Dir)
				for _, c := range s.Claims {
					if !c.Passed() {
						t.Errorf("claim %s failed: %s", c.ID, c.Reason)
					}
				}
				if !s.Passed() {
					t.Errorf("verdict %s, want pass; see %s", s.Verdict, filepath.Join(s.Dir, report.MarkdownFile))
				}
				checkRun(t, env, def, s, by)
				checkNoPlanted(t, s.Dir, planted)
			})
		}
	}
}

// The tests that make a lab's run, by the actor, in go tool mage test.
const (
	inTestLabs          = "TestLabs"
	inThroughKubeconfig = "TestLabsThroughKubeconfig"
	inInterrupted       = "TestOrphanInterruptedThroughMage"
	// lab:statefulset's and lab:stuck's runs by termlab are made on a
	// cluster termlab did not make, through the node pods' agent: the path
	// their users take (lab:stuck's script still runs here, in TestLabs).
	inForeign = "TestForeignCluster"
)

// scriptRuns are the labs whose script (-by=script) runs on the cluster in
// go tool mage test, and the test that runs it: each action kind is done by
// a script once (TestEveryActionKindIsDoneByAScript), not by every lab's
// script, as CI's time is short. Every other script's commands are checked
// without a cluster (labs.TestScriptsDoWhatTermlabDoes), and every script
// runs in soak -by=script. The labs that fault a node run in TestLabs; the
// others through a kubeconfig with node access, and through its node pods.
var scriptRuns = map[string]string{
	"stuck":     inTestLabs,          // stop-kubelet, delete, taint-node, untaint-node, start-kubelet
	"mount":     inTestLabs,          // hold-mount, delete, release-mount
	"finalizer": inThroughKubeconfig, // delete, force-delete, remove-finalizers
	"namespace": inThroughKubeconfig, // delete-namespace, delete-apiservice, remove-finalizer, delete-pvc
}

// madeBy names the test that makes the lab's run by the actor ("": none):
// TestLabs makes every lab's run by termlab but lab:orphan's, which is the
// run TestOrphanInterruptedThroughMage makes on the cluster its
// interruptions left.
func madeBy(def lab.Definition, by string) string {
	switch {
	case by == lab.ByScript:
		return scriptRuns[def.Name]
	case def.Name == "orphan":
		return inInterrupted
	case def.Name == "statefulset", def.Name == "stuck":
		return inForeign
	}
	return inTestLabs
}

// TestEveryActionKindIsDoneByAScript: the scripts that run in go tool mage
// test do, between them, every kind of action any lab's reference run had
// its actor do; each of them is a lab that runs where scriptRuns says. Without
// lab:mount's, hold-mount and release-mount would be done by no script.
func TestEveryActionKindIsDoneByAScript(t *testing.T) {
	for _, p := range scriptGaps(t, scriptRuns) {
		t.Error(p)
	}
	without := maps.Clone(scriptRuns)
	delete(without, "mount")
	if gaps := strings.Join(scriptGaps(t, without), "\n"); !strings.Contains(gaps, "hold-mount") || !strings.Contains(gaps, "release-mount") {
		t.Errorf("without lab:mount's script: %q, want hold-mount and release-mount named", gaps)
	}
}

// scriptGaps says what is wrong with runs as scriptRuns: an action kind no
// script in it does, or a lab in the wrong test.
func scriptGaps(t *testing.T, runs map[string]string) []string {
	t.Helper()
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	var gaps []string
	done := map[evidence.ActionKind]bool{}
	var all []evidence.Action
	for _, def := range labs.All {
		acts := labtest.ActorActions(labtest.Load(t, filepath.Join(root, "results", "reference", def.Name)))
		all = append(all, acts...)
		test, ok := runs[def.Name]
		if !ok {
			continue
		}
		if want := map[bool]string{true: inTestLabs, false: inThroughKubeconfig}[def.Uses.FaultsANode()]; test != want {
			gaps = append(gaps, fmt.Sprintf("lab:%s's script runs in %s; a lab that faults a node (%t) runs in %s", def.Name, test, def.Uses.FaultsANode(), want))
		}
		for _, a := range acts {
			done[a.Kind] = true
		}
	}
	for _, a := range all {
		if !done[a.Kind] {
			gaps = append(gaps, fmt.Sprintf("no script that runs in go tool mage test does %s (%s): add a lab that does to scriptRuns", a.Kind, a.Equivalent))
			done[a.Kind] = true
		}
	}
	return gaps
}

// checkRun checks a finished run's folder, audit log and cleanup, and the
// lab's own checks where it has them.
func checkRun(t *testing.T, env *cluster.Env, def lab.Definition, s *report.Summary, by string) {
	t.Helper()
	checkEvidence(t, s.Dir)
	checkAudit(t, s.Dir, by)
	checkNamespaceGone(t, env.Client.CoreV1().Namespaces().Get, s.Namespace)
	if check := labChecks[def.Name]; check != nil {
		check(t, s)
	}
}

// checkEvidence checks that a run folder is consistent and clean.
func checkEvidence(t *testing.T, dir string) {
	t.Helper()
	s, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.SummaryFile, report.MarkdownFile, report.TimelineFile, report.JUnitFile, evidence.EventsFile, evidence.RecordFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	if s.Lab == "" || s.RunID == "" || s.StartedAt.IsZero() || s.FinishedAt.IsZero() || len(s.Versions) == 0 || len(s.Claims) == 0 {
		t.Errorf("summary incomplete: %+v", s)
	}
	for _, c := range s.Claims {
		// A claim not checked rests on no evidence, and says why.
		decided := c.Verdict != claims.NotChecked
		if c.ID == "" || c.Statement == "" || c.Observed == nil || (decided && len(c.Evidence) == 0) || (!decided && c.Reason == "") {
			t.Errorf("claim %q incomplete: %+v", c.ID, c)
		}
		for _, e := range c.Evidence {
			if _, err := os.Stat(filepath.Join(dir, e)); err != nil {
				t.Errorf("claim %s cites %s, which is not in the run folder", c.ID, e)
			}
		}
	}
	latest, err := os.Readlink(filepath.Join(filepath.Dir(dir), "latest"))
	if err != nil {
		t.Errorf("no latest symlink: %v", err)
	}
	_ = latest // a later run may already have moved it

	rec, err := evidence.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// events.jsonl is in watch order: resourceVersions strictly increase.
	last := int64(0)
	for i, e := range rec.PodEvents {
		if e.Type == "LISTED" {
			continue
		}
		rv, err := strconv.ParseInt(e.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("event %d: resourceVersion %q: %v", i, e.ResourceVersion, err)
		}
		if rv <= last {
			t.Errorf("events.jsonl out of order at event %d: rv %d after %d", i, rv, last)
		}
		last = rv
		if len(e.Object) == 0 {
			t.Errorf("event %d has no object", i)
		}
	}
	// The container crictl describes is one the pod's status named (a
	// StatefulSet's pod name has one per incarnation).
	reported := map[string]map[string]bool{}
	for _, e := range rec.PodEvents {
		// Init containers too: lab:sidecar's native sidecars are.
		for _, c := range append(append([]evidence.ContainerState(nil), e.Containers...), e.InitContainers...) {
			if c.ContainerID != "" {
				if reported[e.Name] == nil {
					reported[e.Name] = map[string]bool{}
				}
				reported[e.Name][c.ContainerID] = true
			}
		}
	}
	for _, o := range rec.Containers {
		if len(reported[o.Pod]) == 0 {
			t.Errorf("crictl evidence for %s, but the API never reported its container ID", o.Pod)
			continue
		}
		if o.State == evidence.ContainerNotFound || !strings.HasSuffix(o.InspectPath, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, o.InspectPath))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		in, err := evidence.ParseInspect(b)
		if err != nil {
			t.Errorf("%s: %v", o.InspectPath, err)
			continue
		}
		if !reported[o.Pod][in.ID] {
			t.Errorf("%s: crictl container %s, which no status of pod %s named (%v)", o.InspectPath, in.ID, o.Pod, reported[o.Pod])
		}
	}
	// Snapshots are YAML a kubectl user recognises, without managedFields.
	for _, sn := range rec.Snapshots {
		b, err := os.ReadFile(filepath.Join(dir, sn.Path))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if sn.Found && (!strings.HasPrefix(string(b), "apiVersion: v1\nkind: Pod\n") || strings.Contains(string(b), "managedFields")) {
			t.Errorf("snapshot %s is not kubectl-style YAML", sn.Path)
		}
	}
	for _, a := range rec.Actions {
		if !json.Valid(a.Request) {
			t.Errorf("action %s %s: request is not JSON", a.Kind, a.Target)
		}
	}
	// What the lab created, exactly as sent: pods, or other objects.
	pods, _ := os.ReadDir(filepath.Join(dir, "inputs", "pods"))
	objects, _ := os.ReadDir(filepath.Join(dir, "inputs", "objects"))
	if len(pods)+len(objects) == 0 {
		t.Error("inputs/pods and inputs/objects are empty: the objects the lab created are not in its folder")
	}
	leaks, err := credscan.Dir(dir)
	if err != nil || len(leaks) > 0 {
		t.Errorf("credentials check: %v %v", leaks, err)
	}
}

func checkNamespaceGone(t *testing.T, get func(context.Context, string, metav1.GetOptions) (*corev1.Namespace, error), name string) {
	t.Helper()
	ns, err := get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("checking namespace %s: %v", name, err)
		return
	}
	if ns.DeletionTimestamp == nil {
		t.Errorf("namespace %s is still there and not being deleted", name)
	}
}

// checkAudit checks the run's audit.jsonl: there, credential-free, holding
// the run's own requests; and in a -by=script run every action the claims
// read came from the API server's audit log or the node, not from termlab.
func checkAudit(t *testing.T, dir, by string) {
	t.Helper()
	rec, err := evidence.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, evidence.AuditFile))
	if err != nil {
		t.Fatalf("%s missing: %v", evidence.AuditFile, err)
	}
	if leaks := credscan.Bytes(evidence.AuditFile, raw); len(leaks) > 0 {
		t.Errorf("%s holds credentials: %v", evidence.AuditFile, leaks)
	}
	created := false
	for _, e := range rec.Audit {
		created = created || (e.Verb == "create" && e.Resource == "pods" && e.Subresource == "" && e.Namespace == rec.Namespace)
	}
	if !created {
		t.Errorf("%s has no pod creation in %s (%d events)", evidence.AuditFile, rec.Namespace, len(rec.Audit))
	}
	if by != lab.ByScript {
		return
	}
	for _, a := range rec.Actions {
		if strings.HasPrefix(string(a.Kind), "create") || strings.HasPrefix(string(a.Kind), "cleanup") || a.Step == "cleanup" {
			continue // termlab creates the objects and cleans up itself
		}
		var req struct {
			From string `json:"from"`
		}
		_ = json.Unmarshal(a.Request, &req)
		if req.From != "audit log" && req.From != "the node" {
			t.Errorf("action %s on %s in step %q was not read from the audit log or the node: %s", a.Kind, a.Target, a.Step, a.Request)
		}
	}
}

// TestFinalizerLabWithoutKwok runs lab:finalizer as on a cluster without
// kwok (the blog's first experiment needs none for its real half): the real
// worker's claims pass, the kwok half's are not checked, the run is partial
// instead of refused.
func TestFinalizerLabWithoutKwok(t *testing.T) {
	own := connect(t)
	env := *own
	env.FakeNodes = nil
	def, ok := labs.ByName("finalizer")
	if !ok {
		t.Fatal("no lab finalizer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := lab.Execute(ctx, &env, def, lab.Options{})
	if err != nil {
		t.Fatalf("%s without fake nodes: %v", def.Title(), err)
	}
	t.Logf("%s run %s: %s, %d of %d claims not checked (%s)", def.Title(), s.RunID, s.Verdict, claims.CountNotChecked(s.Claims), len(s.Claims), s.Dir)
	if s.Verdict != claims.Partial {
		t.Errorf("verdict %s, want partial", s.Verdict)
	}
	for _, c := range s.Claims {
		kwokHalf := strings.HasPrefix(c.ID, "finalizer.kwok.")
		switch {
		case kwokHalf && (c.Verdict != claims.NotChecked || c.Reason != claims.NeedsFakeNodes):
			t.Errorf("%s: %s (%s), want not checked for want of fake nodes", c.ID, c.Verdict, c.Reason)
		case !kwokHalf && !c.Passed():
			t.Errorf("%s: %s (%s), want pass", c.ID, c.Verdict, c.Reason)
		}
	}
	checkEvidence(t, s.Dir)
	checkNamespaceGone(t, own.Client.CoreV1().Namespaces().Get, s.Namespace)
}
