// Package nodeimage builds a kind node image offline: a Debian root filesystem
// from debootstrap, kind's base-image layout (from the kind module's
// images/base), Kubernetes binaries built from the Go module proxy, and the
// control-plane images preloaded into the node's containerd.
package nodeimage
