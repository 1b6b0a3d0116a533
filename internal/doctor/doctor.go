// Package doctor checks a machine for what a termlab cluster needs and says,
// for each failing check, how to fix it.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/capfilter"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/dockerhost"
	"github.com/termlab/termlab/internal/dockerimage"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/nodeimage"
)

// Status of one check. Fail means the cluster cannot work until it is fixed.
type Status string

const (
	Pass Status = "PASS"
	Warn Status = "WARN"
	Fail Status = "FAIL"
	Info Status = "INFO"
)

// Check is one line of the report.
type Check struct {
	Name   string
	Status Status
	Detail string
	Fix    string
}

// Facts are what the checks decide on; Gather reads them from the machine.
type Facts struct {
	EngineVersion    string // "" when no engine answers
	EngineError      string // what the engine's facts show when it does not answer
	EngineState      dockerhost.EngineState
	NoHostChanges    bool                         // TERMLAB_NO_HOST_CHANGES declines host changes
	DaemonJSON       *dockerhost.DaemonJSONChange // termlab's keys in daemon.json; nil when none
	CanProvision     bool
	ProvisionWhy     string
	MissingCaps      []string
	WrapperDefault   bool
	PrivilegedProbe  string // "" not run, "ok", or the error
	CgroupV1         bool
	FreeDiskBytes    uint64
	AvailMemBytes    uint64
	InotifyWatches   int
	InotifyInstances int
	RegistryResolves bool
	GoVersion        string
}

// Gather reads the facts from this machine (and the engine, if one answers).
func Gather(ctx context.Context) Facts {
	var f Facts
	e := dockerhost.Probe(ctx)
	f.EngineVersion, f.EngineState = e.Version, e.State()
	if f.EngineVersion == "" {
		f.EngineError = firstLine(e.Describe())
	}
	f.CanProvision, f.ProvisionWhy = dockerhost.CanProvision()
	f.NoHostChanges = dockerhost.NoHostChanges()
	if ch, ok := dockerhost.ReadDaemonJSONChange(dockerhost.DaemonJSON); ok {
		f.DaemonJSON = &ch
	}
	if b, err := capfilter.OwnBounding(); err == nil {
		f.MissingCaps = capfilter.Missing(b)
	}
	if f.EngineVersion != "" {
		f.WrapperDefault = dockerhost.WrapperRegistered(ctx)
		probe := nodeimage.Ref("pause", nodeimage.PauseTag)
		if dockerimage.Exists(ctx, probe) {
			if err := dockerhost.ProbePrivileged(ctx, probe); err != nil {
				f.PrivilegedProbe = firstLine(err.Error())
			} else {
				f.PrivilegedProbe = "ok"
			}
		}
	}
	f.CgroupV1 = cluster.DetectCgroupV1()
	var st syscall.Statfs_t
	if err := syscall.Statfs(diskPath(), &st); err == nil {
		f.FreeDiskBytes = st.Bavail * uint64(st.Bsize)
	}
	f.AvailMemBytes = memAvailable()
	f.InotifyWatches = readInt("/proc/sys/fs/inotify/max_user_watches")
	f.InotifyInstances = readInt("/proc/sys/fs/inotify/max_user_instances")
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if addrs, err := net.DefaultResolver.LookupHost(rctx, "registry.k8s.io"); err == nil && len(addrs) > 0 {
		f.RegistryResolves = true
	}
	if out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err == nil {
		f.GoVersion = strings.TrimSpace(string(out))
	}
	return f
}

const gib = 1 << 30

// Decide turns facts into checks. It is pure, so every branch is unit-tested.
func Decide(f Facts) []Check {
	var cs []Check
	switch {
	case f.EngineVersion != "":
		cs = append(cs, Check{"docker engine", Pass, "Docker " + f.EngineVersion + " answers", ""})
	case f.EngineState == dockerhost.EngineUnresponsive:
		cs = append(cs, Check{"docker engine", Fail, f.EngineError,
			"wait for it and run again, or look at its log (" + dockerhost.DaemonLog + " if termlab started it); termlab will not start a second engine beside it"})
	case f.EngineState == dockerhost.EngineRefuses:
		cs = append(cs, Check{"docker engine", Fail, f.EngineError, "make this engine answer `docker version`; termlab will not start a second engine beside it"})
	case f.CanProvision && f.NoHostChanges:
		cs = append(cs, Check{"docker engine", Fail, f.EngineError,
			dockerhost.NoHostChangesEnv + " is set, so cluster:up will not install or start one: run `" + invocation.Command("cluster:up") + "` to have each command printed, run them yourself, and run again (or unset " + dockerhost.NoHostChangesEnv + ")"})
	case f.CanProvision:
		cs = append(cs, Check{"docker engine", Fail, f.EngineError,
			"run `" + invocation.Command("cluster:up") + "`: on this host (Linux, root, apt) it installs Debian's docker.io and starts dockerd, logging to " + dockerhost.DaemonLog})
	default:
		cs = append(cs, Check{"docker engine", Fail, f.EngineError, f.ProvisionWhy})
	}
	switch {
	case f.PrivilegedProbe == "ok":
		cs = append(cs, Check{"privileged containers", Pass, "a --privileged container started", ""})
	case f.PrivilegedProbe != "":
		fix := "privileged containers are required by kind"
		if len(f.MissingCaps) > 0 && !f.WrapperDefault {
			fix = "the host bounding set lacks " + strings.Join(f.MissingCaps, ",") + ": stop dockerd and run `" + invocation.Command("cluster:up") + "`, which registers the " + dockerhost.WrapperRuntime + " runtime before starting dockerd"
		}
		cs = append(cs, Check{"privileged containers", Fail, f.PrivilegedProbe, fix})
	case len(f.MissingCaps) == 0:
		cs = append(cs, Check{"privileged containers", Pass, "capability bounding set is complete", ""})
	case f.WrapperDefault:
		cs = append(cs, Check{"privileged containers", Pass, "bounding set lacks " + strings.Join(f.MissingCaps, ",") + "; dockerd's default runtime " + dockerhost.WrapperRuntime + " drops them", ""})
	case f.EngineVersion == "" && f.CanProvision:
		cs = append(cs, Check{"privileged containers", Info, "bounding set lacks " + strings.Join(f.MissingCaps, ",") + "; cluster:up will register the " + dockerhost.WrapperRuntime + " runtime", ""})
	default:
		cs = append(cs, Check{"privileged containers", Fail, "bounding set lacks " + strings.Join(f.MissingCaps, ",") + " and dockerd's default runtime does not drop them: `docker run --privileged` fails",
			"register cmd/termlab-runc as dockerd's default runtime (README.md#what-termlab-changes-on-your-machine), or run on a host with a full capability set"})
	}
	cs = append(cs, hostChanges(f))
	if f.DaemonJSON != nil {
		cs = append(cs, daemonJSON(f))
	}
	if f.CgroupV1 {
		cs = append(cs, Check{"cgroups", Warn, "cgroup v1: supported (cluster:up sets the kubelet's failCgroupV1: false); kind prints a deprecation warning", ""})
	} else {
		cs = append(cs, Check{"cgroups", Pass, "cgroup v2", ""})
	}
	switch {
	case f.FreeDiskBytes == 0:
		cs = append(cs, Check{"free disk", Warn, "could not read free space", ""})
	case f.FreeDiskBytes < 8*gib:
		cs = append(cs, Check{"free disk", Fail, fmt.Sprintf("%.1f GiB free", float64(f.FreeDiskBytes)/gib), "free at least 8 GiB (a local image build needs ~6 GiB, the cluster ~2 GiB)"})
	default:
		cs = append(cs, Check{"free disk", Pass, fmt.Sprintf("%.1f GiB free", float64(f.FreeDiskBytes)/gib), ""})
	}
	switch {
	case f.AvailMemBytes == 0:
		cs = append(cs, Check{"memory", Warn, "could not read available memory", ""})
	case f.AvailMemBytes < 2*gib:
		cs = append(cs, Check{"memory", Fail, fmt.Sprintf("%.1f GiB available", float64(f.AvailMemBytes)/gib), "the cluster needs about 1 GiB and a Kubernetes build 3 GiB: free memory"})
	case f.AvailMemBytes < 4*gib:
		cs = append(cs, Check{"memory", Warn, fmt.Sprintf("%.1f GiB available", float64(f.AvailMemBytes)/gib), "a local Kubernetes build peaks near 3 GiB"})
	default:
		cs = append(cs, Check{"memory", Pass, fmt.Sprintf("%.1f GiB available", float64(f.AvailMemBytes)/gib), ""})
	}
	if f.InotifyWatches > 0 && (f.InotifyWatches < 524288 || f.InotifyInstances < 512) {
		cs = append(cs, Check{"inotify limits", Warn, fmt.Sprintf("max_user_watches=%d max_user_instances=%d", f.InotifyWatches, f.InotifyInstances),
			"kind recommends: sysctl -w fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512"})
	} else {
		cs = append(cs, Check{"inotify limits", Pass, fmt.Sprintf("max_user_watches=%d max_user_instances=%d", f.InotifyWatches, f.InotifyInstances), ""})
	}
	if f.RegistryResolves {
		cs = append(cs, Check{"registry", Pass, "registry.k8s.io resolves: official images are pulled when missing", ""})
	} else {
		cs = append(cs, Check{"registry", Info, "no registry reachable: images are built locally (first run ~15 min, then cached)", ""})
	}
	switch {
	case f.GoVersion != "":
		cs = append(cs, Check{"go toolchain", Pass, f.GoVersion, ""})
	case !f.RegistryResolves:
		cs = append(cs, Check{"go toolchain", Fail, "no go command, and images must be built locally", "install Go 1.26 (https://go.dev/dl) or load a workshop bundle"})
	default:
		cs = append(cs, Check{"go toolchain", Warn, "no go command", "install Go 1.26 to build the workload image"})
	}
	return cs
}

// hostChanges says whether termlab may change this host, and what it would change.
func hostChanges(f Facts) Check {
	switch {
	case f.NoHostChanges:
		return Check{"host changes", Info, dockerhost.NoHostChangesEnv + " is set: termlab installs, edits and starts nothing on this host, and says what to do instead", ""}
	case f.CanProvision:
		return Check{"host changes", Info, dockerhost.NoHostChangesEnv + " is not set: where no engine answers, cluster:up may install docker.io with apt, register " +
			dockerhost.WrapperRuntime + " in " + dockerhost.DaemonJSON + " and start dockerd (set " + dockerhost.NoHostChangesEnv + "=1 to decline)", ""}
	default:
		return Check{"host changes", Info, dockerhost.NoHostChangesEnv + " is not set; termlab cannot install an engine here anyway", ""}
	}
}

// daemonJSON says what termlab changed in daemon.json and how to undo it.
func daemonJSON(f Facts) Check {
	ch := *f.DaemonJSON
	detail := "termlab's keys " + strings.Join(ch.Keys, " and ") + " are in " + ch.Path
	if ch.Backup != "" {
		detail += " (the file as it was: " + ch.Backup + ")"
	}
	detail += "; to undo: " + ch.Undo()
	if len(f.MissingCaps) > 0 {
		detail += " (without " + dockerhost.WrapperRuntime + ", `docker run --privileged` fails here: the bounding set lacks " + strings.Join(f.MissingCaps, ",") + ")"
	}
	return Check{"daemon.json", Info, detail, ""}
}

// Failed reports whether any check failed.
func Failed(cs []Check) bool {
	for _, c := range cs {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// Render writes the checks, one line each, with the fix under a failing or warning one.
func Render(w io.Writer, cs []Check) {
	for _, c := range cs {
		fmt.Fprintf(w, "%-4s  %-22s %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "      %-22s fix: %s\n", "", c.Fix)
		}
	}
}

// Run gathers, decides and prints; it returns an error when the cluster cannot work here.
func Run(ctx context.Context, w io.Writer) error {
	cs := Decide(Gather(ctx))
	Render(w, cs)
	if Failed(cs) {
		return fmt.Errorf("doctor: the cluster cannot work on this machine until the FAIL lines are fixed")
	}
	fmt.Fprintln(w, "doctor: this machine can run the termlab cluster")
	return nil
}

func diskPath() string {
	if _, err := os.Stat("/var/lib/docker"); err == nil {
		return "/var/lib/docker"
	}
	return "/"
}

func memAvailable() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "MemAvailable:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func readInt(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
