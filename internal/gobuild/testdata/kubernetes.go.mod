// A shortened copy of k8s.io/kubernetes v1.37.2's go.mod, with one module replace
// added to show that those are kept.

module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
	github.com/spf13/cobra v1.10.2
	k8s.io/api v0.0.0
	k8s.io/apimachinery v0.0.0
	k8s.io/client-go v0.0.0
	k8s.io/component-base v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/component-base => ./staging/src/k8s.io/component-base
)

replace github.com/example/forked => github.com/example/fork v1.2.3
