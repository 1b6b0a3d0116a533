package gobuild

// The versions of every component the offline node image is built from, in one place.
// Each is served by the Go module proxy (checked with `go list -m -versions`).
const (
	// KubernetesVersion is k8s.io/kubernetes; its staging modules (k8s.io/api, ...)
	// are published as v0.<minor>.<patch> (see stagingVersion).
	KubernetesVersion = "v1.37.2"
	// KubernetesBuildDate is stamped as buildDate: the version's time on the module
	// proxy (`go mod download -json` Info), so rebuilt binaries are identical.
	KubernetesBuildDate = "2026-10-27T12:01:04Z"

	// EtcdVersion is go.etcd.io/etcd/server/v3. kubeadm 1.37 asks for the image tag
	// EtcdImageTag (constants.DefaultEtcdVersion in k8s.io/kubernetes/cmd/kubeadm).
	EtcdVersion  = "v3.7.0"
	EtcdImageTag = "3.7.0-0"

	// CoreDNSVersion is github.com/coredns/coredns; kubeadm 1.37's constants.CoreDNSVersion.
	CoreDNSVersion = "v1.14.6"

	// CrictlVersion is sigs.k8s.io/cri-tools.
	CrictlVersion = "v1.37.0"

	// KwokVersion is sigs.k8s.io/kwok.
	KwokVersion = "v0.8.0"
)

// fixedCommit is stamped wherever a build wants a git commit: the module proxy
// serves source zips without one, and a fixed value keeps builds reproducible.
const fixedCommit = "0000000000000000000000000000000000000000"
