//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
)

// TestLabsThroughKubeconfig runs every lab that needs no node fault on
// termlab's cluster reached through its kubeconfig alone, as on a cluster
// that is not termlab's: no docker access from the lab code. Without node
// access the claims resting on crictl are "not checked", never passed, and
// the run passes on the rest; with it (node pods) every claim passes, and
// the node pods are gone afterwards. A lab that stops a kubelet is refused.
// With node access the runs are -by=script (TestLabs leaves those to this
// test): the audit log and crictl read through node pods decide the claims.
func TestLabsThroughKubeconfig(t *testing.T) {
	own := connect(t)
	planted := plantTenantSecrets(t, own)
	for _, access := range []bool{false, true} {
		t.Run(fmt.Sprintf("nodeaccess=%v", access), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			env, cleanup, err := stack.RemoteEnv(ctx, progress.Default(), stack.Remote{Kubeconfig: own.KubeconfigPath, NodeAccess: access, ControlPlaneAccess: access})
			defer func() {
				if err := cleanup(context.Background()); err != nil {
					t.Errorf("removing the node pods: %v", err)
				}
				assertNoNodePods(t, own.Client)
			}()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range append([]cluster.Node{env.ControlPlane}, env.Workers...) {
				if _, kind := n.(nodes.Node); kind {
					t.Fatalf("node %s is reached through docker: the kubeconfig path must not", n)
				}
			}
			if access {
				// Node access alone stays off the control plane (the CA's and
				// etcd's keys on its disk): that takes -controlplaneaccess.
				workersOnly, closeWorkersOnly, err := stack.RemoteEnv(ctx, progress.Default(), stack.Remote{Kubeconfig: own.KubeconfigPath, NodeAccess: true})
				if err != nil {
					t.Fatal(err)
				}
				if _, none := workersOnly.ControlPlane.(interface{ NoNodeAccess() error }); !none {
					t.Errorf("-nodeaccess without -controlplaneaccess reaches the control plane %s (%T)", workersOnly.ControlPlane, workersOnly.ControlPlane)
				}
				if err := closeWorkersOnly(ctx); err != nil {
					t.Error(err)
				}
			}
			if len(env.Workers) != len(own.Workers) || len(env.FakeNodes) == 0 {
				t.Fatalf("workers %v, fake nodes %v; want %d workers and kwok's nodes", env.Workers, env.FakeNodes, len(own.Workers))
			}
			for _, def := range labs.All {
				if def.Uses.NeedsNodeAccess && !access {
					if _, err := lab.Execute(ctx, env, def, lab.Options{}); err == nil || !strings.Contains(err.Error(), "-nodeaccess") {
						t.Errorf("%s through a kubeconfig without node access: %v, want a refusal naming -nodeaccess", def.Title(), err)
					}
					continue
				}
				if def.Uses.FaultsANode() {
					if _, err := lab.Execute(ctx, env, def, lab.Options{}); err == nil || !strings.Contains(err.Error(), "-allownodefaults") {
						t.Errorf("%s through a kubeconfig: %v, want a refusal", def.Title(), err)
					}
					continue
				}
				runEnv := env
				if def.Uses.FaultsTheCluster() {
					// A change every tenant feels runs only when asked for by name.
					if _, err := lab.Execute(ctx, env, def, lab.Options{}); err == nil || !strings.Contains(err.Error(), "-allowclusterfaults") {
						t.Errorf("%s through a kubeconfig without -allowclusterfaults: %v, want a refusal naming it", def.Title(), err)
					}
					allowed := *env
					allowed.AllowClusterFaults = true
					runEnv = &allowed
				}
				opts := lab.Options{}
				if access && madeBy(def, lab.ByScript) == inThroughKubeconfig {
					opts.By = lab.ByScript
				}
				s, err := lab.Execute(ctx, runEnv, def, opts)
				if err != nil {
					t.Fatalf("%s: %v", def.Title(), err)
				}
				notChecked := claims.CountNotChecked(s.Claims)
				t.Logf("%s run %s: %s, %d of %d claims not checked", def.Title(), s.RunID, s.Verdict, notChecked, len(s.Claims))
				// Claims not checked make the run partial, never pass.
				wantVerdict := claims.Pass
				if notChecked > 0 {
					wantVerdict = claims.Partial
				}
				if s.Verdict != wantVerdict {
					t.Errorf("%s: verdict %s with %d claims not checked, want %s", def.Title(), s.Verdict, notChecked, wantVerdict)
				}
				for _, c := range s.Claims {
					switch {
					case c.Verdict == claims.NotChecked && access:
						t.Errorf("%s: claim %s not checked with node access", def.Title(), c.ID)
					case c.Verdict == claims.NotChecked && !strings.HasPrefix(c.Reason, "not checked (needs -node-access)"):
						t.Errorf("%s: claim %s not checked for %q", def.Title(), c.ID, c.Reason)
					case c.Verdict == claims.Fail:
						t.Errorf("%s: claim %s failed: %s", def.Title(), c.ID, c.Reason)
					}
				}
				// Labs that look at a real worker's container have claims that need it.
				if !access && def.Name != "scale" && notChecked == 0 {
					t.Errorf("%s without node access: no claim was reported not checked", def.Title())
				}
				checkNoPlanted(t, s.Dir, planted)
				rec, err := evidence.Load(s.Dir)
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]string{false: evidence.NodeAccessNone, true: evidence.NodeAccessPod}[access]
				if rec.NodeAccess != want {
					t.Errorf("%s: record says node access %q, want %q", def.Title(), rec.NodeAccess, want)
				}
				if access && len(rec.Audit) == 0 {
					t.Errorf("%s: the audit log was not read through the control plane's node pod", def.Title())
				}
				if opts.By == lab.ByScript {
					checkRun(t, own, def, s, opts.By)
					continue
				}
				checkEvidence(t, s.Dir)
				checkNamespaceGone(t, own.Client.CoreV1().Namespaces().Get, s.Namespace)
			}
		})
	}
}

// TestPartialRunExitsWithItsOwnCode runs lab:force through mage with a
// kubeconfig and no node access: the claims that rest on crictl are not
// checked, so the run is partial, says so, and mage exits with
// lab.ExitPartial, not 0 (a CI can require full passes) and not 1.
func TestPartialRunExitsWithItsOwnCode(t *testing.T) {
	own := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "tool", "mage", "lab:force", "-kubeconfig="+own.KubeconfigPath)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, os.Stderr), io.MultiWriter(&out, os.Stderr)
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code != lab.ExitPartial {
		t.Fatalf("go tool mage lab:force -kubeconfig=… without -nodeaccess exited %d (%v), want %d (partial)", code, err, lab.ExitPartial)
	}
	for _, want := range []string{": partial (5 claims, ", "not checked", "partial: no claim failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	dir := regexp.MustCompile(`(\S+)/report\.md`).FindStringSubmatch(out.String())
	if dir == nil {
		t.Fatal("no report.md named in the output")
	}
	s, err := report.ReadSummary(dir[1])
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict != claims.Partial {
		t.Errorf("summary.json says %s, want partial", s.Verdict)
	}
	md, err := os.ReadFile(filepath.Join(dir[1], report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**Verdict: PARTIAL**") {
		t.Errorf("report.md does not open with the partial verdict")
	}
	junit, err := os.ReadFile(filepath.Join(dir[1], report.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), "<skipped") {
		t.Errorf("junit.xml reports no skipped claim")
	}
}
