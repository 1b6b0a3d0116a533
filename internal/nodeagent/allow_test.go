package nodeagent

import (
	"strings"
	"testing"
)

// Commands that would give a caller with the token more than termlab's own
// node evidence and kubelet control: each is refused, and the reason names
// what was wrong.
func TestHostileCommandsAreRefused(t *testing.T) {
	const run = "20261203-070000-abcd"
	const dir = "/var/lib/kubelet/pods/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/volumes/kubernetes.io~empty-dir/scratch"
	for _, tc := range []struct {
		name string
		argv []string
		why  string
	}{
		{"nothing", nil, "empty command"},
		{"a shell", []string{"sh", "-c", "id"}, `"sh" is not a program`},
		{"a path to a program", []string{"/usr/bin/systemctl", "stop", "kubelet"}, "is not a program"},
		{"systemd-run of a shell", []string{"systemd-run", "--unit=x", "/bin/sh", "-c", "id > /tmp/x"}, "not as kubelet.ArmCommand sends it"},
		{"systemd-run with the switch's name and another command", []string{"systemd-run", "--unit=termlab-restore-kubelet-" + run, "--description=termlab: start the kubelet if termlab does not",
			"--on-active=5s", "--timer-property=AccuracySec=1s", "/bin/sh", "-c", "id"}, "differs from"},
		{"systemd-run with the switch's name and an extra property", []string{"systemd-run", "--unit=termlab-restore-kubelet-" + run, "--property=ExecStartPre=/bin/sh -c id", "--description=termlab: start the kubelet if termlab does not",
			"--on-active=5s", "--timer-property=AccuracySec=1s", "systemctl", "start", "kubelet"}, "differs from"},
		{"a switch far off", []string{"systemd-run", "--unit=termlab-restore-kubelet-" + run, "--description=termlab: start the kubelet if termlab does not",
			"--on-active=999999s", "--timer-property=AccuracySec=1s", "systemctl", "start", "kubelet"}, "not a number of seconds from 1 to 3600"},
		{"a switch with a glob for its run id", []string{"systemd-run", "--unit=termlab-restore-kubelet-*", "--description=termlab: start the kubelet if termlab does not",
			"--on-active=5s", "--timer-property=AccuracySec=1s", "systemctl", "start", "kubelet"}, "is not --unit=termlab-restore-kubelet-<run id>"},
		{"the holder elsewhere", []string{"systemd-run", "--unit=termlab-hold-mount.service", "--collect", "--description=termlab run " + run + ": a process with its working directory in the pod's volume",
			"--property=WorkingDirectory=/etc", "--property=RuntimeMaxSec=60", "sleep", "infinity"}, "is not a pod's emptyDir"},
		{"the holder climbing out", []string{"systemd-run", "--unit=termlab-hold-mount.service", "--collect", "--description=termlab run " + run + ": a process with its working directory in the pod's volume",
			"--property=WorkingDirectory=" + dir + "/../../../../../../etc", "--property=RuntimeMaxSec=60", "sleep", "infinity"}, "is not a pod's emptyDir"},
		{"the holder running a shell", []string{"systemd-run", "--unit=termlab-hold-mount.service", "--collect", "--description=termlab run " + run + ": a process with its working directory in the pod's volume",
			"--property=WorkingDirectory=" + dir, "--property=RuntimeMaxSec=60", "sh", "-c", "id"}, "differs from"},
		{"another unit started", []string{"systemctl", "start", "some-other.service"}, "not one unit of kubelet"},
		{"the holder started by systemctl", []string{"systemctl", "start", "termlab-hold-mount.service"}, "not one unit of kubelet"},
		{"two units stopped", []string{"systemctl", "stop", "kubelet", "sshd"}, "not one unit of"},
		{"a unit glob stopped", []string{"systemctl", "stop", "termlab-restore-kubelet-*.timer"}, "not one unit of"},
		{"a switch service stopped by its path", []string{"systemctl", "stop", "termlab-restore-kubelet-../../x.timer"}, "not one unit of"},
		{"an option smuggled as the unit", []string{"systemctl", "stop", "--root=/tmp"}, "not one unit of"},
		{"systemctl disable", []string{"systemctl", "disable", "kubelet"}, `systemctl "disable" is not a subcommand`},
		{"systemctl edit", []string{"systemctl", "edit", "kubelet"}, "is not a subcommand"},
		{"systemctl set-property", []string{"systemctl", "set-property", "kubelet", "ExecStart=/bin/sh"}, "is not a subcommand"},
		{"systemctl show of another unit", []string{"systemctl", "show", "sshd", "-p", "ActiveState"}, "do not begin with kubelet"},
		{"systemctl show with an option", []string{"systemctl", "show", "kubelet", "-p", "ActiveState", "--root=/tmp"}, "not -p <Property> pairs"},
		{"dd writing a file", []string{"dd", "if=/dev/zero", "of=/etc/passwd"}, "not if=<file>"},
		{"dd reading a secret", []string{"dd", "if=/etc/shadow", "bs=1M", "iflag=skip_bytes,count_bytes", "skip=0", "count=10", "status=none"}, "is not a file in /var/log/kubernetes/audit"},
		{"dd climbing out of the audit dir", []string{"dd", "if=/var/log/kubernetes/audit/../../../../etc/shadow", "bs=1M", "iflag=skip_bytes,count_bytes", "skip=0", "count=10", "status=none"}, "is not a file in"},
		{"dd writing with the reader's shape", []string{"dd", "if=/var/log/kubernetes/audit/audit.log", "bs=1M", "iflag=skip_bytes,count_bytes", "skip=0", "count=10", "of=/etc/passwd"}, "are not if=<file>"},
		{"dd with a negative skip", []string{"dd", "if=/var/log/kubernetes/audit/audit.log", "bs=1M", "iflag=skip_bytes,count_bytes", "skip=-1", "count=10", "status=none"}, "are not if=<file>"},
		{"cat of a secret", []string{"cat", "/etc/kubernetes/pki/ca.key"}, "are not"},
		{"cat of two files", []string{"cat", "/proc/1/mountinfo", "/etc/shadow"}, "are not"},
		{"stat elsewhere", []string{"stat", "-c", "%i %s", "/root/.ssh/id_rsa"}, "is not a file in"},
		{"ls elsewhere", []string{"ls", "-i1", "/root"}, "are not"},
		{"readlink of another link", []string{"readlink", "/proc/1/root"}, "not /proc/<pid>/cwd"},
		{"readlink climbing", []string{"readlink", "/proc/../etc/cwd"}, "not /proc/<pid>/cwd"},
		{"crictl exec", []string{"crictl", "exec", "abc", "sh"}, `crictl "exec" is not a subcommand`},
		{"crictl rm", []string{"crictl", "rm", "abc"}, "is not a subcommand"},
		{"crictl stop", []string{"crictl", "stop", "abc"}, "is not a subcommand"},
		{"crictl run", []string{"crictl", "run", "c.json", "p.json"}, "is not a subcommand"},
		{"crictl with its own endpoint", []string{"crictl", "--runtime-endpoint=unix:///tmp/x", "ps"}, "is not a subcommand"},
		{"crictl inspect of an option", []string{"crictl", "inspect", "--runtime-endpoint=unix:///tmp/x"}, "not one container ID"},
		{"crictl inspect with a ;", []string{"crictl", "inspect", "abc;reboot"}, "not one container ID"},
		{"crictl logs of two", []string{"crictl", "logs", "abc", "def"}, "not one container ID"},
		{"crictl ps of another label", []string{"crictl", "ps", "-a", "-o", "json", "--label", "x=$(reboot)"}, "are not -a -o json"},
		{"date setting the clock", []string{"date", "-s", "2020-01-01"}, "are not"},
		{"iptables-save to a file", []string{"iptables-save", "-f", "/etc/passwd"}, "are not"},
		{"a newline in an argument", []string{"systemctl", "stop", "kubelet\nreboot"}, "control character"},
		{"a NUL in an argument", []string{"crictl", "inspect", "abc\x00"}, "control character"},
		{"env as the program", []string{"env", "LD_PRELOAD=/tmp/x.so", "crictl", "ps"}, `"env" is not a program`},
		{"journalctl (only diagnose sends it, through pods/exec)", []string{"journalctl", "-u", "kubelet"}, "is not a program"},
		{"tail (nothing sends it)", []string{"tail", "-c", "+0", "/var/log/kubernetes/audit/audit.log"}, "is not a program"},
		{"kill (the followers' stop; they cannot run through the agent)", []string{"kill", "1"}, "is not a program"},
	} {
		err := Allowed(tc.argv)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: Allowed(%q) = %v, want a refusal saying %q", tc.name, tc.argv, err, tc.why)
		}
	}
}

func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		env []string
		why string // "" when accepted
	}{
		{nil, ""},
		{[]string{"NO_COLOR=1", "SYSTEMD_COLORS=0"}, ""},
		{[]string{"NO_COLOR="}, ""},
		{[]string{"/bin/sh"}, "is not NAME=VALUE"},
		{[]string{"reboot"}, "is not NAME=VALUE"},
		{[]string{"-i"}, "is not NAME=VALUE"},
		{[]string{"=x"}, "is not a variable name"},
		{[]string{"1X=y"}, "is not a variable name"},
		{[]string{"A B=y"}, "is not a variable name"},
		{[]string{"LD_PRELOAD=/tmp/x.so"}, "passes no LD_PRELOAD"},
		{[]string{"PATH=/tmp"}, "passes no PATH"},
		{[]string{"LOCPATH=/tmp"}, "passes no LOCPATH"},
		{[]string{"NO_COLOR=1", "SYSTEMD_PAGER=sh"}, "passes no SYSTEMD_PAGER"},
		{[]string{"NO_COLOR=1\nX=2"}, "control character"},
	} {
		err := CheckEnv(tc.env)
		if tc.why == "" && err != nil || tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)) {
			t.Errorf("CheckEnv(%q) = %v, want %q", tc.env, err, tc.why)
		}
	}
}

// Each rule names one verb: two rules of one program and verb would make
// a refusal's reasons hard to read, except where the shapes differ by
// design (systemd-run: the switch and the holder).
func TestRulesAreOnePerVerb(t *testing.T) {
	seen := map[string]int{}
	for _, r := range rules {
		seen[r.program+" "+r.verb]++
	}
	for k, n := range seen {
		if n > 1 && k != "systemd-run " {
			t.Errorf("%d rules for %q", n, k)
		}
	}
}
