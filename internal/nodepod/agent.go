package nodepod

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/termlab/termlab/internal/nodeagent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/exec"
)

// Agent mode (Options.Agent). pods/exec goes through the node's kubelet, so
// it cannot start a kubelet that a lab stopped, nor ask crictl while it is
// down. The node pod then runs `heartbeat agent` on the node's network, and
// commands go through the API server's pods/proxy, which connects to the
// pod's IP itself. The agent listens on that IP only, runs only the command
// shapes termlab sends (nodeagent.Allowed, checked here too before
// anything is sent), and only for a caller with the run's token. The token
// stays in this process's memory: the pods get its SHA-256 in their spec,
// so nothing in the cluster holds what the agent asks for.

const (
	agentPortFirst = 20000
	agentPortSpan  = 10000
	// agentReady bounds the wait for a started agent to answer.
	agentReady = 30 * time.Second
)

// newAgentSecret picks the agents' port and token (24 random bytes).
func newAgentSecret() (int, string) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	p, _ := rand.Int(rand.Reader, big.NewInt(agentPortSpan))
	return agentPortFirst + int(p.Int64()), hex.EncodeToString(b)
}

// mainCommand is the node pod's main process: the agent, or idle.
func (a *Access) mainCommand(image string) []string {
	if a.opts.Agent {
		return []string{"/heartbeat", "agent", strconv.Itoa(a.agentPort), hostRoot}
	}
	return idleCommand(image)
}

func (a *Access) agentEnv() []corev1.EnvVar {
	if !a.opts.Agent {
		return nil
	}
	return []corev1.EnvVar{
		{Name: nodeagent.TokenHashEnv, Value: nodeagent.TokenHash(a.agentToken)},
		// With the host's network the pod's IP is the node's: the address
		// pods/proxy connects to, and the only one the agent listens on.
		{Name: nodeagent.PodIPEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	}
}

// proxyName is the pod and port as pods/proxy names them.
func (a *Access) proxyName(n *Node) string { return n.pod + ":" + strconv.Itoa(a.agentPort) }

// waitAgent waits until the agent answers through the API server.
func (a *Access) waitAgent(ctx context.Context, n *Node) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, agentReady, true, func(ctx context.Context) (bool, error) {
		_, last = a.client.CoreV1().RESTClient().Get().Namespace(a.Namespace()).Resource("pods").
			Name(a.proxyName(n)).SubResource("proxy").Suffix("healthz").Do(ctx).Raw()
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the agent in node pod %s/%s on %s did not answer through pods/proxy within %s: %v", a.Namespace(), n.pod, n.name, agentReady, last)
	}
	return nil
}

// runAgent sends the command to the node's agent. A command the agent
// would refuse fails here, saying why, before anything is sent.
func (c *cmd) runAgent() error {
	a := c.node.access
	if err := nodeagent.Allowed(c.argv); err != nil {
		return &exec.RunError{Command: c.argv, Inner: fmt.Errorf("on node %s: the node agent does not run it: %w", c.node.name, err)}
	}
	if err := nodeagent.CheckEnv(c.env); err != nil {
		return &exec.RunError{Command: c.argv, Inner: fmt.Errorf("on node %s: the node agent does not run it: %w", c.node.name, err)}
	}
	req := nodeagent.Request{Token: a.agentToken, Argv: c.argv, Env: c.env}
	if c.stdin != nil {
		in, err := io.ReadAll(c.stdin)
		if err != nil {
			return &exec.RunError{Command: c.argv, Inner: err}
		}
		req.Stdin = in
	}
	if d, ok := c.ctx.Deadline(); ok {
		req.Seconds = int(time.Until(d)/time.Second) + 1
	}
	body, err := json.Marshal(req)
	if err != nil {
		return &exec.RunError{Command: c.argv, Inner: err}
	}
	raw, err := a.client.CoreV1().RESTClient().Post().Namespace(a.Namespace()).Resource("pods").
		Name(a.proxyName(c.node)).SubResource("proxy").Suffix("run").
		SetHeader("Content-Type", "application/json").Body(body).Do(c.ctx).Raw()
	if err != nil {
		return &exec.RunError{Command: c.argv, Inner: fmt.Errorf("on node %s through the agent in pod %s/%s: %w", c.node.name, a.Namespace(), c.node.pod, err)}
	}
	var res nodeagent.Response
	if err := json.Unmarshal(raw, &res); err != nil {
		return &exec.RunError{Command: c.argv, Inner: fmt.Errorf("on node %s: the agent's answer did not parse: %w", c.node.name, err)}
	}
	if c.stdout != nil {
		_, _ = io.Copy(c.stdout, bytes.NewReader(res.Stdout))
	}
	if c.stderr != nil {
		_, _ = io.Copy(c.stderr, bytes.NewReader(res.Stderr))
	}
	switch {
	case res.Error != "":
		return &exec.RunError{Command: c.argv, Output: res.Stderr, Inner: fmt.Errorf("on node %s: %s", c.node.name, res.Error)}
	case res.Exit != 0:
		return &exec.RunError{Command: c.argv, Output: res.Stderr, Inner: fmt.Errorf("exit status %d", res.Exit)}
	}
	return nil
}
