package diagnose

import (
	"context"
	"fmt"
	"sort"
	"strings"

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

// volumes decides the volume finding: nothing for a pod without claims.
func (d *decider) volumes() {
	v, p := d.c.Volumes, d.c.Pod
	if len(v.PVs) == 0 && v.Err == "" {
		return
	}
	ev := []string{VolumesFile}
	if v.Err != "" {
		d.add(Finding{ID: FindVolumes, Level: NotChecked, Verdict: "not checked", Evidence: ev, Text: "The pod's volume attachments were not read: " + v.Err + "."})
		return
	}
	var here, elsewhere []string
	for _, va := range v.Attachments {
		if !va.Status.Attached {
			continue
		}
		desc := fmt.Sprintf("%s (VolumeAttachment %s, attacher %s)", *va.Spec.Source.PersistentVolumeName, va.Name, va.Spec.Attacher)
		if va.Spec.NodeName == p.Spec.NodeName {
			here = append(here, desc)
		} else {
			elsewhere = append(elsewhere, desc+" on "+va.Spec.NodeName)
		}
	}
	sort.Strings(here)
	sort.Strings(elsewhere)
	switch {
	case len(here) > 0 && p.DeletionTimestamp != nil:
		d.add(Finding{ID: FindVolumes, Level: Warning, Verdict: "attached", Evidence: ev,
			Text: fmt.Sprintf("Still attached to %s: %s. The attach/detach controller detaches a volume only once the pod is gone (or the node carries the out-of-service taint); a replacement that needs it elsewhere waits until then.", p.Spec.NodeName, strings.Join(here, ", "))})
	case len(here) > 0:
		d.add(Finding{ID: FindVolumes, Level: Info, Verdict: "attached", Evidence: ev,
			Text: fmt.Sprintf("Attached to %s: %s.", p.Spec.NodeName, strings.Join(here, ", "))})
	default:
		d.add(Finding{ID: FindVolumes, Level: Info, Verdict: "detached", Evidence: ev,
			Text: fmt.Sprintf("No volume of the pod's claims is attached to %s.", p.Spec.NodeName)})
	}
	if len(elsewhere) > 0 {
		d.add(Finding{ID: FindVolumes + ".elsewhere", Level: Info, Verdict: "attached elsewhere", Evidence: ev,
			Text: "Attached to another node: " + strings.Join(elsewhere, ", ") + "."})
	}
}
