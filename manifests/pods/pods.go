// Package pods holds the labs' pod manifests (the YAML files beside this
// one), embedded so a lab runs from any folder. Each run copies the files it
// used into its inputs/ folder, with the pod exactly as sent to the API.
//
// The lab runner fills in, per run: the namespace, the labels
// termlab.dev/run-id and termlab.dev/lab, the cluster's workload image, and
// the node (a nodeSelector on kubernetes.io/hostname for real workers).
package pods

import "embed"

// FS holds every *.yaml manifest of this folder.
//
//go:embed *.yaml
var FS embed.FS
