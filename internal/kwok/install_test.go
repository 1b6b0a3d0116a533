package kwok

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A controller that moved leaves fake nodes with its old IP: the repair puts
// in the new one and keeps every other address.
func TestWithInternalIP(t *testing.T) {
	have := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.244.0.3"}, {Type: corev1.NodeHostName, Address: "kwok-node-0"}}
	got, changed := withInternalIP(have, "172.20.0.3")
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.20.0.3"}, {Type: corev1.NodeHostName, Address: "kwok-node-0"}}
	if !changed || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v changed=%v, want %v", got, changed, want)
	}
	if have[0].Address != "10.244.0.3" {
		t.Error("the node's own addresses were modified")
	}
	for _, tc := range []struct {
		addrs []corev1.NodeAddress
		ip    string
	}{
		{want, "172.20.0.3"},     // already right
		{have, ""},               // controller IP unknown
		{nil, "172.20.0.3"},      // not initialized by kwok yet
		{have[1:], "172.20.0.3"}, // no InternalIP to replace
	} {
		if _, changed := withInternalIP(tc.addrs, tc.ip); changed {
			t.Errorf("%v with %q: changed, want unchanged", tc.addrs, tc.ip)
		}
	}
}
