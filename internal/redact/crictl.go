package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// crictl's answers hold the container's whole configuration: `crictl
// inspect` has its environment twice (info.config.envs, as the kubelet
// asked; info.runtimeSpec.process.env, as runc got it: Secret values from
// secretKeyRef and envFrom included), its mounts and the runtime spec; `crictl
// ps` the kubelet's annotations (a preStop command among them). What is
// saved is a list of fields kept, never a list of fields dropped: a field a
// newer runtime adds stays out until someone keeps it here.

// inspectDoc is what is kept of one container of `crictl inspect`: the
// fields evidence.ParseInspect reads (status id, state, startedAt,
// finishedAt, exitCode, reason; info.pid) and those that say which
// container and image it was. Each value is kept as crictl wrote it.
type inspectDoc struct {
	Status inspectStatus `json:"status"`
	Info   *inspectInfo  `json:"info,omitempty"`
}

type inspectStatus struct {
	ID         json.RawMessage   `json:"id,omitempty"`
	Metadata   json.RawMessage   `json:"metadata,omitempty"` // {name, attempt}
	State      json.RawMessage   `json:"state,omitempty"`
	CreatedAt  json.RawMessage   `json:"createdAt,omitempty"`
	StartedAt  json.RawMessage   `json:"startedAt,omitempty"`
	FinishedAt json.RawMessage   `json:"finishedAt,omitempty"`
	ExitCode   json.RawMessage   `json:"exitCode,omitempty"`
	Reason     json.RawMessage   `json:"reason,omitempty"`
	Image      *imageSpec        `json:"image,omitempty"`
	ImageRef   json.RawMessage   `json:"imageRef,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

type inspectInfo struct {
	SandboxID json.RawMessage `json:"sandboxID,omitempty"`
	PID       json.RawMessage `json:"pid,omitempty"`
}

// imageSpec is the image's name: as the runtime resolved it, and as the pod
// asked for it (CRI's ImageSpec also carries annotations).
type imageSpec struct {
	Image              json.RawMessage `json:"image,omitempty"`
	UserSpecifiedImage json.RawMessage `json:"userSpecifiedImage,omitempty"`
}

// Inspect keeps of `crictl inspect` output (one object, or an array of
// them, as crictl prints for one ID or several) only the fields listed in
// inspectDoc, indented as crictl indents. Output that is not such JSON is
// an error: the caller saves the error, never the output.
func Inspect(raw []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []inspectDoc
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("crictl inspect output not kept: %w", err)
		}
		for i := range list {
			list[i].Status.Labels = kubeletLabels(list[i].Status.Labels)
		}
		return indent(list)
	}
	var doc inspectDoc
	if err := json.Unmarshal(trimmed, &doc); err != nil {
		return nil, fmt.Errorf("crictl inspect output not kept: %w", err)
	}
	doc.Status.Labels = kubeletLabels(doc.Status.Labels)
	return indent(doc)
}

// psDoc is what is kept of `crictl ps -o json`: what internal/diagnose's
// ParsePs and the recorder's ContainerStates read (id, metadata.name,
// state, createdAt, the pod's UID label) and which sandbox and image.
type psDoc struct {
	Containers []psContainer `json:"containers"`
}

type psContainer struct {
	ID           json.RawMessage   `json:"id,omitempty"`
	PodSandboxID json.RawMessage   `json:"podSandboxId,omitempty"`
	Metadata     json.RawMessage   `json:"metadata,omitempty"`
	Image        *imageSpec        `json:"image,omitempty"`
	ImageRef     json.RawMessage   `json:"imageRef,omitempty"`
	State        json.RawMessage   `json:"state,omitempty"`
	CreatedAt    json.RawMessage   `json:"createdAt,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// Ps keeps of `crictl ps -o json` output only the fields listed in psDoc;
// of the annotations only keptAnnotations.
func Ps(raw []byte) ([]byte, error) {
	var doc psDoc
	if err := json.Unmarshal(bytes.TrimSpace(raw), &doc); err != nil {
		return nil, fmt.Errorf("crictl ps output not kept: %w", err)
	}
	for i := range doc.Containers {
		c := &doc.Containers[i]
		c.Labels = kubeletLabels(c.Labels)
		var kept map[string]string
		for _, k := range keptAnnotations {
			if v, ok := c.Annotations[k]; ok {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
			}
		}
		c.Annotations = kept
	}
	if doc.Containers == nil {
		doc.Containers = []psContainer{}
	}
	return indent(doc)
}

// keptAnnotations are the kubelet's container annotations worth keeping: a
// number each, about deletion. The others (the preStop handler's command,
// the ports, a device plugin's) are left out.
var keptAnnotations = []string{
	"io.kubernetes.container.restartCount",
	"io.kubernetes.pod.terminationGracePeriod",
}

// kubeletLabels keeps the labels the kubelet sets on a container: which pod
// (name, namespace, UID) and which container. The pod's own labels are the
// sandbox's, never the container's, but another CRI client may set any.
func kubeletLabels(l map[string]string) map[string]string {
	var out map[string]string
	for k, v := range l {
		if strings.HasPrefix(k, "io.kubernetes.") {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func indent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
