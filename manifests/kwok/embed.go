// Package kwok holds termlab's own kwok manifests: the overlay that installs
// kwok v0.8.0's controller (controller/), the node stages (nodes/) and the pod
// stage sets (faithful/, kwok-v0.8-fast/, kwok-v0.7-fast/).
//
// The kustomizations refer to kwok's own kustomize directory as ../upstream.
// internal/kwok mounts it there (from the kwok Go module, in memory) when it
// renders; nothing under upstream/ is copied into this repository.
package kwok

import "embed"

// FS is this directory: every kustomization.yaml and stage file.
//
//go:embed kustomization.yaml controller nodes faithful kwok-v0.8-fast kwok-v0.7-fast
var FS embed.FS
