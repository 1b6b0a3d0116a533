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
