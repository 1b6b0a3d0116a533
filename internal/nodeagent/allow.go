package nodeagent

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/termlab/termlab/internal/kubelet"
	"github.com/termlab/termlab/internal/mounthold"
)

// The agent runs a command only when it has the exact shape termlab's own
// code sends (a program name alone gives nothing away: systemd-run and
// systemctl start any unit, dd writes any file). Each rule is one verb: the
// program, its subcommand where it has them, who sends it, and a check of
// the rest of the argv. TestEverySentCommandIsAllowed calls those senders
// and checks that what they send passes, and that every rule is used.
type rule struct {
	program string
	// verb is argv[1] for programs with subcommands (systemctl, crictl);
	// "" for the others, whose args then begin at argv[1].
	verb string
	// sender is the termlab code that sends it.
	sender string
	args   func(args []string) error
}

// rules is the allow-list; a program may have several (systemd-run: the
// kubelet's switch and the mount holder).
var rules = []rule{
	{"systemctl", "start", "kubelet.StartCommand", units(kubeletUnit)},
	{"systemctl", "stop", "kubelet.StopCommand, kubelet.DisarmCommand, kubelet.Restore, mounthold.ReleaseCommands", units(kubeletUnit, switchTimer, holdUnit)},
	{"systemctl", "is-active", "nodeunit.State (kubelet.State, mounthold.Restore)", units(kubeletUnit, holdUnit)},
	{"systemctl", "show", "kubelet.UnitOf, nodeunit.Show (kubelet.ChangedAt, mounthold.Look)", showArgs},
	{"systemctl", "is-system-running", "kubelet.Restore (a node still booting)", oneOf([]string{}, []string{"--wait"})},
	{"systemctl", "list-units", "kubelet.Restore (switches left armed)", oneOf([]string{"--all", "--plain", "--no-legend", "--type=timer", kubelet.UnitPrefix + "*"})},
	{"systemd-run", "", "kubelet.ArmCommand", armArgs},
	{"systemd-run", "", "mounthold.HoldCommands", holdArgs},
	{"crictl", "inspect", "recorder.ObserveContainer, recorder.WaitContainer", oneContainer},
	{"crictl", "logs", "recorder.ObserveContainer, recorder.WaitLog, recorder.FollowLogs, recorder.RecordRequests", logsArgs},
	{"crictl", "ps", "recorder.ObserveContainer, recorder.ContainerStates", psArgs},
	{"stat", "", "recorder.StartAudit, recorder.ReadAudit", statArgs},
	{"ls", "", "recorder.ReadAudit (a rotated audit log)", oneOf([]string{"-i1", AuditLogDir})},
	{"dd", "", "recorder.ReadAudit", ddArgs},
	{"readlink", "", "mounthold.Look", procCwd},
	{"cat", "", "mounthold.Mounts, lab.Kubectl", oneOf([]string{"/proc/1/mountinfo"}, []string{"/kind/version"}, []string{"/usr/bin/kubectl"})},
	{"date", "", "recorder.ProbeClock (an exec a reading)", oneOf([]string{"+%s.%N"})},
	{"iptables-save", "", "recorder.ReadProxyRules", oneOf([]string{"-t", "nat"})},
}

// AuditLogDir holds the API server's audit log (evidence.AuditLogPath) and
// its rotated files: the only files the agent reads by byte range.
const AuditLogDir = "/var/log/kubernetes/audit"

// MaxUnitSeconds bounds a switch's delay and a mount holder's life: no lab's
// is near it (minutes), and the node pods live 30 minutes.
const MaxUnitSeconds = 3600

// Allowed says why the agent refuses argv, or nil when it is one of the
// shapes in rules.
func Allowed(argv []string) error {
	_, err := match(argv)
	return err
}

// match is the rule argv passes, or why it passes none.
func match(argv []string) (*rule, error) {
	if len(argv) == 0 {
		return nil, errors.New("an empty command")
	}
	for i, a := range argv {
		if !printable(a) {
			return nil, fmt.Errorf("argument %d (%q) holds a control character or is not UTF-8", i, a)
		}
	}
	var programs []string
	var forProgram, forVerb []*rule
	for i := range rules {
		r := &rules[i]
		if !slices.Contains(programs, r.program) {
			programs = append(programs, r.program)
		}
		if r.program != argv[0] {
			continue
		}
		forProgram = append(forProgram, r)
		if r.verb == "" || len(argv) > 1 && argv[1] == r.verb {
			forVerb = append(forVerb, r)
		}
	}
	if len(forProgram) == 0 {
		return nil, fmt.Errorf("%q is not a program the agent runs (it runs %s)", argv[0], strings.Join(programs, ", "))
	}
	if len(forVerb) == 0 {
		var verbs []string
		for _, r := range forProgram {
			verbs = append(verbs, r.verb)
		}
		sub := ""
		if len(argv) > 1 {
			sub = argv[1]
		}
		return nil, fmt.Errorf("%s %q is not a subcommand the agent runs (it runs %s %s)", argv[0], sub, argv[0], strings.Join(verbs, ", "))
	}
	var why []string
	for _, r := range forVerb {
		args := argv[1:]
		if r.verb != "" {
			args = argv[2:]
		}
		err := r.args(args)
		if err == nil {
			return r, nil
		}
		why = append(why, fmt.Sprintf("not as %s sends it: %v", r.sender, err))
	}
	head := argv[0]
	if forVerb[0].verb != "" {
		head += " " + argv[1]
	}
	return nil, fmt.Errorf("%s: %s", head, strings.Join(why, "; "))
}

// printable: UTF-8 without control characters (no NUL, newline or escape).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}

// oneOf accepts exactly one of the argument lists.
func oneOf(shapes ...[]string) func([]string) error {
	return func(args []string) error {
		for _, s := range shapes {
			if slices.Equal(args, s) {
				return nil
			}
		}
		want := make([]string, len(shapes))
		for i, s := range shapes {
			want[i] = fmt.Sprintf("%q", s)
		}
		return fmt.Errorf("arguments %q are not %s", args, strings.Join(want, " or "))
	}
}

// unitKind is a unit systemctl may be asked about.
type unitKind int

const (
	kubeletUnit unitKind = iota // the kubelet's own unit
	switchTimer                 // a dead-man's switch: kubelet.Unit(<run id>) + ".timer"
	holdUnit                    // the mount holder, mounthold.Unit
)

func (k unitKind) is(name string) bool {
	switch k {
	case kubeletUnit:
		return name == "kubelet"
	case switchTimer:
		id, ok := strings.CutPrefix(name, kubelet.UnitPrefix)
		id, timer := strings.CutSuffix(id, ".timer")
		return ok && timer && runIDShape.MatchString(id)
	case holdUnit:
		return name == mounthold.Unit
	}
	return false
}

func (k unitKind) String() string {
	return [...]string{"kubelet", kubelet.UnitPrefix + "<run id>.timer", mounthold.Unit}[k]
}

// runIDShape is a run id (lab.NewRunID: 20261203-070000-abcd) or any other
// that names a unit without a glob, a dot or a slash.
var runIDShape = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z-]{0,62}$`)

// units accepts exactly one unit of the kinds.
func units(kinds ...unitKind) func([]string) error {
	return func(args []string) error {
		if len(args) == 1 {
			for _, k := range kinds {
				if k.is(args[0]) {
					return nil
				}
			}
		}
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = k.String()
		}
		return fmt.Errorf("arguments %q are not one unit of %s", args, strings.Join(names, ", "))
	}
}

// propShape is a systemd property name (ActiveEnterTimestamp).
var propShape = regexp.MustCompile(`^[A-Z][A-Za-z]{0,63}$`)

// showArgs: `systemctl show <kubelet or holder> [--timestamp=us+utc] -p <Prop>…`.
func showArgs(args []string) error {
	if len(args) < 3 || !kubeletUnit.is(args[0]) && !holdUnit.is(args[0]) {
		return fmt.Errorf("arguments %q do not begin with %s or %s and ask for properties", args, kubeletUnit, holdUnit)
	}
	rest := args[1:]
	if rest[0] == "--timestamp=us+utc" {
		rest = rest[1:]
	}
	if len(rest) == 0 || len(rest)%2 != 0 {
		return fmt.Errorf("arguments %q are not -p <Property> pairs after the unit", args)
	}
	for i := 0; i < len(rest); i += 2 {
		if rest[i] != "-p" || !propShape.MatchString(rest[i+1]) {
			return fmt.Errorf("%q %q is not -p <Property>", rest[i], rest[i+1])
		}
	}
	return nil
}

// seconds reads "<n>" bounded by MaxUnitSeconds.
func seconds(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxUnitSeconds || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("%q is not a number of seconds from 1 to %d", s, MaxUnitSeconds)
	}
	return n, nil
}

// armArgs: exactly kubelet.ArmCommand(<run id>, <n>s), whose timer starts
// only the kubelet.
func armArgs(args []string) error {
	argv := append([]string{"systemd-run"}, args...)
	if len(args) < 3 {
		return fmt.Errorf("arguments %q are too few", args)
	}
	id, ok := strings.CutPrefix(args[0], "--unit="+kubelet.UnitPrefix)
	if !ok || !runIDShape.MatchString(id) {
		return fmt.Errorf("%q is not --unit=%s<run id>", args[0], kubelet.UnitPrefix)
	}
	var secs int
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--on-active="); ok {
			n, err := seconds(strings.TrimSuffix(v, "s"))
			if err != nil {
				return fmt.Errorf("--on-active: %w", err)
			}
			secs = n
		}
	}
	if want := kubelet.ArmCommand(id, time.Duration(secs)*time.Second); !slices.Equal(argv, want) {
		return fmt.Errorf("%q differs from %q", argv, want)
	}
	return nil
}

// podUIDShape is a pod's UID; volumeShape a volume's name (a DNS label).
var (
	podUIDShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	volumeShape = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// holdArgs: exactly mounthold.HoldCommands(<run id>, <a pod's emptyDir>,
// <n>s): `sleep infinity` with its working directory in the volume.
func holdArgs(args []string) error {
	argv := append([]string{"systemd-run"}, args...)
	var id, dir, maxSec string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--description=termlab run "); ok {
			id, _, _ = strings.Cut(v, ":")
		}
		if v, ok := strings.CutPrefix(a, "--property=WorkingDirectory="); ok {
			dir = v
		}
		if v, ok := strings.CutPrefix(a, "--property=RuntimeMaxSec="); ok {
			maxSec = v
		}
	}
	if !runIDShape.MatchString(id) {
		return fmt.Errorf("no run id in its description (%q)", id)
	}
	if !emptyDir(dir) {
		return fmt.Errorf("working directory %q is not a pod's emptyDir (%s)", dir, mounthold.EmptyDirPath("<pod uid>", "<volume>"))
	}
	secs, err := seconds(maxSec)
	if err != nil {
		return fmt.Errorf("RuntimeMaxSec: %w", err)
	}
	if want := mounthold.HoldCommands(id, dir, time.Duration(secs)*time.Second); len(want) != 1 || !slices.Equal(argv, want[0]) {
		return fmt.Errorf("%q differs from %q", argv, want)
	}
	return nil
}

// emptyDir: dir is mounthold.EmptyDirPath of a pod UID and a volume name.
func emptyDir(dir string) bool {
	rest, ok := strings.CutPrefix(dir, mounthold.KubeletPodsDir+"/")
	if !ok {
		return false
	}
	uid, _, ok := strings.Cut(rest, "/")
	if !ok {
		return false
	}
	vol := path.Base(dir)
	return podUIDShape.MatchString(uid) && volumeShape.MatchString(vol) && dir == mounthold.EmptyDirPath(uid, vol)
}

// containerIDShape is a container's ID as crictl takes it (hex, or a prefix of it).
var containerIDShape = regexp.MustCompile(`^[0-9a-f]{1,64}$`)

func oneContainer(args []string) error {
	if len(args) != 1 || !containerIDShape.MatchString(args[0]) {
		return fmt.Errorf("arguments %q are not one container ID", args)
	}
	return nil
}

// logsArgs: `crictl logs [-f] <id>`.
func logsArgs(args []string) error {
	if len(args) == 2 && args[0] == "-f" {
		args = args[1:]
	}
	return oneContainer(args)
}

// namespaceShape is a namespace's name (a DNS label).
var namespaceShape = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// psArgs: `crictl ps -a -o json --label io.kubernetes.pod.namespace=<ns>`.
func psArgs(args []string) error {
	const label = "io.kubernetes.pod.namespace="
	if len(args) == 5 && slices.Equal(args[:4], []string{"-a", "-o", "json", "--label"}) {
		if ns, ok := strings.CutPrefix(args[4], label); ok && namespaceShape.MatchString(ns) {
			return nil
		}
	}
	return fmt.Errorf("arguments %q are not -a -o json --label %s<namespace>", args, label)
}

// logFileShape is a file's name in AuditLogDir: audit.log and its rotated
// copies (audit-2026-12-04T05-36-04.214.log).
var logFileShape = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]{0,254}$`)

// auditFile: p is a file directly in AuditLogDir.
func auditFile(p string) error {
	name, ok := strings.CutPrefix(p, AuditLogDir+"/")
	if !ok || !logFileShape.MatchString(name) || path.Join(AuditLogDir, name) != p {
		return fmt.Errorf("%q is not a file in %s", p, AuditLogDir)
	}
	return nil
}

// statArgs: `stat -c "%i %s" <audit log>`.
func statArgs(args []string) error {
	if len(args) != 3 || args[0] != "-c" || args[1] != "%i %s" {
		return fmt.Errorf("arguments %q are not -c \"%%i %%s\" <file>", args)
	}
	return auditFile(args[2])
}

// ddArgs: `dd if=<audit log> bs=1M iflag=skip_bytes,count_bytes skip=<n>
// count=<n> status=none`: a byte range of the file, to stdout.
func ddArgs(args []string) error {
	if len(args) != 6 {
		return fmt.Errorf("arguments %q are not if=<file> bs=1M iflag=skip_bytes,count_bytes skip=<n> count=<n> status=none", args)
	}
	file, ok := strings.CutPrefix(args[0], "if=")
	if !ok {
		return fmt.Errorf("%q is not if=<file>", args[0])
	}
	if err := auditFile(file); err != nil {
		return err
	}
	skip, okSkip := strings.CutPrefix(args[3], "skip=")
	count, okCount := strings.CutPrefix(args[4], "count=")
	if args[1] != "bs=1M" || args[2] != "iflag=skip_bytes,count_bytes" || !okSkip || !okCount || args[5] != "status=none" ||
		!number(skip) || !number(count) {
		return fmt.Errorf("arguments %q are not if=<file> bs=1M iflag=skip_bytes,count_bytes skip=<n> count=<n> status=none", args)
	}
	return nil
}

// number is a non-negative decimal integer as strconv writes it.
func number(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// procCwd: `readlink /proc/<pid>/cwd`.
func procCwd(args []string) error {
	if len(args) == 1 {
		if pid, ok := strings.CutSuffix(strings.TrimPrefix(args[0], "/proc/"), "/cwd"); ok && number(pid) && args[0] == "/proc/"+pid+"/cwd" {
			return nil
		}
	}
	return fmt.Errorf("arguments %q are not /proc/<pid>/cwd", args)
}

// envNames are the variables a command may be given: only ones that change
// how output looks and name no file or program. A valid name is not enough
// (LD_PRELOAD, PATH and LOCPATH make a root command load or run a file of
// the caller's choosing), and termlab itself sends none.
var envNames = map[string]bool{"NO_COLOR": true, "SYSTEMD_COLORS": true}

// envNameShape is a POSIX environment variable name.
var envNameShape = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnv says why the agent refuses an environment entry: each must be
// NAME=VALUE with NAME a valid name among envNames and VALUE printable.
func CheckEnv(env []string) error {
	for _, e := range env {
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !ok:
			return fmt.Errorf("environment entry %q is not NAME=VALUE", e)
		case !envNameShape.MatchString(name):
			return fmt.Errorf("environment entry %q: %q is not a variable name", e, name)
		case !envNames[name]:
			return fmt.Errorf("environment entry %q: the agent passes no %s (only %s)", e, name, strings.Join(sortedKeys(envNames), ", "))
		case !printable(value):
			return fmt.Errorf("environment entry %q: its value holds a control character", e)
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
