//go:build mage

package main

import (
	"context"

	"github.com/magefile/mage/mg"

	"github.com/termlab/termlab/internal/targets"
)

// Lab targets run the experiments (bringing the cluster up if needed) and write results/<lab>/<run-id>/; TERMLAB_KEEP=1 keeps the objects; -by=script has scripts/<lab>.sh do the actions, -by=you has you type them; -kubeconfig=<file> [-context=<name>] runs on that cluster instead, -nodeaccess lets it start a node pod on workers to ask crictl (-controlplaneaccess: on the control plane too, for the audit log), and -allownodefaults=<node> lets lab:orphan, lab:stuck and lab:statefulset stop that node's kubelet there (lab:mount: keep a volume busy on it) once it is cordoned and holds only DaemonSet pods and termlab's, -allowclusterfaults lets lab:namespace register an APIService with no backend there (discovery fails for every tenant while it exists); those flags need -kubeconfig; -nowait refuses at once, instead of waiting, while another termlab holds the cluster's run lock (a Lease in the cluster).
type Lab mg.Namespace

// One line per lab; the list of labs is labs.All (labs/registry.go). The
// bodies are in internal/targets, shared with the termlab binary.

// Finalizer runs lab:finalizer: a finalizer nobody removes, on a real worker and on a kwok fake node.
func (Lab) Finalizer(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.Lab(ctx, "finalizer", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Force runs lab:force: a force delete on a healthy worker, the container outliving its API object.
func (Lab) Force(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.Lab(ctx, "force", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Orphan runs lab:orphan: the kubelet stopped on a real worker, then a force delete.
func (Lab) Orphan(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, allownodefaults *string, nowait *bool) error {
	return targets.Lab(ctx, "orphan", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowNodeFaults: allownodefaults, NoWait: nowait})
}

// Mount runs lab:mount: a deleted pod whose container exited stays while a process on the node keeps its volume busy.
func (Lab) Mount(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, allownodefaults *string, nowait *bool) error {
	return targets.Lab(ctx, "mount", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowNodeFaults: allownodefaults, NoWait: nowait})
}

// Stuck runs lab:stuck: an ordinary delete while the kubelet is down, then the out-of-service taint.
func (Lab) Stuck(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, allownodefaults *string, nowait *bool) error {
	return targets.Lab(ctx, "stuck", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowNodeFaults: allownodefaults, NoWait: nowait})
}

// Statefulset runs lab:statefulset: at most one pod per identity, until a force delete makes two processes write under one name.
func (Lab) Statefulset(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, allownodefaults *string, nowait *bool) error {
	return targets.Lab(ctx, "statefulset", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowNodeFaults: allownodefaults, NoWait: nowait})
}

// Graceful runs lab:graceful: a normal delete of pods behind Services under traffic; which requests fail, in which window, with and without a preStop sleep.
func (Lab) Graceful(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.Lab(ctx, "graceful", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Kwok runs lab:kwok: the same deletions on a real worker and on kwok fake nodes under three stage sets, with a fidelity verdict.
func (Lab) Kwok(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.Lab(ctx, "kwok", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Sidecar runs lab:sidecar: native sidecars stopped after the main container, in reverse start order, and right after a main container that used up the grace period.
func (Lab) Sidecar(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.Lab(ctx, "sidecar", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Scale runs lab:scale: a namespace of kwok pods deleted, finalizers released, the record checked complete; default -nodes=100 -pods=5000 -finalizers=20 -stageset=faithful -limits=default (raised: a cluster termlab-raised with the control plane's request limits lifted); -by=script|you as the other labs (a kubectl per finalizer: use a small size).
func (Lab) Scale(ctx context.Context, nodes, pods, finalizers *int, stageset, limits, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, nowait *bool) error {
	return targets.LabScale(ctx, nodes, pods, finalizers, stageset, limits, targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, NoWait: nowait})
}

// Namespace runs lab:namespace: namespaces held by an unavailable APIService, an orphaned custom resource and a claim in use, each found from the namespace's conditions and released the right way.
func (Lab) Namespace(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess, allowclusterfaults *bool, nowait *bool) error {
	return targets.Lab(ctx, "namespace", targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowClusterFaults: allowclusterfaults, NoWait: nowait})
}

// All runs every lab of the registry (labs/registry.go) in order; it takes every lab's flags (-by, -kubeconfig, -context, -nodeaccess, -controlplaneaccess, -allownodefaults, -allowclusterfaults, -nowait); a lab the cluster cannot carry is skipped and said, and makes the whole partial (exit 4).
func (Lab) All(ctx context.Context, by, kubeconfig, context *string, nodeaccess, controlplaneaccess *bool, allownodefaults *string, allowclusterfaults, nowait *bool) error {
	return targets.LabAll(ctx, targets.LabFlags{By: by, Kubeconfig: kubeconfig, Context: context, NodeAccess: nodeaccess, ControlPlaneAccess: controlplaneaccess, AllowNodeFaults: allownodefaults, AllowClusterFaults: allowclusterfaults, NoWait: nowait})
}
