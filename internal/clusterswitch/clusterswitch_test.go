package clusterswitch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func spec() Spec {
	return Spec{
		RunID: "r1", Holder: "lab:stuck run r1 (root@h pid 1)", LeaseNamespace: "kube-system", LeaseName: "termlab-run-lock",
		StaleAfter: 30 * time.Second, Poll: 10 * time.Millisecond,
		Undo: Undo{Node: "w2", TaintKey: "node.kubernetes.io/out-of-service", TaintEffect: "NoExecute", TaintedBy: "termlab.dev/tainted-by-run"},
		Self: Self{Namespace: "termlab-switch-x-1", ClusterRole: "termlab-switch-x-1", ClusterRoleBinding: "termlab-switch-x-1"},
	}
}

// The switch fires when the Lease stops naming the run, is gone, or is
// not renewed for StaleAfter by its own clock; a failed read is not the
// run gone, until StaleAfter has passed with no renewal seen.
func TestWatcherFiresOnlyWhenTheRunIsGone(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	held := func(rv string) Lease { return Lease{Found: true, Holder: spec().Holder, ResourceVersion: rv} }
	down := errors.New("the API server does not answer")
	type look struct {
		at   time.Duration
		l    Lease
		err  error
		fire string // "" for no fire, else a word of why
	}
	for _, tc := range []struct {
		name  string
		looks []look
	}{
		{"renewed every 2 s", []look{{0, held("1"), nil, ""}, {2 * time.Second, held("2"), nil, ""}, {40 * time.Second, held("3"), nil, ""}}},
		{"lease gone", []look{{0, held("1"), nil, ""}, {2 * time.Second, Lease{}, nil, "is gone"}}},
		{"another holder", []look{{0, held("1"), nil, ""}, {2 * time.Second, Lease{Found: true, Holder: "lab:force run r2", ResourceVersion: "9"}, nil, "names \"lab:force run r2\""}}},
		{"released (no holder)", []look{{0, held("1"), nil, ""}, {2 * time.Second, Lease{Found: true, ResourceVersion: "9"}, nil, "names \"\""}}},
		{"not renewed", []look{{0, held("1"), nil, ""}, {29 * time.Second, held("1"), nil, ""}, {30 * time.Second, held("1"), nil, "not renewed for 30s"}}},
		{"reads fail, then renewed", []look{{0, held("1"), nil, ""}, {20 * time.Second, Lease{}, down, ""}, {25 * time.Second, held("2"), nil, ""}, {50 * time.Second, held("2"), nil, ""}}},
		{"reads fail past the bound", []look{{0, held("1"), nil, ""}, {10 * time.Second, Lease{}, down, ""}, {31 * time.Second, Lease{}, down, "not renewed for 31s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &watcher{spec: spec()}
			for i, l := range tc.looks {
				fires, why := w.look(l.l, l.err, t0.Add(l.at))
				switch {
				case l.fire == "" && fires:
					t.Fatalf("look %d at %s fired: %s", i, l.at, why)
				case l.fire != "" && !fires:
					t.Fatalf("look %d at %s did not fire, want %q", i, l.at, l.fire)
				case l.fire != "" && !strings.Contains(why, l.fire):
					t.Fatalf("look %d fired for %q, want %q", i, why, l.fire)
				}
			}
		})
	}
}

// The patch removes only the run's taint and mark, with the node's
// resourceVersion; another run's mark (or none) leaves the node alone.
func TestUntaintPatch(t *testing.T) {
	u := spec().Undo
	taints := []taint{{Key: "other", Effect: "NoSchedule"}, {Key: u.TaintKey, Value: "shutdown", Effect: u.TaintEffect}, {Key: u.TaintKey, Effect: "NoSchedule"}}
	patch, changed := untaintPatch("42", map[string]string{u.TaintedBy: "r1"}, taints, u, "r1")
	if !changed {
		t.Fatal("the run's own taint was not removed")
	}
	meta := patch["metadata"].(map[string]any)
	if meta["resourceVersion"] != "42" || meta["annotations"].(map[string]any)[u.TaintedBy] != nil {
		t.Errorf("metadata %v: want the resourceVersion and the mark removed", meta)
	}
	kept := patch["spec"].(map[string]any)["taints"].([]taint)
	if len(kept) != 2 || kept[0].Key != "other" || kept[1].Effect != "NoSchedule" {
		t.Errorf("taints kept %+v: want the other two", kept)
	}
	for _, mark := range []map[string]string{{u.TaintedBy: "r2"}, nil} {
		if _, changed := untaintPatch("42", mark, taints, u, "r1"); changed {
			t.Errorf("mark %v: the node was changed", mark)
		}
	}
}

// fakeAPI answers the switch as the cluster would; fail makes the first
// undo attempts fail.
type fakeAPI struct {
	mu       sync.Mutex
	leases   []Lease // one per read; the last repeats
	reads    int
	failUndo int
	calls    []string
}

func (f *fakeAPI) GetLease(context.Context, string, string) (Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := min(f.reads, len(f.leases)-1)
	f.reads++
	return f.leases[i], nil
}

func (f *fakeAPI) RemoveTaint(_ context.Context, u Undo, runID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failUndo > 0 {
		f.failUndo--
		f.calls = append(f.calls, "untaint failed")
		return false, errors.New("conflict")
	}
	f.calls = append(f.calls, "untaint "+u.Node+" of "+runID)
	return true, nil
}

func (f *fakeAPI) DeleteAPIService(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete apiservice "+name)
	return nil
}

func (f *fakeAPI) DeleteNamespace(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete namespace "+name)
	return nil
}

func (f *fakeAPI) DeleteSelf(_ context.Context, self Self) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete self "+self.Namespace)
	return nil
}

func TestRunUndoesThenRemovesItself(t *testing.T) {
	held := Lease{Found: true, Holder: spec().Holder, ResourceVersion: "1"}
	t.Run("taint, after a failed try", func(t *testing.T) {
		api := &fakeAPI{leases: []Lease{held, held, {}}, failUndo: 1}
		if err := Run(context.Background(), api, spec(), func(string) {}, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(api.calls, "; "); got != "untaint failed; untaint w2 of r1; delete self termlab-switch-x-1" {
			t.Errorf("calls: %s", got)
		}
	})
	t.Run("APIService", func(t *testing.T) {
		s := spec()
		s.Undo = Undo{APIService: "v1.r1.unavailable.termlab.dev"}
		api := &fakeAPI{leases: []Lease{held, {Found: true, Holder: "someone else", ResourceVersion: "2"}}}
		if err := Run(context.Background(), api, s, func(string) {}, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(api.calls, "; "); got != "delete apiservice v1.r1.unavailable.termlab.dev; delete self termlab-switch-x-1" {
			t.Errorf("calls: %s", got)
		}
	})
	t.Run("node pods", func(t *testing.T) {
		s := spec()
		s.Undo = Undo{NodePods: "termlab-nodes-r1"}
		api := &fakeAPI{leases: []Lease{held, {}}}
		if err := Run(context.Background(), api, s, func(string) {}, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(api.calls, "; "); got != "delete namespace termlab-nodes-r1; delete self termlab-switch-x-1" {
			t.Errorf("calls: %s", got)
		}
	})
	t.Run("disarmed while the run holds its lock", func(t *testing.T) {
		api := &fakeAPI{leases: []Lease{held}}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := Run(ctx, api, spec(), func(string) {}, time.Now); err != nil {
			t.Fatal(err)
		}
		if len(api.calls) != 0 || api.reads < 2 {
			t.Errorf("calls %v after %d reads: want several reads and nothing undone", api.calls, api.reads)
		}
	})
}

func TestSpecValidate(t *testing.T) {
	if err := spec().Validate(); err != nil {
		t.Fatalf("a good spec: %v", err)
	}
	for name, mutate := range map[string]func(*Spec){
		"no holder":         func(s *Spec) { s.Holder = "" },
		"poll >= stale":     func(s *Spec) { s.Poll = s.StaleAfter },
		"two undos":         func(s *Spec) { s.Undo.APIService = "x" },
		"three undos":       func(s *Spec) { s.Undo.APIService, s.Undo.NodePods = "x", "y" },
		"its own namespace": func(s *Spec) { s.Undo = Undo{NodePods: s.Self.Namespace} },
		"no undo":           func(s *Spec) { s.Undo = Undo{} },
		"taint without key": func(s *Spec) { s.Undo.TaintKey = "" },
		"no self":           func(s *Spec) { s.Self.ClusterRole = "" },
	} {
		s := spec()
		mutate(&s)
		if s.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
