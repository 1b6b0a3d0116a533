package nodepod

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"
)

// A command the agent would refuse fails before anything is sent (the fake
// clientset has no REST client: a request would panic), saying why.
func TestRefusedCommandIsNotSent(t *testing.T) {
	a := New(fake.NewClientset(), nil, Options{RunID: "20261203-070000-abcd", Agent: true})
	n := &Node{access: a, name: "w1", pod: "node-w1"}
	for _, tc := range []struct {
		argv []string
		env  []string
		why  string
	}{
		{[]string{"systemd-run", "--unit=x", "/bin/sh", "-c", "id"}, nil, "not as kubelet.ArmCommand sends it"},
		{[]string{"systemctl", "start", "kubelet"}, []string{"/bin/sh"}, "is not NAME=VALUE"},
	} {
		err := n.CommandContext(context.Background(), tc.argv[0], tc.argv[1:]...).SetEnv(tc.env...).Run()
		var run *exec.RunError
		if !errors.As(err, &run) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: %v, want a RunError saying %q", tc.argv, err, tc.why)
		}
	}
}
