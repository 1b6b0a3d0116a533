package mounthold

import (
	"strings"
	"testing"
	"time"
)

const mountinfo = `25 1 0:21 / / rw,relatime - overlay overlay rw
812 25 0:98 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/scratch rw,relatime - tmpfs tmpfs rw,size=65536k
813 25 0:99 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~projected/kube-api-access-x rw,relatime - tmpfs tmpfs rw
814 25 0:100 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/scratch-two rw - tmpfs tmpfs rw
815 25 0:101 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/scratch/in\040side rw - tmpfs tmpfs rw
`

func TestMountsUnderFindsTheDirAndBelowOnly(t *testing.T) {
	dir := EmptyDirPath("u1", "scratch")
	got := MountsUnder(mountinfo, dir)
	if len(got) != 2 || got[0].Target != dir || got[0].FSType != "tmpfs" || got[1].Target != dir+"/in side" {
		t.Fatalf("got %+v", got)
	}
	if got := MountsUnder(mountinfo, EmptyDirPath("u2", "scratch")); len(got) != 0 {
		t.Fatalf("another pod's dir: %+v", got)
	}
}

func TestHoldCommandsBoundTheHolder(t *testing.T) {
	cmds := HoldCommands("r1", "/x y", 90*time.Second+time.Millisecond)
	line := strings.Join(cmds[0], " ")
	for _, want := range []string{"--unit=" + Unit, "--property=WorkingDirectory=/x y", "RuntimeMaxSec=91", "--collect", "r1"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
}
