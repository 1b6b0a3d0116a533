// Package redact takes out of what termlab saves everything that may hold a
// secret's value: from Kubernetes objects the containers' literal env values
// and kubectl's last-applied configuration (a copy of the object as applied,
// env values included; a Secret's data, for a Secret), and from the
// container runtime's answers (crictl inspect, crictl ps) everything but the
// fields a claim, a finding or a reader of the folder uses. A run folder, a
// diagnosis and a reference run are read by people the cluster's secrets are
// not for.
//
// Every place that writes an object or a crictl answer to disk passes it
// through here first; internal/credscan is the net behind it, not the rule.
package redact

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// LastApplied is the annotation `kubectl apply` keeps the applied object in.
const LastApplied = corev1.LastAppliedConfigAnnotation

// Marker is the annotation a redacted object carries, saying what was taken
// out: in a redacted object an env entry with a name and nothing else may
// have had a value, and a reader must be able to tell it from an object
// whose entry was empty.
const Marker = "termlab.dev/redacted"

// What the marker says.
const (
	saidEnv         = "env values"
	saidLastApplied = "the last-applied-configuration annotation"
	saidBoth        = saidEnv + ", " + saidLastApplied
)

// Pod returns p with every literal env value of its containers, init
// containers and ephemeral containers dropped (the name and a valueFrom
// reference, which names a Secret or ConfigMap and a key, stay) and without
// the last-applied annotation. A pod with neither is returned as it is, with
// no copy: lab:scale records millions of pod events, and its pods have
// neither. Otherwise the result is a new object that shares p's other
// fields: marshal it, never change it.
func Pod(p *corev1.Pod) *corev1.Pod {
	if p == nil {
		return nil
	}
	env := specHasValues(&p.Spec)
	_, applied := p.Annotations[LastApplied]
	if !env && !applied {
		return p
	}
	c := *p
	c.Annotations = marked(p.Annotations, env)
	if env {
		c.Spec = spec(p.Spec)
	}
	return &c
}

// podTemplate is Pod for a pod template (a workload's spec.template): the
// template redacted, and whether anything was taken out.
func podTemplate(t corev1.PodTemplateSpec) (corev1.PodTemplateSpec, bool) {
	env := specHasValues(&t.Spec)
	_, applied := t.Annotations[LastApplied]
	if !env && !applied {
		return t, false
	}
	t.Annotations = marked(t.Annotations, env)
	if env {
		t.Spec = spec(t.Spec)
	}
	return t, true
}

// Object returns o redacted: a pod (Pod), a list of pods, an object with a
// pod template (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job,
// CronJob, ReplicationController, PodTemplate) with its template's env
// values dropped, and any object without the last-applied annotation. Like
// Pod it returns o itself when there is nothing to take out (a nil o too),
// else a copy.
func Object[T runtime.Object](o T) T {
	if v := reflect.ValueOf(o); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return o
	}
	return object(o).(T)
}

func object(o runtime.Object) runtime.Object {
	switch x := o.(type) {
	case *corev1.Pod:
		return Pod(x)
	case *corev1.PodList:
		return podList(x)
	case *corev1.PodTemplate:
		t, changed := podTemplate(x.Template)
		if !changed && !hasLastApplied(x) {
			return o
		}
		c := x.DeepCopy()
		c.Template = *t.DeepCopy()
		dropLastApplied(c, changed)
		return c
	case *appsv1.Deployment:
		return withTemplate(x, x.Spec.Template, func(c *appsv1.Deployment) *corev1.PodTemplateSpec { return &c.Spec.Template })
	case *appsv1.StatefulSet:
		return withTemplate(x, x.Spec.Template, func(c *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &c.Spec.Template })
	case *appsv1.DaemonSet:
		return withTemplate(x, x.Spec.Template, func(c *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &c.Spec.Template })
	case *appsv1.ReplicaSet:
		return withTemplate(x, x.Spec.Template, func(c *appsv1.ReplicaSet) *corev1.PodTemplateSpec { return &c.Spec.Template })
	case *batchv1.Job:
		return withTemplate(x, x.Spec.Template, func(c *batchv1.Job) *corev1.PodTemplateSpec { return &c.Spec.Template })
	case *batchv1.CronJob:
		return withTemplate(x, x.Spec.JobTemplate.Spec.Template, func(c *batchv1.CronJob) *corev1.PodTemplateSpec { return &c.Spec.JobTemplate.Spec.Template })
	case *corev1.ReplicationController:
		if x.Spec.Template == nil {
			return withoutLastApplied(o)
		}
		return withTemplate(x, *x.Spec.Template, func(c *corev1.ReplicationController) *corev1.PodTemplateSpec { return c.Spec.Template })
	}
	return withoutLastApplied(o)
}

// withTemplate is Object for a workload whose pod template is t; template
// finds the template in the workload's copy.
func withTemplate[T runtime.Object](o T, t corev1.PodTemplateSpec, template func(T) *corev1.PodTemplateSpec) runtime.Object {
	redacted, changed := podTemplate(t)
	if !changed && !hasLastApplied(o) {
		return o
	}
	c := o.DeepCopyObject().(T)
	if changed {
		*template(c) = *redacted.DeepCopy()
	}
	dropLastApplied(c, changed)
	return c
}

func podList(l *corev1.PodList) *corev1.PodList {
	var c *corev1.PodList
	for i := range l.Items {
		p := Pod(&l.Items[i])
		if p == &l.Items[i] {
			continue
		}
		if c == nil {
			c = &corev1.PodList{TypeMeta: l.TypeMeta, ListMeta: l.ListMeta, Items: append([]corev1.Pod(nil), l.Items...)}
		}
		c.Items[i] = *p
	}
	if c == nil {
		return l
	}
	return c
}

// withoutLastApplied is any object without the last-applied annotation: o
// itself when it has none, else a deep copy without it.
func withoutLastApplied(o runtime.Object) runtime.Object {
	if !hasLastApplied(o) {
		return o
	}
	c := o.DeepCopyObject()
	dropLastApplied(c, false)
	return c
}

func hasLastApplied(o runtime.Object) bool {
	m, err := meta.Accessor(o)
	if err != nil {
		return false
	}
	_, ok := m.GetAnnotations()[LastApplied]
	return ok
}

// dropLastApplied takes the annotation out of o's own metadata (o is a
// deep copy, its map its own), marking o when anything was taken out of it or its template.
func dropLastApplied(o runtime.Object, templateChanged bool) {
	m, err := meta.Accessor(o)
	if err != nil {
		return
	}
	a := m.GetAnnotations()
	_, applied := a[LastApplied]
	switch {
	case applied && templateChanged:
		a[Marker] = saidBoth
	case applied:
		a[Marker] = saidLastApplied
	case templateChanged:
		if a == nil {
			a = map[string]string{}
		}
		a[Marker] = saidEnv
	default:
		return
	}
	delete(a, LastApplied)
	m.SetAnnotations(a)
}

// marked is a copy of annotations without the last-applied one, with the
// marker saying what was taken out.
func marked(annotations map[string]string, env bool) map[string]string {
	_, applied := annotations[LastApplied]
	a := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		if k != LastApplied {
			a[k] = v
		}
	}
	switch {
	case env && applied:
		a[Marker] = saidBoth
	case env:
		a[Marker] = saidEnv
	default:
		a[Marker] = saidLastApplied
	}
	return a
}

// specHasValues reports whether any container of s has a literal env value.
func specHasValues(s *corev1.PodSpec) bool {
	for i := range s.InitContainers {
		if hasValues(s.InitContainers[i].Env) {
			return true
		}
	}
	for i := range s.Containers {
		if hasValues(s.Containers[i].Env) {
			return true
		}
	}
	for i := range s.EphemeralContainers {
		if hasValues(s.EphemeralContainers[i].Env) {
			return true
		}
	}
	return false
}

func hasValues(env []corev1.EnvVar) bool {
	for i := range env {
		if env[i].Value != "" {
			return true
		}
	}
	return false
}

// spec is s with new container slices whose env values are dropped; the
// rest is shared with s.
func spec(s corev1.PodSpec) corev1.PodSpec {
	s.InitContainers = containers(s.InitContainers)
	s.Containers = containers(s.Containers)
	if len(s.EphemeralContainers) > 0 {
		ec := make([]corev1.EphemeralContainer, len(s.EphemeralContainers))
		for i, c := range s.EphemeralContainers {
			c.Env = env(c.Env)
			ec[i] = c
		}
		s.EphemeralContainers = ec
	}
	return s
}

func containers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		c.Env = env(c.Env)
		out[i] = c
	}
	return out
}

// env is a copy of e without values: names and valueFrom references stay.
func env(e []corev1.EnvVar) []corev1.EnvVar {
	if !hasValues(e) {
		return e
	}
	out := make([]corev1.EnvVar, len(e))
	for i, v := range e {
		v.Value = ""
		out[i] = v
	}
	return out
}
