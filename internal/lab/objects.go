package lab

import (
	"context"
	"fmt"
	"strings"

	"github.com/termlab/termlab/internal/evidence"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CreateObject creates a Deployment, Service or StatefulSet in the run's
// namespace, for labs that need more than pods. Like CreatePod it sets the
// namespace and the run's labels (on a workload's pod template too, so the
// recorder, which watches the run's pods by label, records its pods), and
// the cluster's workload image in every container; it saves the object
// exactly as sent under inputs/objects/ and records the create as an action.
// Cleanup deletes the namespace, and so the object.
func (r *Run) CreateObject(ctx context.Context, obj metav1.Object) error {
	var (
		kind, resource string
		template       *corev1.PodTemplateSpec
		create         func() error
	)
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.APIVersion, o.Kind = "apps/v1", "Deployment"
		kind = o.Kind
		resource, template = "/apis/apps/v1/namespaces/"+r.Namespace+"/deployments", &o.Spec.Template
		create = func() error {
			_, err := r.Env.Client.AppsV1().Deployments(r.Namespace).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	case *appsv1.StatefulSet:
		o.APIVersion, o.Kind = "apps/v1", "StatefulSet"
		kind = o.Kind
		resource, template = "/apis/apps/v1/namespaces/"+r.Namespace+"/statefulsets", &o.Spec.Template
		create = func() error {
			_, err := r.Env.Client.AppsV1().StatefulSets(r.Namespace).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	case *corev1.Service:
		o.APIVersion, o.Kind = "v1", "Service"
		kind = o.Kind
		resource = "/api/v1/namespaces/" + r.Namespace + "/services"
		create = func() error {
			created, err := r.Env.Client.CoreV1().Services(r.Namespace).Create(ctx, o, metav1.CreateOptions{})
			if err == nil {
				o.Spec.ClusterIP = created.Spec.ClusterIP // what the lab passes on to its writers
			}
			return err
		}
	default:
		return fmt.Errorf("creating %T: the lab runner creates Deployments, Services and StatefulSets", obj)
	}
	obj.SetNamespace(r.Namespace)
	obj.SetLabels(r.withRunLabels(obj.GetLabels()))
	if template != nil {
		template.Labels = r.withRunLabels(template.Labels)
		for i := range template.Spec.Containers {
			if r.Env.WorkloadImage != "" {
				template.Spec.Containers[i].Image = r.Env.WorkloadImage
			}
		}
	}
	sent, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("rendering %s %s: %w", kind, obj.GetName(), err)
	}
	path, err := r.Rec.WriteFile("inputs/objects/"+strings.ToLower(kind)+"-"+obj.GetName()+".sent.yaml", sent)
	if err != nil {
		return err
	}
	err = r.act(evidence.ActionCreateOf(kind), obj.GetName(), apiRequest{Verb: "POST", Path: resource, Body: obj}, "kubectl create -f "+path, create)
	if err != nil {
		return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
	}
	r.Infof("created %s %s", kind, obj.GetName())
	return nil
}

func (r *Run) withRunLabels(labels map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[RunIDLabel], labels[LabLabel] = r.ID, r.Lab
	return labels
}
