package nodeimage

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// KubeadmImages asks a built kubeadm which images `kubeadm init` of its own
// release pulls when its imageRepository is repo: one reference a line, as
// `kubeadm config images list` prints them. It needs no network when the
// version is given.
func KubeadmImages(ctx context.Context, kubeadm, kube, repo string) ([]string, error) {
	cmd := exec.CommandContext(ctx, kubeadm, "config", "images", "list",
		"--kubernetes-version", kube, "--image-repository", repo)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, stderr)
	}
	var refs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			refs = append(refs, l)
		}
	}
	return refs, nil
}

// VersionsFromKubeadm reads the tags a release's kubeadm asks for from its
// image list (KubeadmImages under Registry). Every image must be under
// Registry, the control-plane images at the release itself, and etcd, CoreDNS
// and pause named: a node image preloads exactly those, or kubeadm init tries
// to pull and fails offline.
func VersionsFromKubeadm(kube string, refs []string) (Versions, error) {
	tags := map[string]string{}
	for _, ref := range refs {
		rest, ok := strings.CutPrefix(ref, Registry+"/")
		name, tag, hasTag := strings.Cut(rest, ":")
		if !ok || !hasTag || name == "" || tag == "" || strings.Contains(name, "/") {
			return Versions{}, fmt.Errorf("kubeadm %s asks for image %q, not %s/<name>:<tag>", kube, ref, Registry)
		}
		tags[name] = tag
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		if tags[c] != kube {
			return Versions{}, fmt.Errorf("kubeadm %s asks for %s:%q, want the release's own tag", kube, c, tags[c])
		}
		delete(tags, c)
	}
	v := Versions{Kube: kube, EtcdTag: tags["etcd"], CoreDNSTag: tags["coredns"], PauseTag: tags["pause"]}
	delete(tags, "etcd")
	delete(tags, "coredns")
	delete(tags, "pause")
	if v.EtcdTag == "" || v.CoreDNSTag == "" || v.PauseTag == "" {
		return Versions{}, fmt.Errorf("kubeadm %s's image list lacks etcd, coredns or pause: %v", kube, refs)
	}
	if len(tags) > 0 {
		return Versions{}, fmt.Errorf("kubeadm %s asks for images termlab does not build: %v", kube, tags)
	}
	return v, nil
}

// EtcdModuleVersion is the go.etcd.io/etcd/server/v3 version of an etcd image
// tag: "3.6.8-0" -> "v3.6.8" (the "-0" is the image's own revision).
func EtcdModuleVersion(tag string) (string, error) {
	v, _, _ := strings.Cut(tag, "-")
	if strings.Count(v, ".") != 2 {
		return "", fmt.Errorf("etcd image tag %q is not <major>.<minor>.<patch>[-<revision>]", tag)
	}
	return "v" + v, nil
}
