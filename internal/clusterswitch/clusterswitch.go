// Package clusterswitch is the dead-man's switch for what a lab changes in
// the cluster itself (a node's taint, an APIService) and for termlab's
// node pods (privileged, the host's root mounted): a small pod, armed
// before the change, that undoes it if the run that made it goes away
// without undoing it (SIGKILL, a lost machine). The run's liveness is the
// cluster's run lock (the Lease kube-system/termlab-run-lock, renewed every
// 2 s while the run holds it), or for node pods the Lease that marks their
// namespace in use (runlock.KeepAlive): when the Lease stops naming the run, or is
// not renewed for Spec.StaleAfter by the pod's own clock, the switch fires.
// It then removes the taint (only while the node's mark names the run),
// deletes the APIService or the node pods' namespace, and removes itself: its ClusterRole, its binding
// and its namespace. The normal path disarms it after undoing the change.
//
// The kubelet's switch is a systemd timer on the node (internal/kubelet);
// this one lives in the cluster, so it needs nothing of a node termlab
// faults. It speaks to the API server with the pod's ServiceAccount, whose
// ClusterRole names each object it may touch (resourceNames): it can do
// nothing else. This package has no client-go: the workload image's binary
// (cmd/heartbeat) runs it, and stays small.
package clusterswitch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SpecEnv is the environment variable that carries the Spec, as JSON.
const SpecEnv = "TERMLAB_SWITCH_SPEC"

// Spec is one armed switch: whose run, what it undoes, and how it removes
// itself afterwards.
type Spec struct {
	// RunID is the run that made the change; Holder the run lock's holder
	// identity while it runs (runlock.Identity).
	RunID  string `json:"runID"`
	Holder string `json:"holder"`
	// LeaseNamespace and LeaseName are the Lease the run renews while it
	// lives: the run lock's, or the node pods' namespace's alive Lease.
	LeaseNamespace string `json:"leaseNamespace"`
	LeaseName      string `json:"leaseName"`
	// StaleAfter is how long the Lease may go unrenewed (measured by the
	// pod, from the last change of its resourceVersion) before the switch
	// fires; Poll how often it looks.
	StaleAfter time.Duration `json:"staleAfter"`
	Poll       time.Duration `json:"poll"`
	// Undo is what the switch undoes when it fires.
	Undo Undo `json:"undo"`
	// Self is what it removes afterwards.
	Self Self `json:"self"`
}

// Undo is the change to take back: a taint on a node (removed only while
// the node's TaintedBy annotation names RunID, so a later run's taint of
// the same key stays), an APIService, or a namespace of node pods
// (privileged, the host's root mounted: internal/nodepod).
type Undo struct {
	Node        string `json:"node,omitempty"`
	TaintKey    string `json:"taintKey,omitempty"`
	TaintEffect string `json:"taintEffect,omitempty"`
	// TaintedBy is the node annotation whose value names the run that tainted it.
	TaintedBy  string `json:"taintedBy,omitempty"`
	APIService string `json:"apiService,omitempty"`
	// NodePods is the namespace the node pods run in, deleted with them.
	NodePods string `json:"nodePods,omitempty"`
}

// What says in words what the switch undoes.
func (u Undo) What() string {
	switch {
	case u.Node != "":
		return fmt.Sprintf("taint %s:%s on node %s", u.TaintKey, u.TaintEffect, u.Node)
	case u.APIService != "":
		return "APIService " + u.APIService
	case u.NodePods != "":
		return "the node pods in namespace " + u.NodePods
	}
	return "nothing"
}

// kinds counts the changes u names: a switch undoes exactly one.
func (u Undo) kinds() int {
	n := 0
	for _, set := range []bool{u.Node != "", u.APIService != "", u.NodePods != ""} {
		if set {
			n++
		}
	}
	return n
}

// Self names the switch's own objects, which it deletes after firing.
type Self struct {
	Namespace          string `json:"namespace"`
	ClusterRole        string `json:"clusterRole"`
	ClusterRoleBinding string `json:"clusterRoleBinding"`
}

// Validate refuses a Spec the switch could not act on.
func (s Spec) Validate() error {
	switch {
	case s.RunID == "" || s.Holder == "" || s.LeaseNamespace == "" || s.LeaseName == "":
		return errors.New("the switch needs the run id, the lock holder and the Lease")
	case s.StaleAfter <= 0 || s.Poll <= 0 || s.Poll >= s.StaleAfter:
		return fmt.Errorf("the switch needs 0 < poll (%s) < staleAfter (%s)", s.Poll, s.StaleAfter)
	case s.Undo.kinds() != 1:
		return errors.New("the switch undoes one thing: a node's taint, an APIService or the node pods' namespace")
	case s.Undo.NodePods != "" && s.Undo.NodePods == s.Self.Namespace:
		return errors.New("the node pods' namespace is not the switch's own: the switch removes its namespace after undoing")
	case s.Undo.Node != "" && (s.Undo.TaintKey == "" || s.Undo.TaintEffect == "" || s.Undo.TaintedBy == ""):
		return errors.New("a taint's switch needs the taint's key, effect and the run's mark")
	case s.Self.Namespace == "" || s.Self.ClusterRole == "" || s.Self.ClusterRoleBinding == "":
		return errors.New("the switch needs its own namespace, ClusterRole and binding to remove them")
	}
	return nil
}

// Bound is the longest the change can outlive its run: the Lease's
// staleness plus one look.
func (s Spec) Bound() time.Duration { return s.StaleAfter + s.Poll }

// Lease is what the switch reads of the run lock's Lease; Found false when
// there is none (the run released and deleted it, or nobody holds it).
type Lease struct {
	Found           bool
	Holder          string
	ResourceVersion string
}

// API is what the switch does in the cluster; InCluster is the real one.
type API interface {
	GetLease(ctx context.Context, namespace, name string) (Lease, error)
	// RemoveTaint removes the taint from the node, and the run's mark,
	// only while the mark names runID; it says whether it changed the node.
	RemoveTaint(ctx context.Context, u Undo, runID string) (bool, error)
	// DeleteAPIService deletes it; gone already is no error.
	DeleteAPIService(ctx context.Context, name string) error
	// DeleteNamespace deletes it; gone or going already is no error.
	DeleteNamespace(ctx context.Context, name string) error
	// DeleteSelf removes the switch's binding, role and namespace.
	DeleteSelf(ctx context.Context, self Self) error
}

// watcher decides, look by look, whether the run is gone: its Lease no
// longer names it, or has not changed for StaleAfter by the pod's clock
// (a monotonic one: the Lease's own times come from termlab's host clock).
type watcher struct {
	spec     Spec
	lastRV   string
	lastSeen time.Time
}

// look takes one reading of the Lease at now and says whether the switch
// fires, and why. A failed read counts as no change: the API server being
// away is not the run being away, until StaleAfter has passed.
func (w *watcher) look(l Lease, readErr error, now time.Time) (fire bool, why string) {
	if w.lastSeen.IsZero() {
		w.lastSeen = now
	}
	switch {
	case readErr != nil:
	case !l.Found:
		return true, fmt.Sprintf("the Lease %s/%s is gone: run %s ended without disarming its switch", w.spec.LeaseNamespace, w.spec.LeaseName, w.spec.RunID)
	case l.Holder != w.spec.Holder:
		return true, fmt.Sprintf("the Lease %s/%s names %q, not run %s: the run ended or lost it without disarming its switch", w.spec.LeaseNamespace, w.spec.LeaseName, l.Holder, w.spec.RunID)
	case l.ResourceVersion != w.lastRV:
		w.lastRV, w.lastSeen = l.ResourceVersion, now
	}
	if stale := now.Sub(w.lastSeen); stale >= w.spec.StaleAfter {
		return true, fmt.Sprintf("the Lease %s/%s was not renewed for %s (run %s renews it every 2 s while it runs)", w.spec.LeaseNamespace, w.spec.LeaseName, stale.Round(time.Second), w.spec.RunID)
	}
	return false, ""
}

// Run watches the run's Lease until the run is gone, then undoes the
// change and removes the switch; or until ctx ends (the switch disarmed:
// its pod deleted). say gets each thing it does, for the pod's log.
func Run(ctx context.Context, api API, spec Spec, say func(string), now func() time.Time) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	w := &watcher{spec: spec}
	say(fmt.Sprintf("armed: undoes %s if run %s's Lease %s/%s stops naming it or is not renewed for %s", spec.Undo.What(), spec.RunID, spec.LeaseNamespace, spec.LeaseName, spec.StaleAfter))
	tick := time.NewTicker(spec.Poll)
	defer tick.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, spec.Poll)
		l, err := api.GetLease(lctx, spec.LeaseNamespace, spec.LeaseName)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			say("reading the Lease: " + err.Error())
		}
		if fires, why := w.look(l, err, now()); fires {
			say("firing: " + why)
			return fire(ctx, api, spec, say)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// fire undoes the change, retrying until it is done (the API server may
// be the reason the Lease went stale), then removes the switch.
func fire(ctx context.Context, api API, spec Spec, say func(string)) error {
	undo := func(ctx context.Context) error {
		if spec.Undo.Node != "" {
			changed, err := api.RemoveTaint(ctx, spec.Undo, spec.RunID)
			if err == nil {
				say(map[bool]string{true: "removed ", false: "nothing to remove: "}[changed] + spec.Undo.What())
			}
			return err
		}
		var err error
		if spec.Undo.NodePods != "" {
			err = api.DeleteNamespace(ctx, spec.Undo.NodePods)
		} else {
			err = api.DeleteAPIService(ctx, spec.Undo.APIService)
		}
		if err == nil {
			say("deleted " + spec.Undo.What())
		}
		return err
	}
	for _, step := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"undoing " + spec.Undo.What(), undo},
		{"removing the switch", func(ctx context.Context) error { return api.DeleteSelf(ctx, spec.Self) }},
	} {
		for {
			sctx, cancel := context.WithTimeout(ctx, 10*spec.Poll)
			err := step.do(sctx)
			cancel()
			if err == nil {
				break
			}
			say(step.what + ": " + err.Error() + "; trying again")
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w", step.what, err)
			case <-time.After(spec.Poll):
			}
		}
	}
	say("done")
	return nil
}

// SpecFromEnv reads the Spec from SpecEnv.
func SpecFromEnv(getenv func(string) string) (Spec, error) {
	var s Spec
	raw := getenv(SpecEnv)
	if raw == "" {
		return s, fmt.Errorf("%s is not set", SpecEnv)
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, fmt.Errorf("%s: %w", SpecEnv, err)
	}
	return s, s.Validate()
}
