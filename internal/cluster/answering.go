package cluster

import (
	"context"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
)

// answerTimeout bounds the look at whether an existing cluster answers.
const answerTimeout = 5 * time.Second

// AnsweringConfig is a REST config for the existing kind cluster name, for
// looking (and locking) before touching anything: from kind's own kubeconfig
// of the cluster (the project's file may be missing or stale), else from the
// file at kubeconfig; nil when there is no such cluster or it does not answer.
func AnsweringConfig(ctx context.Context, name, kubeconfig string) *rest.Config {
	var cfg *rest.Config
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	if raw, err := p.KubeConfig(name, false); err == nil {
		cfg, _ = clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	}
	if cfg == nil {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil
		}
		c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil
		}
		cfg = c
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = answerTimeout
	c, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil
	}
	if _, err := c.Discovery().ServerVersion(); err != nil || ctx.Err() != nil {
		return nil
	}
	return cfg
}
