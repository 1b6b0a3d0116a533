package evidence

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StateOf extracts the deletion-relevant fields of a pod.
func StateOf(pod *corev1.Pod) PodState {
	s := PodState{
		Name:                       pod.Name,
		UID:                        string(pod.UID),
		ResourceVersion:            pod.ResourceVersion,
		NodeName:                   pod.Spec.NodeName,
		DeletionTimestamp:          timePtr(pod.DeletionTimestamp),
		DeletionGracePeriodSeconds: copyInt64(pod.DeletionGracePeriodSeconds),
		Finalizers:                 append([]string(nil), pod.Finalizers...),
		Phase:                      string(pod.Status.Phase),
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			s.Ready = string(c.Status)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		s.Containers = append(s.Containers, containerStateOf(cs))
	}
	for _, cs := range pod.Status.InitContainerStatuses {
		s.InitContainers = append(s.InitContainers, containerStateOf(cs))
	}
	s.Labels = map[string]string{}
	for _, k := range RecordedLabels {
		if v, ok := pod.Labels[k]; ok {
			s.Labels[k] = v
		}
	}
	return s
}

// NodeEventOf extracts a node's Ready condition and taints, as observed at.
func NodeEventOf(typ string, node *corev1.Node, at time.Time) NodeEvent {
	n := NodeEvent{ObservedAt: at, Type: typ, ResourceVersion: node.ResourceVersion, Name: node.Name, Ready: "Unknown"}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			n.Ready, n.Reason, n.Message = string(c.Status), c.Reason, c.Message
			n.LastTransitionTime = timePtr(&c.LastTransitionTime)
		}
	}
	for _, t := range node.Spec.Taints {
		n.Taints = append(n.Taints, t.Key+":"+string(t.Effect))
	}
	return n
}

func containerStateOf(cs corev1.ContainerStatus) ContainerState {
	c := ContainerState{Name: cs.Name, ContainerID: TrimRuntimePrefix(cs.ContainerID)}
	switch {
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		c.State = "terminated"
		c.Reason = t.Reason
		code := t.ExitCode
		c.ExitCode = &code
		c.StartedAt = timePtr(&t.StartedAt)
		c.FinishedAt = timePtr(&t.FinishedAt)
		if t.ContainerID != "" {
			c.ContainerID = TrimRuntimePrefix(t.ContainerID)
		}
	case cs.State.Running != nil:
		c.State = "running"
		c.StartedAt = timePtr(&cs.State.Running.StartedAt)
	case cs.State.Waiting != nil:
		c.State = "waiting"
		c.Reason = cs.State.Waiting.Reason
	}
	return c
}

// TrimRuntimePrefix turns "containerd://abc" into "abc", the ID crictl uses.
func TrimRuntimePrefix(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}

func timePtr(t *metav1.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := t.Time.UTC()
	return &v
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
