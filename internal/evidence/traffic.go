package evidence

import (
	"time"

	"github.com/termlab/termlab/internal/workloadlog"
)

// Evidence of a Service's traffic (lab:graceful): its EndpointSlices as the
// API serves them, the forwarding rules kube-proxy wrote on a node, and the
// requests of a client pod.
const (
	EndpointSlicesFile = "endpointslices.jsonl" // watch events on the namespace's EndpointSlices
	RequestsFile       = "requests.jsonl"       // every request of the client, from its log
	// WatchEndpointSlices names that watch in WatchGap.Source.
	WatchEndpointSlices = "endpointslices"
)

// EndpointSliceEvent is one watch event on an EndpointSlice of the run's
// namespace, with each endpoint's conditions.
type EndpointSliceEvent struct {
	ObservedAt      time.Time       `json:"observed_at"`
	Type            string          `json:"type"` // LISTED, ADDED, MODIFIED, DELETED
	Name            string          `json:"name"`
	Service         string          `json:"service"` // the kubernetes.io/service-name label
	ResourceVersion string          `json:"resourceVersion"`
	Endpoints       []SliceEndpoint `json:"endpoints"`
}

// SliceEndpoint is one endpoint of a slice. A condition the API left unset
// is nil: the controller always sets all three for pods.
type SliceEndpoint struct {
	Pod         string   `json:"pod,omitempty"` // targetRef name
	Addresses   []string `json:"addresses"`
	Ready       *bool    `json:"ready,omitempty"`
	Serving     *bool    `json:"serving,omitempty"`
	Terminating *bool    `json:"terminating,omitempty"`
}

// Endpoint returns the pod's endpoint in the event, if it is there.
func (e EndpointSliceEvent) Endpoint(pod string) (SliceEndpoint, bool) {
	for _, ep := range e.Endpoints {
		if ep.Pod == pod {
			return ep, true
		}
	}
	return SliceEndpoint{}, false
}

// ProxyRulesRead is one read of kube-proxy's rules on a node
// (`iptables-save -t nat`): for each Service of the run's namespace, the
// endpoints its cluster-IP chain sends new connections to. The read is a
// snapshot taken at some instant between StartedAt and FinishedAt.
type ProxyRulesRead struct {
	Node       string    `json:"node"`
	Step       string    `json:"step,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// Forwards maps "<namespace>/<service>:<port name>" to the endpoints
	// ("ip:port") new connections to it are sent to, in rule order.
	Forwards map[string][]string `json:"forwards"`
	// Path is the raw output, saved when it differed from the node's previous read.
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
}

// ForwardsTo reports whether the read shows the Service port forwarding to the endpoint.
func (p ProxyRulesRead) ForwardsTo(servicePort, endpoint string) bool {
	for _, e := range p.Forwards[servicePort] {
		if e == endpoint {
			return true
		}
	}
	return false
}

// Request is one request of a client pod, as its log has it.
type Request struct {
	Pod string `json:"pod"` // the client pod
	workloadlog.Request
}

// RequestsRead is one read of a client's log into the record.
type RequestsRead struct {
	Pod         string    `json:"pod"`
	Node        string    `json:"node"`
	ContainerID string    `json:"container_id"`
	At          time.Time `json:"at"`
	Path        string    `json:"path"`
	Requests    int       `json:"requests"`
	Error       string    `json:"error,omitempty"`
}

// TaskExit is containerd's own event of a container's init process exiting
// (`ctr -n k8s.io events`, /tasks/exit): its exit status and the runtime's
// exit time, kept even when the kubelet removes the container before a
// crictl look (it removes a deleted pod's exited container about a second
// after the exit).
type TaskExit struct {
	Node        string    `json:"node"`
	ContainerID string    `json:"container_id"`
	ExitStatus  int32     `json:"exit_status"`
	ExitedAt    time.Time `json:"exited_at"`
	ObservedAt  time.Time `json:"observed_at"`
	// Path is the file the event lines of the node are saved in.
	Path string `json:"path"`
}
