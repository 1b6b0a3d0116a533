package recorder

import (
	"os"
	"slices"
	"testing"
)

func TestParseProxyRules(t *testing.T) {
	// A real node's `iptables-save -t nat` (kube-proxy v1.37.2, iptables mode).
	raw, err := os.ReadFile("testdata/iptables-nat.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := ParseProxyRules(raw, "kube-system")
	if !slices.Equal(got["kube-system/kube-dns:dns-tcp"], []string{"10.244.0.2:53", "10.244.0.3:53"}) {
		t.Errorf("kube-dns:dns-tcp forwards to %v", got["kube-system/kube-dns:dns-tcp"])
	}
	if _, ok := got["default/kubernetes:https"]; ok {
		t.Errorf("another namespace's Service was taken: %v", got)
	}
	if n := len(ParseProxyRules(raw, "nothing-here")); n != 0 {
		t.Errorf("%d services of an empty namespace", n)
	}
}

func TestParseTaskExit(t *testing.T) {
	const exit = `2026-12-04 02:29:50.798757751 +0000 UTC k8s.io /tasks/exit {"container_id":"8a59","id":"8a59","pid":20079,"exit_status":137,"exited_at":{"seconds":1796351390,"nanos":797704084}}`
	e, ok := ParseTaskExit([]byte(exit))
	if !ok || e.ContainerID != "8a59" || e.ExitStatus != 137 || e.ExitedAt.UnixNano() != 1796351390797704084 {
		t.Errorf("%+v %v", e, ok)
	}
	for _, other := range []string{
		`2026-12-04 02:29:28.823232729 +0000 UTC k8s.io /tasks/start {"container_id":"420d","pid":19796}`,
		`2026-12-04 02:29:50.798757751 +0000 UTC k8s.io /tasks/exit {"container_id":"8a59","id":"exec-1","pid":20080,"exit_status":0,"exited_at":{"seconds":1796351390,"nanos":1}}`,
	} {
		if _, ok := ParseTaskExit([]byte(other)); ok {
			t.Errorf("taken as a container's exit: %s", other)
		}
	}
}
