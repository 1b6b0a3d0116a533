package lab

import (
	"context"
	"fmt"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CreatePodEdited is CreatePod for a lab that runs one manifest several
// times: edit changes the pod after the run's labels, image and placement are
// set and before it is saved and sent (e.g. a name per variant, the kwok
// stage set of a fake node). The pod exactly as sent is saved under
// inputs/pods/<name>.sent.yaml, and the create is recorded as an action.
func (r *Run) CreatePodEdited(ctx context.Context, manifest string, place Placement, edit func(*corev1.Pod) error) (*corev1.Pod, error) {
	pod, _, err := LoadManifest(manifest)
	if err != nil {
		return nil, err
	}
	pod.Namespace = r.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[RunIDLabel], pod.Labels[LabLabel] = r.ID, r.Lab
	for i := range pod.Spec.Containers {
		if r.Env.WorkloadImage != "" {
			pod.Spec.Containers[i].Image = r.Env.WorkloadImage
		}
	}
	if !place.Fake {
		if place.Node == "" {
			return nil, fmt.Errorf("pod %s: no node given", pod.Name)
		}
		if pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = map[string]string{}
		}
		pod.Spec.NodeSelector[corev1.LabelHostname] = place.Node
		if place.Node == r.Env.FaultNode {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, ToleratesCordon)
		}
	}
	if edit != nil {
		if err := edit(pod); err != nil {
			return nil, fmt.Errorf("pod %s of manifest %s: %w", pod.Name, manifest, err)
		}
	}
	if pod.Labels[RunIDLabel] != r.ID || pod.Namespace != r.Namespace {
		return nil, fmt.Errorf("pod %s: the edit removed the run's label or namespace (cleanup would not find it)", pod.Name)
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	sent, err := yaml.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("rendering pod %s: %w", pod.Name, err)
	}
	path, err := r.Rec.WriteFile("inputs/pods/"+pod.Name+".sent.yaml", sent)
	if err != nil {
		return nil, err
	}
	var created *corev1.Pod
	err = r.act(evidence.ActionCreate, pod.Name, apiRequest{Verb: "POST", Path: r.podsPath(""), Body: pod},
		"kubectl create -f "+path, func() error {
			var cerr error
			created, cerr = r.Env.Client.CoreV1().Pods(r.Namespace).Create(ctx, pod, metav1.CreateOptions{})
			return cerr
		})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	if !place.Fake {
		r.startNodeAccess(ctx, place.Node)
	}
	return created, nil
}

// startNodeAccess starts node access on the node now, while the kubelet
// starts the pod, when it would otherwise start at the node's first command
// (a node pod through a kubeconfig): that command may be a wait on the pod's
// evidence, whose bound the node pod's start and its switch's arming would
// spend (seen: a 15 s wait for a log line). A failure is the first command's
// to report; here it is only noted.
func (r *Run) startNodeAccess(ctx context.Context, name string) {
	for _, n := range append([]cluster.Node{r.Env.ControlPlane}, r.Env.Workers...) {
		if s, ok := n.(interface{ Start(context.Context) error }); ok && n.String() == name {
			if err := s.Start(ctx); err != nil && ctx.Err() == nil {
				r.Rec.Notef("node access on %s did not start with pod placed there: %v", name, err)
			}
			return
		}
	}
}
