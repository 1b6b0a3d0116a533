package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// whenAPIAnswers waits for the new cluster's API server and runs
// o.WhileCreating. It asks docker little while kubeadm init runs: every
// docker call (kind's kubeconfig export alone makes six, one a docker exec)
// takes CPU from the very create it waits for, on a 2-core machine seconds
// of it. So: the node containers once they exist, the API server's host
// port once, then /readyz over plain HTTPS in-process, and kind's
// kubeconfig once that answers.
func whenAPIAnswers(ctx context.Context, p *kindcluster.Provider, o Options) error {
	fail := func(err error) error {
		return fmt.Errorf("waiting for the API server of the new cluster %q: %w", o.Name, err)
	}
	var cp nodes.Node
	var workers []nodes.Node
	err := wait.PollUntilContextTimeout(ctx, time.Second, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		cp, workers, err = listNodes(ctx, p, o.Name)
		return err == nil, nil // kind is still making the node containers
	})
	if err != nil {
		return fail(err)
	}
	var endpoint string
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		endpoint, err = apiServerEndpoint(ctx, cp)
		return err == nil, nil // the container is not running yet
	})
	if err != nil {
		return fail(err)
	}
	// Only whether it is ready: no credentials go with this request, so
	// the server's certificate (kubeadm's, not made yet) is not checked.
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		return readyz(ctx, probe, endpoint), nil
	})
	if err != nil {
		return fail(err)
	}
	var env *Env
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		raw, err := p.KubeConfig(o.Name, false)
		if err != nil {
			return false, nil
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
		if err != nil {
			return false, nil
		}
		cfg.QPS, cfg.Burst, cfg.UserAgent = 50, 100, UserAgent
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return false, err
		}
		if _, err := client.Discovery().ServerVersion(); err != nil {
			return false, nil
		}
		// The worker containers run (kind made every node container before
		// starting the control plane); they join the cluster later.
		env = &Env{Name: o.Name, RESTConfig: cfg, Client: client, ControlPlane: cp, Workers: asNodes(workers)}
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	return o.WhileCreating(ctx, env)
}

// apiServerEndpoint is where the host reaches the control plane's API
// server: kind publishes its port 6443 on the host's loopback.
func apiServerEndpoint(ctx context.Context, cp nodes.Node) (string, error) {
	lines, err := kindexec.OutputLines(kindexec.CommandContext(ctx, "docker", "port", cp.String(), "6443/tcp"))
	if err != nil {
		return "", err
	}
	return publishedEndpoint(lines)
}

// publishedEndpoint picks the IPv4 address of `docker port` lines
// ("127.0.0.1:41235", maybe "[::1]:41235"), with the wildcard made loopback.
func publishedEndpoint(lines []string) (string, error) {
	for _, l := range lines {
		host, port, err := net.SplitHostPort(strings.TrimSpace(l))
		if err != nil || strings.Contains(host, ":") {
			continue
		}
		if host == "0.0.0.0" || host == "" {
			host = "127.0.0.1"
		}
		return net.JoinHostPort(host, port), nil
	}
	return "", fmt.Errorf("no IPv4 address published for port 6443 in %q", lines)
}

// readyz reports whether the API server at endpoint says it is ready; a
// server that refuses anonymous requests counts once it answers at all
// (kind's kubeconfig then decides).
func readyz(ctx context.Context, c *http.Client, endpoint string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+endpoint+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}
