package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/clusterswitch"
)

// APIServicesGVR are the APIServices a lab registers (lab:namespace's,
// labelled with its run id).
var APIServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// UnavailableAPIService is an APIService with no backend (lab:namespace
// makes it, labs/namespace): discovery fails for the whole cluster while it
// exists, so every tenant's namespace deletion waits. A pod in the cluster,
// armed before it (ArmAPIServiceSwitch), deletes it once this run's lock
// goes stale.
type UnavailableAPIService struct{}

func (UnavailableAPIService) Name() string {
	return "registers an APIService with no backend (discovery fails for the whole cluster while it exists, and every namespace deletion in it waits)"
}
func (UnavailableAPIService) Scope() Scope   { return ClusterScope }
func (UnavailableAPIService) NodeSide() bool { return false }

// Guard: through a kubeconfig only with -allowclusterfaults.
func (a UnavailableAPIService) Guard(env *cluster.Env) error { return needsClusterFaults(env, a) }

// Undo deletes each APIService the run armed a switch for that is still
// there. The lab deletes its own with its steps (at once on an interrupt);
// this is for when that failed.
func (UnavailableAPIService) Undo(ctx context.Context, r *Run) error {
	r.mu.Lock()
	names := slices.Clone(r.apiServices)
	r.mu.Unlock()
	var errs []error
	for _, name := range names {
		gone, err := r.apiServiceGone(ctx, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("checking that APIService %s is gone: %w", name, err))
			continue
		}
		if gone {
			continue
		}
		r.Log.Infof("cleanup: deleting APIService %s", name)
		err = r.Env.Client.Discovery().RESTClient().Delete().AbsPath(apiServicePath(name)).Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting APIService %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (UnavailableAPIService) Switch() DeadMansSwitch {
	return DeadMansSwitch{What: "a pod in the cluster deletes the APIService once the run lock's Lease stops naming the run or goes unrenewed", Bound: SwitchBound}
}

// Repair deletes the APIServices of earlier runs, first of the objects in
// the API: an unavailable one fails discovery for the whole cluster, and
// every namespace deletion with it.
func (UnavailableAPIService) Repair(ctx context.Context, p *Repairs) error {
	objs, err := newLeftoverObjects(p.Env, p.CurrentRunID, p.Say)
	if objs == nil {
		return err
	}
	for _, o := range objs.list(ctx, APIServicesGVR) {
		objs.remove(ctx, APIServicesGVR, o)
	}
	return objs.err()
}

// ArmAPIServiceSwitch arms the cluster's dead-man's switch for the
// APIService the lab is about to register (ArmSwitch): the APIService must
// not be made when this fails. Cleanup deletes it if it is still there.
func (r *Run) ArmAPIServiceSwitch(ctx context.Context, name string) error {
	if _, err := declaredBy[UnavailableAPIService](r); err != nil {
		return err
	}
	r.mu.Lock()
	r.apiServices = append(r.apiServices, name)
	r.mu.Unlock()
	return r.ArmSwitch(ctx, clusterswitch.Undo{APIService: name})
}

// apiServiceGone says whether the APIService is gone.
func (r *Run) apiServiceGone(ctx context.Context, name string) (bool, error) {
	_, err := r.Env.Client.Discovery().RESTClient().Get().AbsPath(apiServicePath(name)).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func apiServicePath(name string) string {
	return "/apis/apiregistration.k8s.io/v1/apiservices/" + name
}
