package recorder

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/termlab/termlab/internal/evidence"
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

// The EndpointSlice watch records each endpoint's conditions, from the LIST
// and then from the watch (a fake clientset only serves the watch here: no
// deletion behaviour is tested against it).
func TestEndpointSliceWatch(t *testing.T) {
	yes, no := true, false
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "svc-abc", Namespace: "ns", Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.244.1.5"},
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: "victim"},
		}},
	}
	client := fake.NewClientset(slice)
	r, err := Start(context.Background(), Config{Client: client, Namespace: "ns", Dir: t.TempDir(), EndpointSlices: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	terminating := slice.DeepCopy()
	terminating.Endpoints[0].Conditions = discoveryv1.EndpointConditions{Ready: &no, Serving: &yes, Terminating: &yes}
	if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(context.Background(), terminating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := r.WaitEndpointSlice(ctx, "show the endpoint terminating", func(e evidence.EndpointSliceEvent) bool {
		ep, ok := e.Endpoint("victim")
		return ok && ep.Terminating != nil && *ep.Terminating
	})
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := e.Endpoint("victim")
	if e.Service != "svc" || e.Type == string(listed) || *ep.Ready || !*ep.Serving || ep.Addresses[0] != "10.244.1.5" {
		t.Errorf("%+v %+v", e, ep)
	}
	if first := r.Record().EndpointSlices[0]; first.Type != string(listed) {
		t.Errorf("the listed slice was recorded as %s", first.Type)
	}
}

func TestCompleteNATTable(t *testing.T) {
	raw, err := os.ReadFile("testdata/iptables-nat.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := completeNATTable(raw); err != nil {
		t.Errorf("a whole read: %v", err)
	}
	// Cut where a pods/exec stream may cut it: mid-line, after a whole
	// line, just before the trailer; and nothing at all.
	commit := bytes.LastIndex(raw, []byte("COMMIT"))
	for name, cut := range map[string][]byte{
		"mid-line":       raw[:len(raw)/2],
		"after a line":   raw[:bytes.LastIndexByte(raw[:len(raw)/2], '\n')+1],
		"before COMMIT":  raw[:commit],
		"before trailer": raw[:commit+len("COMMIT\n")],
		"empty":          nil,
	} {
		if err := completeNATTable(cut); err == nil {
			t.Errorf("%s: a cut read (%d of %d bytes) passed as whole", name, len(cut), len(raw))
		}
	}
}
