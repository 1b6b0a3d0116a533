package runlock

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"
)

// aliveTimeout bounds the first write of an alive Lease.
const aliveTimeout = 30 * time.Second

// KeepAlive marks namespace as in use by identity, outside the run lock (a
// termlab's node pods live across another's run): a Lease AliveLease in it,
// renewed until stop. Repair leaves the namespace alone while the Lease is
// renewed (AliveHolder); once its holder dies, the next repair deletes it.
// Deleting the namespace deletes the Lease with it.
func KeepAlive(ctx context.Context, cfg *rest.Config, namespace, identity string) (stop func(), err error) {
	client, err := lockClient(cfg)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), logr.Discard()))
	marked := make(chan struct{})
	elector, err := newElector(client, namespace, AliveLease, identity, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) { close(marked) },
		OnStoppedLeading: func() {},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("marking namespace %s as in use: %w", namespace, err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		elector.Run(runCtx)
	}()
	stop = func() { cancel(); <-stopped }
	timer := time.NewTimer(aliveTimeout)
	defer timer.Stop()
	select {
	case <-marked:
		return stop, nil
	case <-timer.C:
		stop()
		return nil, fmt.Errorf("marking namespace %s as in use (Lease %s): not written in %s", namespace, AliveLease, aliveTimeout)
	}
}

// AliveHolder is who keeps namespace in use ("" for nobody: no Lease, or
// one not renewed in time).
func AliveHolder(ctx context.Context, client kubernetes.Interface, namespace string) (string, error) {
	lease, err := client.CoordinationV1().Leases(namespace).Get(ctx, AliveLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking whether namespace %s is still in use (Lease %s): %w", namespace, AliveLease, err)
	}
	return Holder(lease, time.Now()), nil
}
