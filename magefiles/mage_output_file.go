//go:build ignore
// +build ignore

package main

import (
	_context "context"
	_flag "flag"
	_fmt "fmt"
	_io "io"
	_log "log"
	_os "os"
	_signal "os/signal"
	_filepath "path/filepath"
	_sort "sort"
	_strconv "strconv"
	_strings "strings"
	_syscall "syscall"
	_tabwriter "text/tabwriter"
	_time "time"
	
)

func main() {
	// Use local types and functions in order to avoid name conflicts with additional magefiles.
	type arguments struct {
		Verbose       bool          // print out log statements
		List          bool          // print out a list of targets
		Help          bool          // print out help for a specific target
		Timeout       _time.Duration // set a timeout to running the targets
		Args          []string      // args contain the non-flag command-line arguments
	}

	parseBool := func(env string) bool {
		val := _os.Getenv(env)
		if val == "" {
			return false
		}		
		b, err := _strconv.ParseBool(val)
		if err != nil {
			_log.Printf("warning: environment variable %s is not a valid bool value: %v", env, val)
			return false
		}
		return b
	}

	parseDuration := func(env string) _time.Duration {
		val := _os.Getenv(env)
		if val == "" {
			return 0
		}		
		d, err := _time.ParseDuration(val)
		if err != nil {
			_log.Printf("warning: environment variable %s is not a valid duration value: %v", env, val)
			return 0
		}
		return d
	}
	args := arguments{}
	fs := _flag.FlagSet{}
	fs.SetOutput(_os.Stdout)

	// default flag set with ExitOnError and auto generated PrintDefaults should be sufficient
	fs.BoolVar(&args.Verbose, "v", parseBool("MAGEFILE_VERBOSE"), "show verbose output when running targets")
	fs.BoolVar(&args.List, "l", parseBool("MAGEFILE_LIST"), "list targets for this binary")
	fs.BoolVar(&args.Help, "h", parseBool("MAGEFILE_HELP"), "print out help for a specific target")
	fs.DurationVar(&args.Timeout, "t", parseDuration("MAGEFILE_TIMEOUT"), "timeout in duration parsable format (e.g. 5m30s)")
	fs.Usage = func() {
		_fmt.Fprintf(_os.Stdout, `
%s [options] [target]

Commands:
  -l    list targets in this binary
  -h    show this help

Options:
  -h    show description of a target
  -t <string>
        timeout in duration parsable format (e.g. 5m30s)
  -v    show verbose output when running targets
 `[1:], _filepath.Base(_os.Args[0]))
	}
	if err := fs.Parse(_os.Args[1:]); err != nil {
		// flag will have printed out an error already.
		return
	}
	args.Args = fs.Args()
	if args.Help && len(args.Args) == 0 {
		fs.Usage()
		return
	}
		
	var printName = func(str string) string {
	// color is ANSI color type
	type color int

	// If you add/change/remove any items in this constant,
	// you will need to run "stringer -type=color" in this directory again.
	// NOTE: Please keep the list in an alphabetical order.
	const (
		black color = iota
		red
		green
		yellow
		blue
		magenta
		cyan
		white
		brightblack
		brightred
		brightgreen
		brightyellow
		brightblue
		brightmagenta
		brightcyan
		brightwhite
	)

	// AnsiColor are ANSI color codes for supported terminal colors.
	var ansiColor = map[color]string{
		black:         "\u001b[30m",
		red:           "\u001b[31m",
		green:         "\u001b[32m",
		yellow:        "\u001b[33m",
		blue:          "\u001b[34m",
		magenta:       "\u001b[35m",
		cyan:          "\u001b[36m",
		white:         "\u001b[37m",
		brightblack:   "\u001b[30;1m",
		brightred:     "\u001b[31;1m",
		brightgreen:   "\u001b[32;1m",
		brightyellow:  "\u001b[33;1m",
		brightblue:    "\u001b[34;1m",
		brightmagenta: "\u001b[35;1m",
		brightcyan:    "\u001b[36;1m",
		brightwhite:   "\u001b[37;1m",
	}

	const colorName = "blackredgreenyellowbluemagentacyanwhitebrightblackbrightredbrightgreenbrightyellowbrightbluebrightmagentabrightcyanbrightwhite"

	var colorIndex = [...]uint8{0, 5, 8, 13, 19, 23, 30, 34, 39, 50, 59, 70, 82, 92, 105, 115, 126}

	colorToLowerString := func(i color) string {
		if i < 0 || i >= color(len(colorIndex)-1) {
			return "color(" + _strconv.FormatInt(int64(i), 10) + ")"
		}
		return colorName[colorIndex[i]:colorIndex[i+1]]
	}

	// ansiColorReset is an ANSI color code to reset the terminal color.
	const ansiColorReset = "\033[0m"

	// defaultTargetAnsiColor is a default ANSI color for colorizing targets.
	// It is set to Cyan as an arbitrary color, because it has a neutral meaning
	var defaultTargetAnsiColor = ansiColor[cyan]

	getAnsiColor := func(color string) (string, bool) {
		colorLower := _strings.ToLower(color)
		for k, v := range ansiColor {
			colorConstLower := colorToLowerString(k)
			if colorConstLower == colorLower {
				return v, true
			}
		}
		return "", false
	}

	// Terminals which  don't support color:
	//
	//	TERM=vt100
	//	TERM=cygwin
	//	TERM=xterm-mono
	var noColorTerms = map[string]bool{
		"vt100":      false,
		"cygwin":     false,
		"xterm-mono": false,
	}

	// terminalSupportsColor checks if the current console supports color output
	//
	// Supported:
	//
	//	linux, mac, or windows's ConEmu, Cmder, putty, git-bash.exe, pwsh.exe
	//
	// Not supported:
	//
	//	windows cmd.exe, powerShell.exe
	terminalSupportsColor := func() bool {
		envTerm := _os.Getenv("TERM")
		if _, ok := noColorTerms[envTerm]; ok {
			return false
		}
		return true
	}

	// enableColor reports whether the user has requested to enable a color output.
	enableColor := func() bool {
		b, _ := _strconv.ParseBool(_os.Getenv("MAGEFILE_ENABLE_COLOR"))
		return b
	}

	// targetColor returns the ANSI color which should be used to colorize targets.
	targetColor := func() string {
		s, exists := _os.LookupEnv("MAGEFILE_TARGET_COLOR")
		if exists {
			if c, ok := getAnsiColor(s); ok {
				return c
			}
		}
		return defaultTargetAnsiColor
	}

	// store the color terminal variables, so that the detection isn't repeated for each target
	var enableColorValue = enableColor() && terminalSupportsColor()
	var targetColorValue = targetColor()

	if enableColorValue {
		return _fmt.Sprintf("%s%s%s", targetColorValue, str, ansiColorReset)
	}

	return str
}


	list := func() error {
		_fmt.Println(`termlab's targets. Each one parses its inputs and makes one call into a package under internal/; run 'go tool mage -l' to list them.
`)
		targets := map[string]string{
			"cluster:down": "deletes the cluster and its project-local kubeconfig.",
			"cluster:status": "shows the nodes, kwok and versions of the running cluster.",
			"cluster:up": "creates the cluster (1 control plane, 2 workers, kwok fake nodes) or reuses a healthy one.",
			"diagnose": "says, read-only, why a pod or namespace is still there: -pod=<ns>/<name> or -namespace=<ns> [-kubeconfig=<path>] [-nodeaccess] [-allnodes] [-watch]; writes results/diagnose/.",
			"doctor": "checks this machine for everything the cluster needs and says how to fix what is missing.",
			"images:all": "resolves every image (node, kwok, workload) from TERMLAB_IMAGES=auto|official|build.",
			"images:node": "builds the node image locally from the Go module proxy and Debian packages (cached by inputs).",
			"lab:all": "runs every lab of the registry (labs/registry.go) in order; it takes every lab's flags (-by, -kubeconfig, -context, -nodeaccess, -allownodefaults).",
			"lab:finalizer": "runs lab:finalizer: a finalizer nobody removes, on a real worker and on a kwok fake node.",
			"lab:force": "runs lab:force: a force delete on a healthy worker, the container outliving its API object.",
			"lab:graceful": "runs lab:graceful: a normal delete of pods behind Services under traffic; which requests fail, in which window, with and without a preStop sleep.",
			"lab:kwok": "runs lab:kwok: the same deletions on a real worker and on kwok fake nodes under three stage sets, with a fidelity verdict.",
			"lab:orphan": "runs lab:orphan: the kubelet stopped on a real worker, then a force delete.",
			"lab:scale": "runs lab:scale: a namespace of kwok pods deleted, finalizers released, the record checked complete; default -nodes=100 -pods=5000 -finalizers=20 -stageset=faithful; -by=script|you as the other labs (a kubectl per finalizer: use a small size).",
			"lab:sidecar": "runs lab:sidecar: native sidecars stopped after the main container, in reverse start order, and right after a main container that used up the grace period.",
			"lab:statefulset": "runs lab:statefulset: at most one pod per identity, until a force delete makes two processes write under one name.",
			"lab:stuck": "runs lab:stuck: an ordinary delete while the kubelet is down, then the out-of-service taint.",
			"labs*": "runs every lab on termlab's cluster, bringing it up if needed: what 'go tool mage' alone runs; lab:all takes flags.",
			"matrix": "runs labs on one kind cluster per Kubernetes release and writes results/matrix/<time>/matrix.md: -k8s=v1.37.2,v1.36.3 [-labs=force,finalizer] [-keep].",
			"measure": "prints cluster:up with cached images vs a bare kind create (rounds of both, the median ratio), the reuse time, and cold/warm build times, on throw-away clusters (termlab is not touched).",
			"mutants": "breaks each lab's reference record in small ways (timings ×2 and ×0.5, events dropped or swapped, container states and exit codes changed, watch gaps) and prints the claims that kill each mutant and every lab's mutation score.",
			"results:compare": "says whether runs match, normalised (claims, verdicts, transition sequences; timings within tolerance): by default each lab's latest run against results/reference/<lab>; -run=<run> [-against=<run>].",
			"results:index": "regenerates results/index.md and index.html: every run with lab, time, versions and verdict, linked to its report (index.html: with its timeline).",
			"results:reference": "makes a passing run its lab's reference run, results/reference/<lab> (to be committed): -run=<run>, default each lab's latest.",
			"results:render": "writes a run's reports again with the current code from its record (claims decided anew): -run=<run>, default every reference run.",
			"test": "runs the unit tests, brings the cluster up (building what is missing), then the end-to-end tests on it.",
			"workshop:bundle": "writes one archive with everything a session needs offline: images, inputs, kwok sources, reference runs, a standalone binary, digests (-out=<file>, default bin/termlab-workshop.tar.gz).",
			"workshop:load": "verifies every digest of a bundle, then loads its images into Docker and unpacks it into ./termlab-workshop (TERMLAB_WORKSHOP_DIR to change); a damaged bundle changes nothing.",
			"workshop:reset": "returns the cluster to the start state in seconds: kubelets running, leftovers of runs removed, run namespaces deleted; recreates only a broken cluster.",
			"workshop:run": "runs every lab in order as a guided session (also 'workshop'): explained, with commands to follow along, compared with the reference runs; it waits for Enter between labs on a terminal (-unattended or TERMLAB_STEP=0: never).",
			"workshop:verify": "checks every digest of a bundle without changing anything.",
		}

		keys := make([]string, 0, len(targets))
		for name := range targets {
			keys = append(keys, name)
		}
		_sort.Strings(keys)

		_fmt.Println("Targets:")
		w := _tabwriter.NewWriter(_os.Stdout, 0, 4, 4, ' ', 0)
		for _, name := range keys {
			_fmt.Fprintf(w, "  %v\t%v\n", printName(name), targets[name])
		}
		err := w.Flush()
			if err == nil {
				_fmt.Println("\n* default target")
			}
		return err
	}

	var ctx _context.Context
	ctxCancel := func(){}

	// by deferring in a closure, we let the cancel function get replaced
	// by the getContext function.
	defer func() {
		ctxCancel()
	}()

	getContext := func() (_context.Context, func()) {
		if ctx == nil {
			if args.Timeout != 0 {
				ctx, ctxCancel = _context.WithTimeout(_context.Background(), args.Timeout)
			} else {
				ctx, ctxCancel = _context.WithCancel(_context.Background())
			}
		}

		return ctx, ctxCancel
	}

	runTarget := func(logger *_log.Logger, fn func(_context.Context) error) interface{} {
		var err interface{}
		ctx, cancel := getContext()
		d := make(chan interface{})
		go func() {
			defer func() {
				err := recover()
				d <- err
			}()
			err := fn(ctx)
			d <- err
		}()
		sigCh := make(chan _os.Signal, 1)
		_signal.Notify(sigCh, _syscall.SIGINT)
		select {
		case <-sigCh:
			logger.Println("cancelling mage targets, waiting up to 5 seconds for cleanup...")
			cancel()
			cleanupCh := _time.After(5 * _time.Second)

			select {
			// target exited by itself
			case err = <-d:
				return err
			// cleanup timeout exceeded
			case <-cleanupCh:
				return _fmt.Errorf("cleanup timeout exceeded")
			// second SIGINT received
			case <-sigCh:
				logger.Println("exiting mage")
				return _fmt.Errorf("exit forced")
			}
		case <-ctx.Done():
			cancel()
			e := ctx.Err()
			_fmt.Printf("ctx err: %v\n", e)
			return e
		case err = <-d:
			// we intentionally don't cancel the context here, because
			// the next target will need to run with the same _context.
			return err
		}
	}
	// This is necessary in case there aren't any targets, to avoid an unused
	// variable error.
	_ = runTarget

	handleError := func(logger *_log.Logger, err interface{}) {
		if err != nil {
			logger.Printf("Error: %+v\n", err)
			type code interface {
				ExitStatus() int
			}
			if c, ok := err.(code); ok {
				_os.Exit(c.ExitStatus())
			}
			_os.Exit(1)
		}
	}
	_ = handleError

	// Set MAGEFILE_VERBOSE so mg.Verbose() reflects the flag value.
	if args.Verbose {
		_os.Setenv("MAGEFILE_VERBOSE", "1")
	} else {
		_os.Setenv("MAGEFILE_VERBOSE", "0")
	}

	_log.SetFlags(0)
	if !args.Verbose {
		_log.SetOutput(_io.Discard)
	}
	logger := _log.New(_os.Stderr, "", 0)
	if args.List {
		if err := list(); err != nil {
			_log.Println(err)
			_os.Exit(1)
		}
		return
	}

	if args.Help {
		if len(args.Args) < 1 {
			logger.Println("no target specified")
			_os.Exit(2)
		}
		switch _strings.ToLower(args.Args[0]) {
			case "cluster:down":
				_fmt.Println("Down deletes the cluster and its project-local kubeconfig.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage cluster:down\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "cluster:status":
				_fmt.Println("Status shows the nodes, kwok and versions of the running cluster.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage cluster:status\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "cluster:up":
				_fmt.Println("Up creates the cluster (1 control plane, 2 workers, kwok fake nodes) or reuses a healthy one.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage cluster:up\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "diagnose":
				_fmt.Println("Diagnose says, read-only, why a pod or namespace is still there: -pod=<ns>/<name> or -namespace=<ns> [-kubeconfig=<path>] [-nodeaccess] [-allnodes] [-watch]; writes results/diagnose/.  Without -kubeconfig it reads termlab's cluster and checks the node through kind (docker exec) unless -nodeaccess=false. With -kubeconfig it needs nothing but that file: node checks then say \"not checked\" unless -nodeaccess, which starts a short-lived privileged pod on each node it asks (removed before it returns). (mage names a flag after the Go parameter, lowercased: hence -nodeaccess.) -allnodes searches every node for a gone pod whose node no event names; -watch looks again every 5 s after the diagnosis and says what changed, until it is gone (10 min at most). The same runs anywhere as 'kubectl termlab diagnose' (cmd/termlab).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage diagnose [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-pod=<string>\n\t-namespace=<string>\n\t-kubeconfig=<string>\n\t-nodeAccess=<bool>\n\t-allNodes=<bool>\n\t-watch=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "doctor":
				_fmt.Println("Doctor checks this machine for everything the cluster needs and says how to fix what is missing.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage doctor\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "images:all":
				_fmt.Println("All resolves every image (node, kwok, workload) from TERMLAB_IMAGES=auto|official|build.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage images:all\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "images:node":
				_fmt.Println("Node builds the node image locally from the Go module proxy and Debian packages (cached by inputs).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage images:node\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:all":
				_fmt.Println("All runs every lab of the registry (labs/registry.go) in order; it takes every lab's flags (-by, -kubeconfig, -context, -nodeaccess, -allownodefaults).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:all [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\t-allownodefaults=<string>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:finalizer":
				_fmt.Println("Finalizer runs lab:finalizer: a finalizer nobody removes, on a real worker and on a kwok fake node.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:finalizer [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:force":
				_fmt.Println("Force runs lab:force: a force delete on a healthy worker, the container outliving its API object.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:force [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:graceful":
				_fmt.Println("Graceful runs lab:graceful: a normal delete of pods behind Services under traffic; which requests fail, in which window, with and without a preStop sleep.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:graceful [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:kwok":
				_fmt.Println("Kwok runs lab:kwok: the same deletions on a real worker and on kwok fake nodes under three stage sets, with a fidelity verdict.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:kwok [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:orphan":
				_fmt.Println("Orphan runs lab:orphan: the kubelet stopped on a real worker, then a force delete.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:orphan [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\t-allownodefaults=<string>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:scale":
				_fmt.Println("Scale runs lab:scale: a namespace of kwok pods deleted, finalizers released, the record checked complete; default -nodes=100 -pods=5000 -finalizers=20 -stageset=faithful; -by=script|you as the other labs (a kubectl per finalizer: use a small size).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:scale [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-nodes=<int>\n\t-pods=<int>\n\t-finalizers=<int>\n\t-stageset=<string>\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:sidecar":
				_fmt.Println("Sidecar runs lab:sidecar: native sidecars stopped after the main container, in reverse start order, and right after a main container that used up the grace period.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:sidecar [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:statefulset":
				_fmt.Println("Statefulset runs lab:statefulset: at most one pod per identity, until a force delete makes two processes write under one name.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:statefulset [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\t-allownodefaults=<string>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "lab:stuck":
				_fmt.Println("Stuck runs lab:stuck: an ordinary delete while the kubelet is down, then the out-of-service taint.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage lab:stuck [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-by=<string>\n\t-kubeconfig=<string>\n\t-context=<string>\n\t-nodeaccess=<bool>\n\t-allownodefaults=<string>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "labs":
				_fmt.Println("Labs runs every lab on termlab's cluster, bringing it up if needed: what 'go tool mage' alone runs; lab:all takes flags.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage labs\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "matrix":
				_fmt.Println("Matrix runs labs on one kind cluster per Kubernetes release and writes results/matrix/<time>/matrix.md: -k8s=v1.37.2,v1.36.3 [-labs=force,finalizer] [-keep].  A release may be given as v1.36.x: the newest patch the Go module proxy serves. Each release gets its own cluster (termlab-v1-36-3, kubeconfig .termlab/kubeconfig-termlab-v1-36-3) from kindest/node:<release> where a registry answers, else a node image built offline from the Go module proxy and cached by release; the shared cluster \"termlab\" is never touched. The clusters are deleted afterwards unless -keep. A measurement, not part of 'go tool mage test'.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage matrix [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-k8s=<string>\n\t-labs=<string>\n\t-keep=<bool>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "measure":
				_fmt.Println("Measure prints cluster:up with cached images vs a bare kind create (rounds of both, the median ratio), the reuse time, and cold/warm build times, on throw-away clusters (termlab is not touched). Flag -rounds (default 3, about a minute each).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage measure [-rounds=<int>]\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "mutants":
				_fmt.Println("Mutants breaks each lab's reference record in small ways (timings ×2 and ×0.5, events dropped or swapped, container states and exit codes changed, watch gaps) and prints the claims that kill each mutant and every lab's mutation score.  A mutant no claim kills needs a written reason in internal/mutants/survivors.go; a score may not drop below the floor committed there. Pure: no cluster. The same check runs in go test ./...")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage mutants\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "results:compare":
				_fmt.Println("Compare says whether runs match, normalised (claims, verdicts, transition sequences; timings within tolerance): by default each lab's latest run against results/reference/<lab>; -run=<run> [-against=<run>].")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage results:compare [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-run=<string>\n\t-against=<string>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "results:index":
				_fmt.Println("Index regenerates results/index.md and index.html: every run with lab, time, versions and verdict, linked to its report (index.html: with its timeline).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage results:index\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "results:reference":
				_fmt.Println("Reference makes a passing run its lab's reference run, results/reference/<lab> (to be committed): -run=<run>, default each lab's latest.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage results:reference [-run=<string>]\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "results:render":
				_fmt.Println("Render writes a run's reports again with the current code from its record (claims decided anew): -run=<run>, default every reference run.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage results:render [-run=<string>]\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "test":
				_fmt.Println("Test runs the unit tests, brings the cluster up (building what is missing), then the end-to-end tests on it.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage test\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "workshop:bundle":
				_fmt.Println("Bundle writes one archive with everything a session needs offline: images, inputs, kwok sources, reference runs, a standalone binary, digests (-out=<file>, default bin/termlab-workshop.tar.gz).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage workshop:bundle [-out=<string>]\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "workshop:load":
				_fmt.Println("Load verifies every digest of a bundle, then loads its images into Docker and unpacks it into ./termlab-workshop (TERMLAB_WORKSHOP_DIR to change); a damaged bundle changes nothing.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage workshop:load <archive>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "workshop:reset":
				_fmt.Println("Reset returns the cluster to the start state in seconds: kubelets running, leftovers of runs removed, run namespaces deleted; recreates only a broken cluster.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage workshop:reset\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "workshop:run":
				_fmt.Println("Run runs every lab in order as a guided session (also 'workshop'): explained, with commands to follow along, compared with the reference runs; it waits for Enter between labs on a terminal (-unattended or TERMLAB_STEP=0: never).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage workshop:run [<flags>]\n\n")
				_fmt.Print("Flags:\n\n\t-step=<bool>\n\t-unattended=<bool>\n\n")
				var aliases []string
				aliases = append(aliases, "workshop")
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "workshop:verify":
				_fmt.Println("Verify checks every digest of a bundle without changing anything.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage workshop:verify <archive>\n\n")
				var aliases []string
				
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			default:
				logger.Printf("Unknown target: %q\n", args.Args[0])
				_os.Exit(2)
		}
	}
	if len(args.Args) < 1 {
		ignoreDefault, _ := _strconv.ParseBool(_os.Getenv("MAGEFILE_IGNOREDEFAULT"))
		if ignoreDefault {
			if err := list(); err != nil {
				logger.Println("Error:", err)
				_os.Exit(1)
			}
			return
		}
		
				wrapFn := func(ctx _context.Context) error {
					return Labs(ctx)
				}
				ret := runTarget(logger, wrapFn)
		handleError(logger, ret)
		return
	}
	for x := 0; x < len(args.Args); {
		target := args.Args[x]
		x++

		// resolve aliases
		switch _strings.ToLower(target) {
		
			case "workshop":
				target = "Workshop:Run"
		}

		switch _strings.ToLower(target) {
		
			case "cluster:down":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Cluster:Down\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Cluster:Down")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Cluster{}.Down(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "cluster:status":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Cluster:Status\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Cluster:Status")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Cluster{}.Status(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "cluster:up":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Cluster:Up\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Cluster:Up")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Cluster{}.Up(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "diagnose":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Diagnose\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Diagnose")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				var arg4 *bool
				var arg5 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						case "allnodes":
							_optVal = "true"
						case "watch":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Diagnose\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "pod":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "namespace":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "kubeconfig":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					case "allnodes":
						_tmp4, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg4 = &_tmp4
					case "watch":
						_tmp5, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg5 = &_tmp5
					default:
						logger.Printf("unknown option %q for target \"Diagnose\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Diagnose(ctx, arg0, arg1, arg2, arg3, arg4, arg5)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "doctor":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Doctor\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Doctor")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Doctor(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "images:all":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Images:All\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Images:All")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Images{}.All(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "images:node":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Images:Node\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Images:Node")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Images{}.Node(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:all":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:All\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:All")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				var arg4 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:All\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					case "allownodefaults":
						_tmp4 := _optVal
						arg4 = &_tmp4
					default:
						logger.Printf("unknown option %q for target \"Lab:All\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.All(ctx, arg0, arg1, arg2, arg3, arg4)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:finalizer":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Finalizer\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Finalizer")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Finalizer\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					default:
						logger.Printf("unknown option %q for target \"Lab:Finalizer\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Finalizer(ctx, arg0, arg1, arg2, arg3)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:force":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Force\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Force")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Force\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					default:
						logger.Printf("unknown option %q for target \"Lab:Force\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Force(ctx, arg0, arg1, arg2, arg3)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:graceful":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Graceful\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Graceful")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Graceful\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					default:
						logger.Printf("unknown option %q for target \"Lab:Graceful\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Graceful(ctx, arg0, arg1, arg2, arg3)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:kwok":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Kwok\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Kwok")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Kwok\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					default:
						logger.Printf("unknown option %q for target \"Lab:Kwok\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Kwok(ctx, arg0, arg1, arg2, arg3)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:orphan":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Orphan\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Orphan")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				var arg4 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Orphan\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					case "allownodefaults":
						_tmp4 := _optVal
						arg4 = &_tmp4
					default:
						logger.Printf("unknown option %q for target \"Lab:Orphan\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Orphan(ctx, arg0, arg1, arg2, arg3, arg4)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:scale":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Scale\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Scale")
				}
				
				var arg0 *int
				var arg1 *int
				var arg2 *int
				var arg3 *string
				var arg4 *string
				var arg5 *string
				var arg6 *string
				var arg7 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Scale\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "nodes":
						_tmp0, err := _strconv.Atoi(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to int\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg0 = &_tmp0
					case "pods":
						_tmp1, err := _strconv.Atoi(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to int\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg1 = &_tmp1
					case "finalizers":
						_tmp2, err := _strconv.Atoi(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to int\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg2 = &_tmp2
					case "stageset":
						_tmp3 := _optVal
						arg3 = &_tmp3
					case "by":
						_tmp4 := _optVal
						arg4 = &_tmp4
					case "kubeconfig":
						_tmp5 := _optVal
						arg5 = &_tmp5
					case "context":
						_tmp6 := _optVal
						arg6 = &_tmp6
					case "nodeaccess":
						_tmp7, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg7 = &_tmp7
					default:
						logger.Printf("unknown option %q for target \"Lab:Scale\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Scale(ctx, arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:sidecar":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Sidecar\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Sidecar")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Sidecar\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					default:
						logger.Printf("unknown option %q for target \"Lab:Sidecar\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Sidecar(ctx, arg0, arg1, arg2, arg3)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:statefulset":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Statefulset\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Statefulset")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				var arg4 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Statefulset\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					case "allownodefaults":
						_tmp4 := _optVal
						arg4 = &_tmp4
					default:
						logger.Printf("unknown option %q for target \"Lab:Statefulset\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Statefulset(ctx, arg0, arg1, arg2, arg3, arg4)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "lab:stuck":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Lab:Stuck\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Lab:Stuck")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *string
				var arg3 *bool
				var arg4 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "nodeaccess":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Lab:Stuck\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "by":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "kubeconfig":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "context":
						_tmp2 := _optVal
						arg2 = &_tmp2
					case "nodeaccess":
						_tmp3, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg3 = &_tmp3
					case "allownodefaults":
						_tmp4 := _optVal
						arg4 = &_tmp4
					default:
						logger.Printf("unknown option %q for target \"Lab:Stuck\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Lab{}.Stuck(ctx, arg0, arg1, arg2, arg3, arg4)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "labs":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Labs\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Labs")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Labs(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "matrix":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Matrix\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Matrix")
				}
				
				var arg0 *string
				var arg1 *string
				var arg2 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "keep":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Matrix\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "k8s":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "labs":
						_tmp1 := _optVal
						arg1 = &_tmp1
					case "keep":
						_tmp2, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg2 = &_tmp2
					default:
						logger.Printf("unknown option %q for target \"Matrix\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Matrix(ctx, arg0, arg1, arg2)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "measure":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Measure\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Measure")
				}
				
				var arg0 *int
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						default:
							logger.Printf("invalid option %q for target \"Measure\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "rounds":
						_tmp0, err := _strconv.Atoi(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to int\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg0 = &_tmp0
					default:
						logger.Printf("unknown option %q for target \"Measure\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Measure(ctx, arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "mutants":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Mutants\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Mutants")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Mutants()
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "results:compare":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Results:Compare\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Results:Compare")
				}
				
				var arg0 *string
				var arg1 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						default:
							logger.Printf("invalid option %q for target \"Results:Compare\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "run":
						_tmp0 := _optVal
						arg0 = &_tmp0
					case "against":
						_tmp1 := _optVal
						arg1 = &_tmp1
					default:
						logger.Printf("unknown option %q for target \"Results:Compare\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Results{}.Compare(ctx, arg0, arg1)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "results:index":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Results:Index\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Results:Index")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Results{}.Index()
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "results:reference":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Results:Reference\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Results:Reference")
				}
				
				var arg0 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						default:
							logger.Printf("invalid option %q for target \"Results:Reference\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "run":
						_tmp0 := _optVal
						arg0 = &_tmp0
					default:
						logger.Printf("unknown option %q for target \"Results:Reference\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Results{}.Reference(arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "results:render":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Results:Render\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Results:Render")
				}
				
				var arg0 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						default:
							logger.Printf("invalid option %q for target \"Results:Render\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "run":
						_tmp0 := _optVal
						arg0 = &_tmp0
					default:
						logger.Printf("unknown option %q for target \"Results:Render\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Results{}.Render(arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "test":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Test\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Test")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Test(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "workshop:bundle":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Workshop:Bundle\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Workshop:Bundle")
				}
				
				var arg0 *string
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						default:
							logger.Printf("invalid option %q for target \"Workshop:Bundle\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "out":
						_tmp0 := _optVal
						arg0 = &_tmp0
					default:
						logger.Printf("unknown option %q for target \"Workshop:Bundle\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Workshop{}.Bundle(ctx, arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "workshop:load":
				expected := x + 1
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Workshop:Load\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Workshop:Load")
				}
				
			arg0 := args.Args[x]
			x++
				wrapFn := func(ctx _context.Context) error {
					return Workshop{}.Load(ctx, arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "workshop:reset":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Workshop:Reset\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Workshop:Reset")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Workshop{}.Reset(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "workshop:run":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Workshop:Run\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Workshop:Run")
				}
				
				var arg0 *bool
				var arg1 *bool
				for x < len(args.Args) && _strings.HasPrefix(args.Args[x], "-") {
					_optArg := args.Args[x]
					_eqIdx := _strings.Index(_optArg, "=")
					var _optName, _optVal string
					if _eqIdx < 0 {
						_optName = _strings.ToLower(_optArg[1:])
						switch _optName {
						case "step":
							_optVal = "true"
						case "unattended":
							_optVal = "true"
						default:
							logger.Printf("invalid option %q for target \"Workshop:Run\", expected -name=value format\n", _optArg)
							_os.Exit(2)
						}
					} else {
						_optName = _strings.ToLower(_optArg[1:_eqIdx])
						_optVal = _optArg[_eqIdx+1:]
					}
					switch _optName {
					case "step":
						_tmp0, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg0 = &_tmp0
					case "unattended":
						_tmp1, err := _strconv.ParseBool(_optVal)
						if err != nil {
							logger.Printf("can't convert option %q value %q to bool\n", _optName, _optVal)
							_os.Exit(2)
						}
						arg1 = &_tmp1
					default:
						logger.Printf("unknown option %q for target \"Workshop:Run\"\n", _optName)
						_os.Exit(2)
					}
					x++
				}
				wrapFn := func(ctx _context.Context) error {
					return Workshop{}.Run(ctx, arg0, arg1)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "workshop:verify":
				expected := x + 1
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Workshop:Verify\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Workshop:Verify")
				}
				
			arg0 := args.Args[x]
			x++
				wrapFn := func(ctx _context.Context) error {
					return Workshop{}.Verify(ctx, arg0)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
		
		default:
			logger.Printf("Unknown target specified: %q\n", target)
			_os.Exit(2)
		}
	}
}




