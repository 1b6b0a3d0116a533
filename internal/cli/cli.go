// Package cli is the termlab binary (cmd/termlab): `termlab diagnose …`,
// also run by kubectl as the plugin `kubectl termlab diagnose …` when the
// binary is installed as kubectl-termlab, and the mage targets people use
// (lab:*, cluster:*, results:*) under the same names. Every command parses
// its inputs and calls internal/targets, as the mage targets do.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/version"
	"github.com/termlab/termlab/internal/workshop"
)

// PluginName is the name kubectl finds the plugin by on PATH: `kubectl
// termlab` runs kubectl-termlab.
const PluginName = "kubectl-termlab"

// app is one invocation: where it writes, and the seams tests replace.
type app struct {
	stdout, stderr io.Writer
	// display is how the binary is called in help: "termlab" or "kubectl termlab".
	display string
	// diagnose runs a parsed diagnose and returns its exit code.
	diagnose func(ctx context.Context, a *app, req diagnoseRequest) int
}

// exitError ends a command with a code; err (if any) is printed on stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// Run runs the binary with args (args[0] is how it was invoked) and returns
// the process's exit code. ctx is cancelled on Ctrl-C.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, display: "termlab", diagnose: runDiagnose}
	kind := invocation.Binary
	if len(args) > 0 && strings.TrimSuffix(filepath.Base(args[0]), ".exe") == PluginName {
		a.display = "kubectl termlab"
		kind = invocation.Plugin
	}
	// In an unpacked workshop bundle the binary works from the bundle's
	// folder (manifests/, results/, images, kwok sources there).
	bundle, err := workshop.Activate()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", a.display, err)
	}
	if bundle != "" && kind == invocation.Binary {
		kind = invocation.Workshop
	}
	// Hints printed by the packages below name commands as this program spells them.
	invocation.Set(invocation.Invocation{Kind: kind, Commands: commandSet(a.rootCommand())})
	return a.run(ctx, args[1:])
}

// commandSet is every command name and alias the binary runs.
func commandSet(root *cobra.Command) map[string]bool {
	set := map[string]bool{}
	for _, c := range root.Commands() {
		set[c.Name()] = true
		for _, alias := range c.Aliases {
			set[alias] = true
		}
	}
	return set
}

func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCommand()
	args, err := magestyle(root, args)
	if err != nil {
		fmt.Fprintf(a.stderr, "%s: %v\n", a.display, err)
		return diagnose.ExitUsage
	}
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(a.stderr, "%s: %v\n", a.display, ee.err)
		}
		return ee.code
	}
	// Anything cobra or pflag refused (an unknown command, flag or
	// argument) is a usage error: nothing was read or changed.
	fmt.Fprintf(a.stderr, "%s: %v\n", a.display, err)
	if cmd == nil || cmd == root {
		fmt.Fprintf(a.stderr, "Commands: %s.\nRun '%s --help' for what each does.\n", strings.Join(commandNames(root), ", "), a.display)
	} else {
		fmt.Fprintf(a.stderr, "Usage: %s\nRun '%s --help' for every flag.\n", cmd.UseLine(), cmd.CommandPath())
	}
	return diagnose.ExitUsage
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "termlab",
		Short: "Makes Kubernetes pod deletion visible: why a pod or namespace is still there, and the labs that show how deletion works",
		Long: `termlab says, read-only, why a pod or namespace is still there (diagnose),
and runs the labs that show how Kubernetes deletes pods (lab:*, which need a
termlab checkout). Installed as kubectl-termlab it is the kubectl plugin
` + "`kubectl termlab`" + `.

` + exitCodeText,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: a.display},
		SilenceErrors: true,
		SilenceUsage:  true,
		// No argument: the help (mage's default, lab:all, is a long run
		// nobody should start by accident).
		Run: func(cmd *cobra.Command, _ []string) { _ = cmd.Help() },
	}
	// `termlab completion bash|zsh|fish|powershell`; kubectl asks a plugin
	// through kubectl_complete-termlab (README: Install).
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetGlobalNormalizationFunc(mageNames)
	root.AddGroup(commandGroups()...)
	root.SetHelpCommandGroupID(groupAnywhere)
	root.SetCompletionCommandGroupID(groupAnywhere)
	root.AddCommand(a.diagnoseCommand())
	root.AddCommand(labCommands()...)
	root.AddCommand(clusterCommands()...)
	root.AddCommand(resultsCommands()...)
	root.AddCommand(workshopCommands()...)
	root.AddCommand(a.versionCommand())
	return root
}

// versionCommand prints which termlab this is (internal/version): what a bug
// report or a result should name.
func (a *app) versionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print termlab's version, commit, build date, Go and client-go versions",
		GroupID: groupAnywhere,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info := version.Get()
			switch output {
			case outputText:
				fmt.Fprint(a.stdout, info)
			case outputJSON:
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return &exitError{code: diagnose.ExitUsage, err: fmt.Errorf("--output=%q: want text or json", output)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", outputText, "text or json (the same object as summary.json's \"termlab\")")
	return cmd
}

// exitCodeText is the exit codes of diagnose, for --help (README.md says the same).
var exitCodeText = fmt.Sprintf(`Exit codes of diagnose:
  %d  nothing holds it: no blocking finding and nothing not checked that
     matters (or it is not being deleted, or it is gone and no process of it
     runs on the nodes searched)
  %d  held, and the cause found: at least one blocking finding
  %d  could not decide: no blocking finding, but something that matters was
     not checked (node checks need --node-access), or the object could not be
     read
  %d  usage: bad flags or arguments; nothing was read
  %d  interrupted (Ctrl-C) before it decided; node pods it started are removed
Labs (lab:*) exit 0 when every claim passed, 1 when one failed or the run
could not be made, %[6]d when partial: none failed but some were not checked
(or, of several labs, some were skipped).
Other commands exit 0 on success, 1 on failure, %[4]d on bad usage or when run
outside a termlab checkout.`, diagnose.ExitClear, diagnose.ExitHeld, diagnose.ExitUndecided, diagnose.ExitUsage, diagnose.ExitInterrupted, lab.ExitPartial)

func commandNames(root *cobra.Command) []string {
	var out []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			out = append(out, c.Name())
		}
	}
	sort.Strings(out)
	return out
}

// mageNames lets --nodeaccess mean --node-access, and so on.
func mageNames(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := invocation.DashedFlagNames[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// singleDash is a flag written as mage takes it: -name or -name=value.
var singleDash = regexp.MustCompile(`^-([a-z][a-z-]+)(=.*)?$`)

// magestyle rewrites mage's single-dash flags (-by=script, -nodeaccess) to
// pflag's double dash for the mage targets' commands, so a command copied
// from a `go tool mage` line works. Only whole names of the command's own
// flags are rewritten. diagnose takes kubectl's flags, where -nodeaccess
// would silently be -n odeaccess: there such a flag is refused instead.
func magestyle(root *cobra.Command, args []string) ([]string, error) {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return args, nil
	}
	out := make([]string, len(args))
	for i, arg := range args {
		out[i] = arg
		if arg == "--" {
			copy(out[i:], args[i:])
			break
		}
		m := singleDash.FindStringSubmatch(arg)
		if m == nil {
			continue
		}
		f := cmd.Flags().Lookup(m[1])
		if f == nil {
			continue
		}
		if cmd.Name() == "diagnose" {
			return nil, fmt.Errorf("%s: write --%s%s (diagnose takes kubectl's flags: a single dash would read -%c as a short flag)", arg, f.Name, m[2], arg[1])
		}
		out[i] = "-" + arg
	}
	return out, nil
}
