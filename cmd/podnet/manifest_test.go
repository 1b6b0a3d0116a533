package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/termlab/termlab/internal/testbin"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const manifestPath = "../../manifests/cni/podnet.yaml"

// renderManifest does to the manifest what kind's installcni action does
// before `kubectl create`: template {{ .PodSubnet }}, then append
// CONTROL_PLANE_ENDPOINT to containers[0].env (a JSON patch "add
// .../env/-", which fails unless env exists), and splits the documents.
func renderManifest(t *testing.T) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"would you kindly template this file", "would you kindly patch this file"} {
		if !bytes.Contains(raw, []byte(marker)) {
			t.Errorf("manifest lacks kind's marker %q", marker)
		}
	}
	tmpl, err := template.New("cni").Option("missingkey=error").Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ PodSubnet string }{"10.244.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, d := range strings.Split(out.String(), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(d), &meta); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, d)
		}
		if meta.Kind == "" {
			continue // the comment header
		}
		if _, dup := docs[meta.Kind]; dup {
			t.Fatalf("two documents of kind %s (kind's patch matches by kind)", meta.Kind)
		}
		docs[meta.Kind] = []byte(d)
	}
	return docs
}

func unmarshalStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

func TestManifest(t *testing.T) {
	docs := renderManifest(t)
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} {
		if docs[k] == nil {
			t.Fatalf("no %s in the manifest", k)
		}
	}
	var sa corev1.ServiceAccount
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	var ds appsv1.DaemonSet
	unmarshalStrict(t, docs["ServiceAccount"], &sa)
	unmarshalStrict(t, docs["ClusterRole"], &role)
	unmarshalStrict(t, docs["ClusterRoleBinding"], &binding)
	unmarshalStrict(t, docs["DaemonSet"], &ds)

	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"nodes"}) ||
		!slices.Equal(role.Rules[0].Verbs, []string{"get", "list", "watch"}) {
		t.Errorf("ClusterRole rules = %+v, want get/list/watch nodes", role.Rules)
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 ||
		binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("ClusterRoleBinding %+v does not bind %s to %s/%s", binding, role.Name, sa.Namespace, sa.Name)
	}

	if ds.Name != "podnet" || ds.Namespace != "kube-system" {
		t.Errorf("DaemonSet is %s/%s", ds.Namespace, ds.Name)
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostNetwork || spec.ServiceAccountName != sa.Name || sa.Namespace != ds.Namespace ||
		spec.PriorityClassName != "system-node-critical" || spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("pod spec: hostNetwork=%v serviceAccount=%q priorityClass=%q nodeSelector=%v",
			spec.HostNetwork, spec.ServiceAccountName, spec.PriorityClassName, spec.NodeSelector)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool {
		return t.Operator == corev1.TolerationOpExists && t.Key == "" && t.Effect == ""
	}) {
		t.Errorf("tolerations %+v: want one tolerating every taint", spec.Tolerations)
	}
	if ds.Spec.Selector == nil || len(ds.Spec.Selector.MatchLabels) == 0 {
		t.Error("DaemonSet has no selector")
	} else {
		for k, v := range ds.Spec.Selector.MatchLabels {
			if ds.Spec.Template.Labels[k] != v {
				t.Errorf("selector %v does not match template labels %v", ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels)
			}
		}
	}
	checkNoKwok(t, spec)

	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.Image != "PODNET_IMAGE" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %q pull policy %q; want the PODNET_IMAGE placeholder, IfNotPresent", c.Image, c.ImagePullPolicy)
	}
	if c.Env == nil {
		t.Fatal("containers[0].env missing: kind's CONTROL_PLANE_ENDPOINT patch would fail")
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if f := env[envNodeName].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("%s = %+v, want fieldRef spec.nodeName", envNodeName, env[envNodeName])
	}
	if f := env[envHostIP].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "status.hostIP" {
		t.Errorf("%s = %+v, want fieldRef status.hostIP", envHostIP, env[envHostIP])
	}
	if v := env[envPodSubnet].Value; v != "10.244.0.0/16" {
		t.Errorf("%s = %q, want the templated pod subnet", envPodSubnet, v)
	}
	if _, ok := env[envEndpoint]; ok {
		t.Errorf("%s is kind's to add", envEndpoint)
	}

	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, "NET_ADMIN") || !slices.Contains(sc.Capabilities.Add, "NET_RAW") {
		t.Errorf("securityContext %+v: want NET_ADMIN and NET_RAW", sc)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && m.MountPath == "/etc/cni/net.d" && v.HostPath != nil && v.HostPath.Path == "/etc/cni/net.d" {
				mounted = !m.ReadOnly
			}
		}
	}
	if !mounted {
		t.Errorf("want hostPath /etc/cni/net.d mounted read-write at /etc/cni/net.d: mounts %+v volumes %+v", c.VolumeMounts, spec.Volumes)
	}
}

// checkNoKwok checks the required node affinity excludes nodes labelled
// type=kwok: node selector terms are ORed, so every term must exclude them.
func checkNoKwok(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatal("no required node affinity: the DaemonSet would land on kwok's fake nodes")
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		t.Fatal("no node selector terms")
	}
	for i, term := range terms {
		if !slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
			return r.Key == kwokLabel && r.Operator == corev1.NodeSelectorOpNotIn && slices.Contains(r.Values, kwokLabelValue)
		}) {
			t.Errorf("node selector term %d does not exclude %s=%s: %+v", i, kwokLabel, kwokLabelValue, term)
		}
	}
}

func TestBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("links a client-go binary")
	}
	bin := testbin.BuildStatic(t, "podnet")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Without NODE_NAME it must fail fast and say why, not hang.
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), envNodeName+" is not set") {
		t.Errorf("run without env: %v\n%s", err, out)
	}
}
