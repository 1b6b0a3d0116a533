package nodepod

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/nodeagent"
)

// The agent's pod holds the token's hash, never the token, and no Secret
// is referenced; the agent learns the one address to listen on from the
// downward API.
func TestAgentPodHoldsOnlyTheTokensHash(t *testing.T) {
	a := New(fake.NewClientset(), nil, Options{RunID: "20261203-070000-abcd", Agent: true})
	pod := a.podFor("w1", WorkloadImage)
	c := pod.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("env %s comes from a Secret", e.Name)
		}
		if strings.Contains(e.Value, a.agentToken) {
			t.Errorf("env %s holds the token", e.Name)
		}
	}
	if got := env[nodeagent.TokenHashEnv].Value; got != nodeagent.TokenHash(a.agentToken) || len(a.agentToken) < 32 {
		t.Errorf("%s = %q for a token of %d characters", nodeagent.TokenHashEnv, got, len(a.agentToken))
	}
	if ip := env[nodeagent.PodIPEnv].ValueFrom; ip == nil || ip.FieldRef == nil || ip.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("%s is not the downward API's status.podIP: %+v", nodeagent.PodIPEnv, env[nodeagent.PodIPEnv])
	}
	if !pod.Spec.HostNetwork {
		t.Error("the agent's pod is not on the host's network: pods/proxy would reach it, the node's kubelet-less network would not")
	}
	if strings.Contains(strings.Join(c.Command, " "), a.agentToken) {
		t.Errorf("the command %q holds the token", c.Command)
	}
}

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

func TestStartContextOutlivesTheCallersDeadlineNotItsCancel(t *testing.T) {
	short, cancelShort := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancelShort()
	sctx, stop := startContext(short)
	<-short.Done()
	time.Sleep(10 * time.Millisecond) // AfterFunc has run by now
	if err := sctx.Err(); err != nil {
		t.Errorf("the caller's deadline ended the start: %v", err)
	}
	stop()
	if sctx.Err() == nil {
		t.Errorf("stop did not end the start's context")
	}

	parent, interrupt := context.WithCancelCause(context.Background())
	within, cancelWithin := context.WithTimeout(parent, time.Hour)
	defer cancelWithin()
	sctx, stop = startContext(within)
	defer stop()
	interrupt(errors.New("interrupted"))
	select {
	case <-sctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the caller's cancellation did not reach the start")
	}
	if cause := context.Cause(sctx); cause == nil || cause.Error() != "interrupted" {
		t.Errorf("cause %v, want the caller's", cause)
	}
}
