package diagnose

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's persistent volumes stay attached to its node (a VolumeAttachment
// with status.attached) until the attach/detach controller detaches them,
// which it does only after the pod is gone or its node is out of service.
// A volume attached to a node that is down is why a replacement elsewhere
// waits in ContainerCreating (Multi-Attach error).

// Volumes is what Collect read about the pod's persistent volumes.
type Volumes struct {
	// PVs maps each PersistentVolumeClaim the pod uses to its bound volume ("" when unbound).
	PVs map[string]string
	// Attachments are the VolumeAttachments of those volumes, on any node.
	Attachments []storagev1.VolumeAttachment
	// Err says why they could not be read ("" when they were).
	Err string
}

// VolumesFile holds the pod's claims and their VolumeAttachments.
const VolumesFile = "raw/volume-attachments.json"

// FindVolumes is the id of the volume finding.
const FindVolumes = "volumes"

func collectVolumes(ctx context.Context, src Source, pod *corev1.Pod, raw Raw) Volumes {
	v := Volumes{PVs: map[string]string{}}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		claim := vol.PersistentVolumeClaim.ClaimName
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		pvc, err := src.Client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(cctx, claim, metav1.GetOptions{})
		cancel()
		if err != nil {
			v.Err = fmt.Sprintf("reading claim %s/%s: %v", pod.Namespace, claim, err)
			continue
		}
		v.PVs[claim] = pvc.Spec.VolumeName
	}
	if len(v.PVs) == 0 {
		return v
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	list, err := src.Client.StorageV1().VolumeAttachments().List(cctx, metav1.ListOptions{})
	if err != nil {
		v.Err = "listing VolumeAttachments: " + err.Error()
	} else {
		want := map[string]bool{}
		for _, pv := range v.PVs {
			want[pv] = pv != ""
		}
		for _, va := range list.Items {
			if pv := va.Spec.Source.PersistentVolumeName; pv != nil && want[*pv] {
				v.Attachments = append(v.Attachments, va)
			}
		}
	}
	raw.put(VolumesFile, v)
	return v
}
