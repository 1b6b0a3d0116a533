package nodeimage

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/cachekey"
	"github.com/termlab/termlab/internal/progress"
)

// Suite is the Debian release the node image is built from (kind's base is trixie too).
const Suite = "trixie"

// RootfsPackages are what kind's base image installs, plus the container runtime,
// runc and CNI plugins, which kind builds from source and we take from Debian.
var RootfsPackages = []string{
	"systemd", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount",
	"kmod", "libseccomp2", "pigz", "e2fsprogs", "bash", "ca-certificates", "curl", "jq", "procps",
	"runc", "containerd", "containernetworking-plugins",
}

// DebianMirror returns the mirror apt on this host uses (so debootstrap reaches
// the same one), or the public default.
func DebianMirror() string {
	if m := os.Getenv("TERMLAB_DEBIAN_MIRROR"); m != "" {
		return m
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	files = append(files, "/etc/apt/sources.list")
	for _, f := range files {
		if m := mirrorFrom(f); m != "" {
			return m
		}
	}
	return "http://deb.debian.org/debian"
}

// mirrorFrom finds the first main Debian archive URI in an apt sources file
// (deb822 "URIs:" or one-line "deb URI suite" format), skipping security mirrors.
func mirrorFrom(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		var uri string
		if v, ok := strings.CutPrefix(line, "URIs:"); ok {
			uri = strings.Fields(v + " ")[0]
		} else if fields := strings.Fields(line); len(fields) >= 3 && fields[0] == "deb" {
			uri = fields[1]
			if strings.HasPrefix(uri, "[") {
				uri = fields[2]
			}
		}
		if uri != "" && !strings.Contains(uri, "security") {
			return strings.TrimSuffix(uri, "/")
		}
	}
	return ""
}

// rootfsKey is the cache key of the Debian root filesystem.
func rootfsKey(mirror string) *cachekey.Key {
	return cachekey.New().
		Add("recipe", "rootfs-v1").
		Add("suite", Suite).
		Add("mirror", mirror).
		Add("packages", strings.Join(RootfsPackages, ","))
}

// BuildRootfs returns the path of a tarball of a debootstrapped Debian root
// filesystem with the node packages, building it only when its inputs changed.
func BuildRootfs(ctx context.Context, log *progress.Logger, cacheDir string) (string, error) {
	mirror := DebianMirror()
	key := rootfsKey(mirror).String()
	tarPath := filepath.Join(cacheDir, "rootfs", "debian-"+Suite+"-"+key+".tar")
	if _, err := os.Stat(tarPath); err == nil {
		log.Infof("Debian %s root filesystem: cached (%s)", Suite, tarPath)
		return tarPath, nil
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		if err := aptInstall(ctx, log, cacheDir, "debootstrap"); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(cacheDir, "rootfs", "work-"+key)
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	logPath := filepath.Join(cacheDir, "logs", "debootstrap-"+key+".log")
	done := log.Step(fmt.Sprintf("debootstrap %s from %s (log: %s)", Suite, mirror, logPath))
	stop := log.Ticker("running debootstrap", 30*time.Second)
	err := runLogged(ctx, logPath, "debootstrap", "--variant=minbase",
		"--include="+strings.Join(RootfsPackages, ","), Suite, dir, mirror)
	stop()
	done(err)
	if err != nil {
		return "", err
	}
	// Keep the image small: no package caches or lists.
	for _, p := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		entries, _ := os.ReadDir(filepath.Join(dir, p))
		for _, e := range entries {
			if e.Name() != "partial" && e.Name() != "lock" {
				_ = os.RemoveAll(filepath.Join(dir, p, e.Name()))
			}
		}
	}
	done = log.Step("packing root filesystem")
	tmp := tarPath + ".tmp"
	err = runLogged(ctx, logPath, "tar", "--numeric-owner", "-C", dir, "-cf", tmp, ".")
	if err == nil {
		err = os.Rename(tmp, tarPath)
	}
	done(err)
	if err != nil {
		return "", err
	}
	_ = os.RemoveAll(dir)
	return tarPath, nil
}

func aptInstall(ctx context.Context, log *progress.Logger, cacheDir string, pkgs ...string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is needed to build a node image: install it (apt-get install %s) or use a registry-reachable machine", strings.Join(pkgs, " "), strings.Join(pkgs, " "))
	}
	logPath := filepath.Join(cacheDir, "logs", "apt-"+strings.Join(pkgs, "-")+".log")
	done := log.Step("apt-get install " + strings.Join(pkgs, " "))
	err := runLogged(ctx, logPath, "apt-get", "update", "-q")
	if err == nil {
		err = runLogged(ctx, logPath, "apt-get", append([]string{"install", "-y", "-q"}, pkgs...)...)
	}
	done(err)
	return err
}

// runLogged runs a host command with its output appended to logPath; on failure
// the error names the command and shows the log's last lines.
func runLogged(ctx context.Context, logPath, name string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "\n$ %s %s\n", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w (log %s):\n%s", name, err, logPath, lastLines(logPath, 15))
	}
	return nil
}

func lastLines(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// BuildRecord is one line of builds.jsonl: what was built, from which key, how long it took.
type BuildRecord struct {
	Name            string    `json:"name"`
	Key             string    `json:"key"`
	Cached          bool      `json:"cached"`
	DurationSeconds float64   `json:"duration_seconds"`
	FinishedAt      time.Time `json:"finished_at"`
	// PID is the process that asked: the journal is the machine's.
	PID int `json:"pid,omitempty"`
}

// AppendRecord appends a build record to cacheDir/image-builds.jsonl (read by the measurement target).
func AppendRecord(cacheDir string, r BuildRecord) {
	if r.PID == 0 {
		r.PID = os.Getpid()
	}
	f, err := os.OpenFile(filepath.Join(cacheDir, "image-builds.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_ = json.NewEncoder(f).Encode(r)
}
