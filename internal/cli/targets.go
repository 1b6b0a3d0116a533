package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/targets"
	"github.com/termlab/termlab/labs"
)

// The mage targets the binary runs, under their mage names. Each command
// needs a termlab checkout (manifests/, results/) and calls the same
// function in internal/targets as its mage target; flags not given are nil
// there, so the TERMLAB_* settings apply as under mage.

// labCommands are lab:<name> for every lab of labs/registry.go, and lab:all.
func labCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, def := range labs.All {
		name := def.Name
		cmd := repoCommand(def.Title(), "Runs "+def.Title()+": "+def.Summary, nil)
		addLabFlags(cmd, def.Uses.FaultsANode(), def.Uses.FaultsTheCluster())
		if name == "scale" {
			cmd.Flags().Int("nodes", 0, "kwok fake nodes (default 100)")
			cmd.Flags().Int("pods", 0, "pods in the namespace (default 5000)")
			cmd.Flags().Int("finalizers", 0, "pods with a finalizer to release (default 20)")
			cmd.Flags().String("stageset", "", "kwok stage set (default faithful)")
			cmd.Flags().String("limits", "", "the control plane's request limits: default, or raised (a cluster termlab-raised with them lifted)")
			cmd.RunE = func(cmd *cobra.Command, _ []string) error {
				return failed(targets.LabScale(cmd.Context(), intFlag(cmd, "nodes"), intFlag(cmd, "pods"), intFlag(cmd, "finalizers"), stringFlag(cmd, "stageset"), stringFlag(cmd, "limits"), labFlags(cmd)))
			}
		} else {
			cmd.RunE = func(cmd *cobra.Command, _ []string) error {
				return failed(targets.Lab(cmd.Context(), name, labFlags(cmd)))
			}
		}
		cmds = append(cmds, cmd)
	}
	all := repoCommand("lab:all", "Runs every lab of the registry (labs/registry.go) in order", func(ctx context.Context, cmd *cobra.Command) error {
		return targets.LabAll(ctx, labFlags(cmd))
	})
	addLabFlags(all, true, true)
	return append(cmds, all)
}

// addLabFlags are the lab targets' flags (mage's -by, -kubeconfig, -context,
// -nodeaccess, -allownodefaults, -allowclusterfaults, -nowait, spelt as
// kubectl would).
func addLabFlags(cmd *cobra.Command, faults, clusterFaults bool) {
	cmd.Flags().String("by", "", "who does the lab's actions: termlab (default), script (scripts/<lab>.sh) or you")
	cmd.Flags().String("kubeconfig", "", "run on the cluster of this kubeconfig instead of termlab's own (TERMLAB_KUBECONFIG)")
	cmd.Flags().String("context", "", "the kubeconfig's context (TERMLAB_CONTEXT; default its current one)")
	cmd.Flags().Bool("node-access", false, "with --kubeconfig: start node pods on workers to ask the container runtime (TERMLAB_NODE_ACCESS=1)")
	cmd.Flags().Bool("control-plane-access", false, "with --kubeconfig: node pods on the control plane too, whose disk holds the cluster's CA and etcd keys, to read the API server's audit log (TERMLAB_CONTROL_PLANE_ACCESS=1)")
	cmd.Flags().Bool("no-wait", false, "refuse at once, instead of waiting, while another termlab holds the cluster's run lock (a Lease in the cluster)")
	if faults {
		cmd.Flags().String("allow-node-faults", "", "with --kubeconfig: the one worker whose kubelet the lab may stop, once cordoned and holding only DaemonSet pods and termlab's (TERMLAB_ALLOW_NODE_FAULTS)")
	}
	if clusterFaults {
		cmd.Flags().Bool("allow-cluster-faults", false, "with --kubeconfig: let the lab make a change every tenant feels (lab:namespace: an APIService with no backend fails discovery while it exists) (TERMLAB_ALLOW_CLUSTER_FAULTS=1)")
	}
}

func labFlags(cmd *cobra.Command) targets.LabFlags {
	return targets.LabFlags{
		By: stringFlag(cmd, "by"), Kubeconfig: stringFlag(cmd, "kubeconfig"), Context: stringFlag(cmd, "context"),
		NodeAccess: boolFlag(cmd, "node-access"), ControlPlaneAccess: boolFlag(cmd, "control-plane-access"), AllowNodeFaults: stringFlag(cmd, "allow-node-faults"),
		AllowClusterFaults: boolFlag(cmd, "allow-cluster-faults"),
		NoWait:             boolFlag(cmd, "no-wait"),
	}
}

func clusterCommands() []*cobra.Command {
	return []*cobra.Command{
		repoCommand("cluster:up", "Creates the cluster (1 control plane, 2 workers, kwok fake nodes) or reuses a healthy one", func(ctx context.Context, _ *cobra.Command) error {
			return targets.ClusterUp(ctx)
		}),
		repoCommand("cluster:status", "Shows the nodes, kwok and versions of the running cluster", func(ctx context.Context, cmd *cobra.Command) error {
			return targets.ClusterStatus(ctx, cmd.OutOrStdout())
		}),
		repoCommand("cluster:down", "Deletes the cluster and its project-local kubeconfig", func(ctx context.Context, _ *cobra.Command) error {
			return targets.ClusterDown(ctx)
		}),
	}
}

func resultsCommands() []*cobra.Command {
	compare := repoCommand("results:compare", "Says whether runs match, normalised: by default each lab's latest run against results/reference/<lab>", func(ctx context.Context, cmd *cobra.Command) error {
		return targets.ResultsCompare(ctx, cmd.OutOrStdout(), stringFlag(cmd, "run"), stringFlag(cmd, "against"))
	})
	compare.Flags().String("run", "", "the run to compare (default each lab's latest)")
	compare.Flags().String("against", "", "the run to compare it with (default its lab's reference run)")
	index := repoCommand("results:index", "Regenerates results/index.md and index.html", func(_ context.Context, cmd *cobra.Command) error {
		return targets.ResultsIndex(cmd.OutOrStdout())
	})
	reference := repoCommand("results:reference", "Makes a passing run its lab's reference run, results/reference/<lab>", func(_ context.Context, cmd *cobra.Command) error {
		return targets.ResultsReference(cmd.OutOrStdout(), stringFlag(cmd, "run"))
	})
	reference.Flags().String("run", "", "the run (default each lab's latest)")
	render := repoCommand("results:render", "Writes a run's reports again with the current code from its record", func(_ context.Context, cmd *cobra.Command) error {
		return targets.ResultsRender(cmd.OutOrStdout(), stringFlag(cmd, "run"))
	})
	render.Flags().String("run", "", "the run (default every reference run)")
	return []*cobra.Command{compare, index, reference, render}
}

// runsOn refuses, on an OS where it cannot run, a command that needs a
// local Docker engine running Linux containers: the labs, the cluster
// targets (kind and kwok nodes are containers on it) and the workshop
// commands that drive or load into that engine. Windows is refused up
// front, with what to use instead; on macOS, Docker Desktop serves.
func runsOn(goos, command string) error {
	if goos != "windows" || !needsEngine(command) {
		return nil
	}
	return fmt.Errorf("%s needs Linux or macOS with Docker (its cluster's nodes are kind and kwok containers on a local engine), and this is Windows: run it in WSL 2. diagnose, version and workshop:verify work everywhere", command)
}

// needsEngine says whether a command runs containers on the local engine.
func needsEngine(command string) bool {
	switch command {
	case "workshop", "workshop:run", "workshop:reset", "workshop:bundle", "workshop:load":
		return true
	}
	return strings.HasPrefix(command, "lab:") || strings.HasPrefix(command, "cluster:")
}

// workshopCommands are the workshop targets: `workshop` runs the guided
// session in an unpacked bundle (whose binary this is) or a checkout;
// workshop:load and workshop:verify read an archive and need neither.
func workshopCommands() []*cobra.Command {
	run := repoCommand("workshop", "Runs every lab in order as a guided session, explained and compared with the reference runs; it waits for Enter between labs on a terminal (--unattended or TERMLAB_STEP=0: never)", func(ctx context.Context, cmd *cobra.Command) error {
		return targets.WorkshopRun(ctx, boolFlag(cmd, "step"), boolFlag(cmd, "unattended"))
	})
	run.Aliases = []string{"workshop:run"}
	run.Flags().Bool("step", false, "wait for Enter between labs (default: when stdin is a terminal)")
	run.Flags().Bool("unattended", false, "never wait for Enter")
	reset := repoCommand("workshop:reset", "Returns the cluster to the start state in seconds: kubelets running, leftovers of runs removed, run namespaces deleted; recreates only a broken cluster", func(ctx context.Context, _ *cobra.Command) error {
		return targets.WorkshopReset(ctx)
	})
	bundle := repoCommand("workshop:bundle", "Writes one archive with everything a session needs offline: images, inputs, kwok sources, reference runs, this binary, digests (in a checkout, with Go and Docker)", func(ctx context.Context, cmd *cobra.Command) error {
		return targets.WorkshopBundle(ctx, cmd.OutOrStdout(), stringFlag(cmd, "out"))
	})
	bundle.Flags().String("out", "", "the archive to write (default bin/termlab-workshop.tar.gz)")
	load := archiveCommand("workshop:load", "Verifies every digest of a bundle, then loads its images into Docker and unpacks it into ./termlab-workshop (TERMLAB_WORKSHOP_DIR to change); a damaged bundle changes nothing", targets.WorkshopLoad)
	verify := archiveCommand("workshop:verify", "Checks every digest of a bundle without changing anything", targets.WorkshopVerify)
	return []*cobra.Command{run, reset, bundle, load, verify}
}

// archiveCommand is a workshop command on one bundle archive; it needs no
// checkout (workshop:load still needs a local engine, see runsOn).
func archiveCommand(name, short string, run func(context.Context, io.Writer, string) error) *cobra.Command {
	return &cobra.Command{
		Use:     name + " <archive>",
		Short:   short,
		GroupID: groupAnywhere,
		Args:    cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if err := runsOn(runtime.GOOS, name); err != nil {
				return &exitError{code: diagnose.ExitUsage, err: err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return failed(run(cmd.Context(), cmd.OutOrStdout(), args[0]))
		},
	}
}

// The groups of `termlab --help`: most commands read manifests/ and write
// results/ of a checkout (or of an unpacked workshop bundle).
const (
	groupAnywhere = "anywhere"
	groupCheckout = "checkout"
)

func commandGroups() []*cobra.Group {
	return []*cobra.Group{
		{ID: groupAnywhere, Title: "Commands that run anywhere:"},
		{ID: groupCheckout, Title: "Commands that need a termlab checkout or an unpacked workshop bundle (run there, or set TERMLAB_ROOT to one):"},
	}
}

// repoCommand is a command that runs only inside a termlab checkout; run may
// be nil when the caller sets RunE itself.
func repoCommand(name, short string, run func(context.Context, *cobra.Command) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:     name,
		Short:   short,
		GroupID: groupCheckout,
		Long:    short + ".\n\nIt runs inside a termlab checkout (or with TERMLAB_ROOT naming one), as `go tool mage " + name + "` does. Mage's single-dash flags (-by=script, -nodeaccess) work too.",
		Args:    cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := runsOn(runtime.GOOS, name); err != nil {
				return &exitError{code: diagnose.ExitUsage, err: err}
			}
			if _, err := project.Root(); err != nil {
				wd, _ := os.Getwd()
				return &exitError{code: diagnose.ExitUsage, err: fmt.Errorf(
					"%s runs inside a termlab checkout (it reads manifests/ and writes results/ there), and %s is not in one: cd into a clone of https://github.com/termlab/termlab, or set TERMLAB_ROOT to one (or to an unpacked workshop bundle). Only diagnose, version, workshop:load and workshop:verify run anywhere", name, wd)}
			}
			return nil
		},
	}
	if run != nil {
		cmd.RunE = func(cmd *cobra.Command, _ []string) error { return failed(run(cmd.Context(), cmd)) }
	}
	return cmd
}

// failed ends a command that ran and failed: with the exit code the error
// carries (lab.ExitPartial for a partial run), else 1.
func failed(err error) error {
	if err == nil {
		return nil
	}
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) {
		return &exitError{code: coded.ExitStatus(), err: err}
	}
	return &exitError{code: 1, err: err}
}

// The flag helpers give nil for a flag not given, as mage does.

func stringFlag(cmd *cobra.Command, name string) *string {
	if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
		v := f.Value.String()
		return &v
	}
	return nil
}

func boolFlag(cmd *cobra.Command, name string) *bool {
	if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
		v, _ := cmd.Flags().GetBool(name)
		return &v
	}
	return nil
}

func intFlag(cmd *cobra.Command, name string) *int {
	if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
		v, _ := cmd.Flags().GetInt(name)
		return &v
	}
	return nil
}
