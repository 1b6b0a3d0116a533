//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
	"github.com/termlab/termlab/labs/scale"
)

// Lab targets run the experiments (bringing the cluster up if needed) and write results/<lab>/<run-id>/; TERMLAB_KEEP=1 keeps the objects; -by=script has scripts/<lab>.sh do the actions, -by=you has you type them; -kubeconfig=<file> [-context=<name>] runs on that cluster instead, -nodeaccess lets it start a node pod to ask crictl, and -allownodefaults=<node> lets lab:orphan, lab:stuck and lab:statefulset stop that node's kubelet there.
type Lab mg.Namespace

// One line per lab; the list of labs is labs.All (labs/registry.go).

// Finalizer runs lab:finalizer: a finalizer nobody removes, on a real worker and on a kwok fake node.
func (Lab) Finalizer(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool) error {
	return runLabBy(ctx, "finalizer", by, kubeconfig, context, nodeaccess)
}

// Force runs lab:force: a force delete on a healthy worker, the container outliving its API object.
func (Lab) Force(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool) error {
	return runLabBy(ctx, "force", by, kubeconfig, context, nodeaccess)
}

// Orphan runs lab:orphan: the kubelet stopped on a real worker, then a force delete.
func (Lab) Orphan(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool, allownodefaults *string) error {
	return runFaultLabBy(ctx, "orphan", by, kubeconfig, context, nodeaccess, allownodefaults)
}

// Stuck runs lab:stuck: an ordinary delete while the kubelet is down, then the out-of-service taint.
func (Lab) Stuck(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool, allownodefaults *string) error {
	return runFaultLabBy(ctx, "stuck", by, kubeconfig, context, nodeaccess, allownodefaults)
}

// Statefulset runs lab:statefulset: at most one pod per identity, until a force delete makes two processes write under one name.
func (Lab) Statefulset(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool, allownodefaults *string) error {
	return runFaultLabBy(ctx, "statefulset", by, kubeconfig, context, nodeaccess, allownodefaults)
}

// Kwok runs lab:kwok: the same deletions on a real worker and on kwok fake nodes under three stage sets, with a fidelity verdict.
func (Lab) Kwok(ctx context.Context, by, kubeconfig, context *string, nodeaccess *bool) error {
	return runLabBy(ctx, "kwok", by, kubeconfig, context, nodeaccess)
}

// Scale runs lab:scale: a namespace of kwok pods deleted, finalizers released, the record checked complete; default -nodes=100 -pods=5000 -finalizers=20 -stageset=faithful; -by=script|you as the other labs (a kubectl per finalizer: use a small size).
func (Lab) Scale(ctx context.Context, nodes, pods, finalizers *int, stageset, by, kubeconfig, context *string, nodeaccess *bool) error {
	if err := scale.Use(scale.Flags(nodes, pods, finalizers, stageset)); err != nil {
		return err
	}
	return runLabBy(ctx, "scale", by, kubeconfig, context, nodeaccess)
}

// All runs every lab of the registry (labs/registry.go) in order.
func (Lab) All(ctx context.Context) error { return runLabs(ctx, labs.All...) }

func runLab(ctx context.Context, name string) error { return runLabBy(ctx, name, nil, nil, nil, nil) }

// runLabBy runs the named lab; by (-by=termlab|script|you) says who does its
// actions; kubeconfig (or TERMLAB_KUBECONFIG) runs it on that cluster instead
// of termlab's own, with node pods if nodeaccess (or TERMLAB_NODE_ACCESS=1).
func runLabBy(ctx context.Context, name string, by, kubeconfig, kubeContext *string, nodeaccess *bool) error {
	def, ok := labs.ByName(name)
	if !ok {
		return fmt.Errorf("no lab %q in labs/registry.go", name)
	}
	return runLabsBy(ctx, by, stack.RemoteFromEnv(kubeconfig, kubeContext, nodeaccess, nil), def)
}

// runFaultLabBy runs a lab that stops a kubelet: through a kubeconfig only
// with allownodefaults (or TERMLAB_ALLOW_NODE_FAULTS) naming the worker.
func runFaultLabBy(ctx context.Context, name string, by, kubeconfig, kubeContext *string, nodeaccess *bool, allownodefaults *string) error {
	def, ok := labs.ByName(name)
	if !ok {
		return fmt.Errorf("no lab %q in labs/registry.go", name)
	}
	return runLabsBy(ctx, by, stack.RemoteFromEnv(kubeconfig, kubeContext, nodeaccess, allownodefaults), def)
}

func runLabs(ctx context.Context, defs ...lab.Definition) error {
	return runLabsBy(ctx, nil, stack.RemoteFromEnv(nil, nil, nil, nil), defs...)
}

func runLabsBy(ctx context.Context, byFlag *string, remote stack.Remote, defs ...lab.Definition) error {
	by := ""
	if byFlag != nil {
		by = *byFlag
	}
	by, err := lab.ParseBy(by)
	if err != nil {
		return err
	}
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	log := progress.Default()
	var env *cluster.Env
	if remote.Kubeconfig != "" {
		// Another cluster: nothing is built or started, and the node pods
		// are removed on every exit path.
		var cleanup func(context.Context) error
		env, cleanup, err = stack.RemoteEnv(ctx, log, remote)
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if cerr := cleanup(cctx); cerr != nil {
				log.Warnf("removing the node pods: %v", cerr)
			}
		}()
	} else {
		// One lock for the whole target: cluster:up's repair and health check and
		// every lab run, so nobody else's run slips in between.
		release, lerr := runlock.Acquire(ctx, log, cluster.DefaultName)
		if lerr != nil {
			return lerr
		}
		defer release()
		env, err = stack.Up(ctx, log, o)
	}
	if err != nil {
		return err
	}
	_, err = lab.ExecuteAll(ctx, env, lab.Options{Keep: os.Getenv("TERMLAB_KEEP") != "", By: by}, defs...)
	if index, ierr := resultsindex.Write(project.ResultsDir(o.Root)); ierr == nil {
		log.Infof("index of runs: %s", index)
	} else {
		log.Warnf("could not write the index of runs: %v", ierr)
	}
	return err
}
