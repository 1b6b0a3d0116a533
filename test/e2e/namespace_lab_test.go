//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/report"
)

// checkNamespaceRun (lab:namespace): nothing of the run is left on the
// cluster once it ends: its other namespaces gone (or going, with nothing
// holding them), no APIService, CRD or PersistentVolume with its run id.
func checkNamespaceRun(t *testing.T, s *report.Summary) {
	env := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: lab.RunIDLabel + "=" + s.RunID}
	for _, gvr := range []struct{ what string }{{"apiservices"}, {"customresourcedefinitions"}} {
		res := lab.APIServicesGVR
		if gvr.what == "customresourcedefinitions" {
			res = lab.CRDsGVR
		}
		// The CRD goes once its resources are gone: a moment after cleanup.
		var left int
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			l, err := dyn.Resource(res).List(ctx, sel)
			if err != nil {
				return false, nil
			}
			left = len(l.Items)
			return left == 0, nil
		})
		if err != nil {
			t.Errorf("%d %s of run %s left after it ended", left, gvr.what, s.RunID)
		}
	}
	if l, err := env.Client.CoreV1().PersistentVolumes().List(ctx, sel); err != nil || len(l.Items) > 0 {
		t.Errorf("PersistentVolumes of run %s left after it ended (%v)", s.RunID, err)
	}
	for _, ns := range []string{s.Namespace + "-apiservice", s.Namespace + "-orphan"} {
		if _, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			checkNamespaceGone(t, env.Client.CoreV1().Namespaces().Get, ns)
		}
	}
}
