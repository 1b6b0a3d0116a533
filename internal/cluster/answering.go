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
//
// The project's file first: when the cluster answers it, its CA is the
// cluster's (one left from an earlier cluster of the same name fails the TLS
// check), and kind's costs about ten docker calls.
func AnsweringConfig(ctx context.Context, name, kubeconfig string) *rest.Config {
	if answers(ctx, kubeconfig) {
		if cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig); err == nil {
			return cfg
		}
	}
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	raw, err := p.KubeConfig(name, false)
	if err != nil {
		return nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	if err != nil || !serverAnswers(ctx, cfg) {
		return nil
	}
	return cfg
}

// answers reports whether the cluster a kubeconfig file names answers it,
// its server's certificate checked against the file's CA.
func answers(ctx context.Context, kubeconfig string) bool {
	if _, err := os.Stat(kubeconfig); err != nil {
		return false
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return false
	}
	return serverAnswers(ctx, cfg)
}

// serverAnswers asks the API server its version, within answerTimeout.
func serverAnswers(ctx context.Context, cfg *rest.Config) bool {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = answerTimeout
	c, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return false
	}
	_, err = c.Discovery().ServerVersion()
	return err == nil && ctx.Err() == nil
}
