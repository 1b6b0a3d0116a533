package targets

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/internal/runlock"
	"github.com/termlab/termlab/internal/stack"
	"github.com/termlab/termlab/labs"
	"github.com/termlab/termlab/labs/scale"
)

// LabFlags are the lab targets' flags; nil is "not given" (the TERMLAB_*
// settings, then the defaults, apply).
type LabFlags struct {
	// By (-by=termlab|script|you) says who does the lab's actions.
	By *string
	// Kubeconfig and Context (or TERMLAB_KUBECONFIG, TERMLAB_CONTEXT) run the
	// lab on that cluster instead of termlab's own.
	Kubeconfig, Context *string
	// NodeAccess (or TERMLAB_NODE_ACCESS=1) lets the lab start node pods there.
	NodeAccess *bool
	// ControlPlaneAccess (or TERMLAB_CONTROL_PLANE_ACCESS=1) lets node access
	// reach the control plane's node too, for the API server's audit log.
	ControlPlaneAccess *bool
	// AllowNodeFaults (or TERMLAB_ALLOW_NODE_FAULTS) names the one worker on
	// which a lab that stops a kubelet may do so, through a kubeconfig.
	AllowNodeFaults *string
	// AllowClusterFaults (or TERMLAB_ALLOW_CLUSTER_FAULTS=1) lets a lab make
	// a change every tenant feels (lab:namespace's APIService), through a
	// kubeconfig.
	AllowClusterFaults *bool
	// NoWait refuses at once, instead of waiting, while another termlab
	// holds the cluster's run lock.
	NoWait *bool
	// limits: lab:scale -limits, the cluster the labs run on.
	limits cluster.Limits
}

// Lab is lab:<name>: runs the named lab of labs/registry.go.
func Lab(ctx context.Context, name string, f LabFlags) error {
	def, ok := labs.ByName(name)
	if !ok {
		return fmt.Errorf("no lab %q in labs/registry.go", name)
	}
	return Labs(ctx, f, def)
}

// LabScale is lab:scale: Lab with the scale lab's size (nil: its
// defaults), on the cluster with the limits asked for.
func LabScale(ctx context.Context, nodes, pods, finalizers *int, stageset, limits *string, f LabFlags) error {
	sz := scale.Flags(nodes, pods, finalizers, stageset)
	l, err := cluster.ParseLimits(deref(limits))
	if err != nil {
		return err
	}
	if l == cluster.LimitsRaised && (deref(f.Kubeconfig) != "" || os.Getenv("TERMLAB_KUBECONFIG") != "") {
		return fmt.Errorf("-limits=raised makes a cluster of its own (%s) with the control plane's limits raised; it does not change a cluster reached with -kubeconfig: leave one of the two out", l.ClusterName())
	}
	sz.Limits = string(l)
	if err := scale.Use(sz); err != nil {
		return err
	}
	f.limits = l
	return Lab(ctx, "scale", f)
}

// LabAll is lab:all: every lab of the registry (labs/registry.go), in
// order, on the cluster the flags name (the same flags as each lab).
func LabAll(ctx context.Context, f LabFlags) error { return Labs(ctx, f, labs.All...) }

// Labs runs the labs in order on the cluster the flags name (termlab's own,
// brought up if needed, by default), then writes the index of runs.
func Labs(ctx context.Context, f LabFlags, defs ...lab.Definition) error {
	ctx, stop := withHangup(ctx)
	defer stop()
	by, err := lab.ParseBy(deref(f.By))
	if err != nil {
		return err
	}
	remote, err := stack.RemoteFromEnv(stack.RemoteFlags{
		Kubeconfig: f.Kubeconfig, Context: f.Context, NodeAccess: f.NodeAccess, ControlPlaneAccess: f.ControlPlaneAccess,
		AllowNodeFaults: f.AllowNodeFaults, AllowClusterFaults: f.AllowClusterFaults,
	})
	if err != nil {
		return err
	}
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return err
	}
	o.NoWait = f.NoWait != nil && *f.NoWait
	o.Limits = f.limits
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
		// This machine's lock for the whole target: cluster:up's repair and
		// health check and every lab run. The cluster's run lock (a Lease) is
		// taken by each of them, named with the run it is for, so a termlab
		// elsewhere may run between two labs of lab:all.
		release, lerr := runlock.Acquire(ctx, log, o.Limits.ClusterName())
		if lerr != nil {
			return lerr
		}
		defer release()
		if k := os.Getenv("KUBECONFIG"); k != "" {
			// On purpose: a lab changes the cluster it runs on (kubelets,
			// taints, an APIService), so the one in a person's shell is
			// never taken without being named.
			log.Infof("KUBECONFIG is set (%s) and not used: labs run on termlab's own cluster unless %s names another (then under the shared-cluster rules)", k, invocation.Flag(`-kubeconfig="$KUBECONFIG"`))
		}
		env, err = stack.Up(ctx, log, o)
	}
	if err != nil {
		return err
	}
	_, err = lab.ExecuteAll(ctx, env, lab.Options{Keep: os.Getenv("TERMLAB_KEEP") != "", By: by, NoWait: o.NoWait}, defs...)
	if index, ierr := resultsindex.Write(project.ResultsDir(o.Root)); ierr == nil {
		log.Infof("index of runs: %s", index)
	} else {
		log.Warnf("could not write the index of runs: %v", ierr)
	}
	return err
}
