package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// WaitNamespaceReady waits until namespace ns has its "default" ServiceAccount:
// pods cannot be created before the controller-manager makes it. Right after
// the node containers restart, the controller-manager first waits out its old
// leader lease, which takes a few seconds.
func WaitNamespaceReady(ctx context.Context, client kubernetes.Interface, ns string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("waiting %s for the default ServiceAccount in namespace %s (is kube-controller-manager running?): %w", timeout, ns, err)
	}
	return nil
}

// WaitControllersWorking proves the controller-manager is working by creating
// a throw-away namespace and waiting for its default ServiceAccount.
func WaitControllersWorking(ctx context.Context, client kubernetes.Interface, timeout time.Duration) error {
	name := "termlab-probe-" + rand.String(5)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"termlab.dev/probe": "true"}}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating probe namespace: %w", err)
	}
	defer func() {
		_ = client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})
	}()
	return WaitNamespaceReady(ctx, client, name, timeout)
}
