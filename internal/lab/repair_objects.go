package lab

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/termlab/termlab/internal/cluster"
)

// Cluster-scoped objects a lab may make (Uses.Namespaces), labelled with
// its run id, that a killed run leaves behind.
var (
	APIServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	CRDsGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	pvsGVR         = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}

	namespacesGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	clusterRolesGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindingsGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// removeLeftoverObjects removes the cluster-scoped objects of earlier runs:
// APIServices first (an unavailable one fails discovery for the whole
// cluster, and every namespace deletion with it), then each run CRD's
// custom resources' finalizers (nothing else would ever remove them: a CRD
// is deleted only once its resources are) and the CRD, then
// PersistentVolumes. Without a REST config (tests) there is nothing to ask.
func removeLeftoverObjects(ctx context.Context, env *cluster.Env, currentRunID string) ([]string, error) {
	if env.RESTConfig == nil {
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		return nil, err
	}
	var repairs []string
	var errs []error
	leftovers := func(gvr schema.GroupVersionResource) []unstructured.Unstructured {
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing %s of earlier runs: %w", gvr.Resource, err))
			}
			return nil
		}
		var out []unstructured.Unstructured
		for _, o := range l.Items {
			if o.GetLabels()[RunIDLabel] != currentRunID {
				out = append(out, o)
			}
		}
		return out
	}
	del := func(gvr schema.GroupVersionResource, o unstructured.Unstructured) {
		err := dyn.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s of run %s: %w", gvr.Resource, o.GetName(), o.GetLabels()[RunIDLabel], err))
			return
		}
		repairs = append(repairs, fmt.Sprintf("%s %s of run %s was still there (it did not finish): deleted it", gvr.Resource, o.GetName(), o.GetLabels()[RunIDLabel]))
	}
	for _, o := range leftovers(APIServicesGVR) {
		del(APIServicesGVR, o)
	}
	for _, crd := range leftovers(CRDsGVR) {
		released, err := releaseCustomResources(ctx, dyn, crd)
		if err != nil {
			errs = append(errs, err)
		}
		if released > 0 {
			repairs = append(repairs, fmt.Sprintf("%d %s of run %s still had finalizers: removed them", released, crd.GetName(), crd.GetLabels()[RunIDLabel]))
		}
		del(CRDsGVR, crd)
	}
	for _, o := range leftovers(pvsGVR) {
		del(pvsGVR, o)
	}
	// Cluster switches of earlier runs (switch.go): a killed run's fires by
	// itself once this run holds the lock; one that could not run is here.
	// What it guards, the taint or the APIService, is repaired above.
	for _, gvr := range []schema.GroupVersionResource{namespacesGVR, clusterRolesGVR, clusterRoleBindingsGVR} {
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: SwitchOfRunLabel + "," + SwitchOfRunLabel + "!=" + currentRunID})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s of earlier runs' switches: %w", gvr.Resource, err))
			continue
		}
		for _, o := range l.Items {
			if _, ok := o.GetLabels()[SwitchOfRunLabel]; !ok {
				continue
			}
			err := dyn.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s %s of run %s's switch: %w", gvr.Resource, o.GetName(), o.GetLabels()[SwitchOfRunLabel], err))
				continue
			}
			repairs = append(repairs, fmt.Sprintf("%s %s, the switch of run %s, was still there: deleted it", gvr.Resource, o.GetName(), o.GetLabels()[SwitchOfRunLabel]))
		}
	}
	return repairs, errors.Join(errs...)
}
