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

// The objects of a cluster switch (switch.go).
var (
	namespacesGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	clusterRolesGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindingsGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// leftoverObjects finds and deletes the cluster-scoped objects earlier runs
// left (labelled with their run id), saying each repair and keeping the
// errors for err.
type leftoverObjects struct {
	dyn          dynamic.Interface
	currentRunID string
	say          func(string, ...any)
	errs         []error
}

// newLeftoverObjects is nil without a REST config (tests): there is nothing to ask.
func newLeftoverObjects(env *cluster.Env, currentRunID string, say func(string, ...any)) (*leftoverObjects, error) {
	if env.RESTConfig == nil {
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		return nil, err
	}
	return &leftoverObjects{dyn: dyn, currentRunID: currentRunID, say: say}, nil
}

// list is the objects of other runs than the current one.
func (o *leftoverObjects) list(ctx context.Context, gvr schema.GroupVersionResource) []unstructured.Unstructured {
	l, err := o.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: RunIDLabel})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			o.errs = append(o.errs, fmt.Errorf("listing %s of earlier runs: %w", gvr.Resource, err))
		}
		return nil
	}
	var out []unstructured.Unstructured
	for _, obj := range l.Items {
		if obj.GetLabels()[RunIDLabel] != o.currentRunID {
			out = append(out, obj)
		}
	}
	return out
}

// remove deletes one and says so.
func (o *leftoverObjects) remove(ctx context.Context, gvr schema.GroupVersionResource, obj unstructured.Unstructured) {
	err := o.dyn.Resource(gvr).Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		o.errs = append(o.errs, fmt.Errorf("deleting %s %s of run %s: %w", gvr.Resource, obj.GetName(), obj.GetLabels()[RunIDLabel], err))
		return
	}
	o.say("%s %s of run %s was still there (it did not finish): deleted it", gvr.Resource, obj.GetName(), obj.GetLabels()[RunIDLabel])
}

func (o *leftoverObjects) err() error { return errors.Join(o.errs...) }

// removeLeftoverSwitches removes the cluster switches of earlier runs
// (switch.go): a killed run's fires by itself once this run holds the lock;
// one that could not run is here. It runs after every kind's repair, as
// cleanup disarms last: what a switch guards, the taint or the APIService,
// is repaired before it goes.
func removeLeftoverSwitches(ctx context.Context, env *cluster.Env, currentRunID string, say func(string, ...any)) error {
	if env.RESTConfig == nil {
		return nil
	}
	dyn, err := dynamic.NewForConfig(env.RESTConfig)
	if err != nil {
		return err
	}
	var errs []error
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
			// Being deleted already: a run disarms its switch without
			// waiting for the namespace to go. A binding owned by its
			// ClusterRole goes with the role (the garbage collector's).
			if o.GetDeletionTimestamp() != nil || gvr == clusterRoleBindingsGVR && len(o.GetOwnerReferences()) > 0 {
				continue
			}
			err := dyn.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s %s of run %s's switch: %w", gvr.Resource, o.GetName(), o.GetLabels()[SwitchOfRunLabel], err))
				continue
			}
			say("%s %s, the switch of run %s, was still there: deleted it", gvr.Resource, o.GetName(), o.GetLabels()[SwitchOfRunLabel])
		}
	}
	return errors.Join(errs...)
}
