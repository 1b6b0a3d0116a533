package kwok

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

var (
	crdGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	stageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}
)

// managedBy marks what termlab created, so a later Install can prune it.
const managedByLabel, managedByValue = "app.kubernetes.io/managed-by", "termlab"

// pollInterval is how often a wait looks at the cluster.
const pollInterval = 100 * time.Millisecond

// Install makes the cluster run kwok: it server-side applies the rendered
// controller install and the stages of manifests/kwok, waits for the CRDs to
// be established and the one controller to be available, ensures the fake
// nodes kwok-node-0..N-1 and waits until they are Ready. It is idempotent: run
// again with nothing changed, it changes nothing and returns in about a second.
func Install(ctx context.Context, cfg *rest.Config, opts Options) error {
	if err := opts.complete(); err != nil {
		return err
	}
	log := opts.Log
	objs, err := Render(opts)
	if err != nil {
		return err
	}
	stages, err := RenderStages(opts)
	if err != nil {
		return err
	}
	c, err := newClients(cfg)
	if err != nil {
		return err
	}

	var crds, others []*unstructured.Unstructured
	var deploy *unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o)
		case "Deployment":
			deploy = o
		default:
			others = append(others, o)
		}
	}

	done := log.Step(fmt.Sprintf("kwok %s: applying %d CRDs", ModuleVersion, len(crds)))
	err = c.applyAll(ctx, crds)
	if err == nil {
		err = c.waitCRDs(ctx, crds, opts.Timeout)
	}
	done(err)
	if err != nil {
		return err
	}
	c.mapper.Reset() // the Stage kind exists now

	done = log.Step(fmt.Sprintf("kwok: applying RBAC, config and %d stages", len(stages)))
	err = c.applyAll(ctx, others)
	if err == nil {
		err = c.applyAll(ctx, stages)
	}
	if err == nil {
		err = c.pruneStages(ctx, stages)
	}
	done(err)
	if err != nil {
		return err
	}

	done = log.Step("kwok: controller " + opts.Image)
	var nodeIP string
	err = c.applyAll(ctx, []*unstructured.Unstructured{deploy})
	if err == nil {
		nodeIP, err = c.waitController(ctx, opts.Timeout)
	}
	done(err)
	if err != nil {
		return err
	}

	done = log.Step(fmt.Sprintf("kwok: %d fake nodes Ready", opts.FakeNodes))
	err = c.ensureFakeNodes(ctx, opts.FakeNodes, nodeIP)
	if err == nil {
		err = c.waitFakeNodes(ctx, opts.FakeNodes, opts.Timeout)
	}
	done(err)
	return err
}

type clients struct {
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newClients(cfg *rest.Config) (*clients, error) {
	// Install sends some forty small requests; client-go's default client-side
	// limit (5/s) alone would make an idempotent re-run take seconds.
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS < 100 {
		cfg.QPS, cfg.Burst = 100, 200
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kwok: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kwok: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kwok: %w", err)
	}
	return &clients{kube: kube, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

func (c *clients) resourceFor(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	// kustomize puts its namespace also on kinds it does not know to be
	// cluster-scoped (FlowSchema); the API server says what they are.
	o.SetNamespace("")
	return c.dyn.Resource(m.Resource), nil
}

// applyAll server-side applies objs in order, as FieldManager, taking over
// fields another manager set (force): termlab owns these objects.
func (c *clients) applyAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		o = o.DeepCopy()
		ri, err := c.resourceFor(o)
		if err != nil {
			return fmt.Errorf("kwok: %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("kwok: applying %s %s: %w", o.GetKind(), objName(o), err)
		}
	}
	return nil
}

func objName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

func (c *clients) waitCRDs(ctx context.Context, crds []*unstructured.Unstructured, timeout time.Duration) error {
	pending := map[string]string{}
	for _, o := range crds {
		pending[o.GetName()] = "not seen yet"
	}
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		for name := range pending {
			u, err := c.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				pending[name] = err.Error()
				continue
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			state := "no Established condition yet"
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" {
					state = fmt.Sprintf("Established=%v %v", m["status"], m["message"])
					if m["status"] == "True" {
						delete(pending, name)
					}
				}
			}
			if _, still := pending[name]; still {
				pending[name] = state
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("kwok: CRDs not established after %s: %s: %w", timeout, describe(pending), err)
	}
	return nil
}

// pruneStages deletes the Stages a previous Install applied that manifests/kwok
// no longer has, so that a renamed or removed stage stops playing pods.
func (c *clients) pruneStages(ctx context.Context, stages []*unstructured.Unstructured) error {
	keep := map[string]bool{}
	for _, s := range stages {
		keep[s.GetName()] = true
	}
	list, err := c.dyn.Resource(stageGVR).List(ctx, metav1.ListOptions{LabelSelector: StageSetLabel + "," + managedByLabel + "=" + managedByValue})
	if err != nil {
		return fmt.Errorf("kwok: listing stages: %w", err)
	}
	for _, s := range list.Items {
		if keep[s.GetName()] {
			continue
		}
		if err := c.dyn.Resource(stageGVR).Delete(ctx, s.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kwok: deleting stale stage %s: %w", s.GetName(), err)
		}
	}
	return nil
}

// waitController waits until the Deployment has rolled out and exactly one
// controller pod runs, Ready, in the whole cluster.
// waitController waits for the one controller pod to be Ready and returns
// its IP: the fake nodes' InternalIP (--node-ip), where the API server
// reaches kwok's kubelet endpoint.
func (c *clients) waitController(ctx context.Context, timeout time.Duration) (string, error) {
	var state, ip string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := c.kube.AppsV1().Deployments(Namespace).Get(ctx, ControllerName, metav1.GetOptions{})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		pods, err := c.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: ControllerLabel})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		var ready, others []string
		for _, p := range pods.Items {
			if podReady(&p) && p.DeletionTimestamp == nil {
				ready = append(ready, p.Namespace+"/"+p.Name)
				ip = p.Status.PodIP
			} else {
				others = append(others, podState(&p))
			}
		}
		s := d.Status
		rolledOut := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == 1 && s.Replicas == 1 && s.AvailableReplicas == 1
		state = fmt.Sprintf("deployment generation %d observed %d, replicas %d updated %d available %d; ready pods %v; other pods %v",
			d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, ready, others)
		return rolledOut && len(ready) == 1 && len(others) == 0, nil
	})
	if err != nil {
		return "", fmt.Errorf("kwok: controller not available after %s (%s): %w", timeout, state, err)
	}
	return ip, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podState says why a pod is not ready, in the words the kubelet used.
func podState(p *corev1.Pod) string {
	parts := []string{fmt.Sprintf("%s/%s phase=%s node=%s", p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName)}
	if p.DeletionTimestamp != nil {
		parts = append(parts, "terminating")
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("container %s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
		case cs.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("container %s terminated: exit %d %s", cs.Name, cs.State.Terminated.ExitCode, cs.State.Terminated.Reason))
		}
	}
	return strings.Join(parts, ", ")
}

// FakeNode returns the fake node object Install creates: kwok's documented
// fake node (annotation, labels, taint, capacity), plus the stage-set label.
func FakeNode(name string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				FakeNodeAnnotation:             FakeNodeAnnotationValue,
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"beta.kubernetes.io/arch":       "amd64",
				"beta.kubernetes.io/os":         "linux",
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/os":              "linux",
				"kubernetes.io/hostname":        name,
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				FakeNodeTypeLabel:               FakeNodeTypeValue,
				StageSetLabel:                   DefaultStageSet,
				managedByLabel:                  managedByValue,
			},
		},
		Spec: corev1.NodeSpec{
			Taints: []corev1.Taint{{Key: FakeNodeAnnotation, Value: FakeNodeAnnotationValue, Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
}

// ensureFakeNodes creates the missing fake nodes, puts back what termlab set
// on existing ones (labels, annotations, taint, capacity) when it differs, and
// deletes termlab's fake nodes beyond n.
func (c *clients) ensureFakeNodes(ctx context.Context, n int, nodeIP string) error {
	nodes := c.kube.CoreV1().Nodes()
	for i := 0; i < n; i++ {
		want := FakeNode(FakeNodeName(i))
		have, err := nodes.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// Create, not apply: a Node keeps the status it is created with.
			if _, err := nodes.Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
				return fmt.Errorf("kwok: creating fake node %s: %w", want.Name, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("kwok: fake node %s: %w", want.Name, err)
		}
		if err := c.repairFakeNode(ctx, want, have, nodeIP); err != nil {
			return err
		}
	}
	list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: FakeNodeTypeLabel + "=" + FakeNodeTypeValue + "," + managedByLabel + "=" + managedByValue})
	if err != nil {
		return fmt.Errorf("kwok: listing fake nodes: %w", err)
	}
	for _, node := range list.Items {
		var i int
		if _, err := fmt.Sscanf(node.Name, FakeNodePrefix+"%d", &i); err != nil || FakeNodeName(i) != node.Name || i < n {
			continue
		}
		if err := nodes.Delete(ctx, node.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kwok: deleting surplus fake node %s: %w", node.Name, err)
		}
	}
	return nil
}

func (c *clients) repairFakeNode(ctx context.Context, want, have *corev1.Node, nodeIP string) error {
	meta := map[string]any{}
	if !subset(want.Labels, have.Labels) {
		meta["labels"] = want.Labels
	}
	if !subset(want.Annotations, have.Annotations) {
		meta["annotations"] = want.Annotations
	}
	patch := map[string]any{}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	if !slices.ContainsFunc(have.Spec.Taints, func(t corev1.Taint) bool {
		return t.MatchTaint(&want.Spec.Taints[0]) && t.Value == want.Spec.Taints[0].Value
	}) {
		taints := append(slices.Clone(have.Spec.Taints), want.Spec.Taints...)
		patch["spec"] = map[string]any{"taints": taints}
	}
	if len(patch) > 0 {
		if err := c.mergePatchNode(ctx, want.Name, patch, ""); err != nil {
			return err
		}
	}
	status := map[string]any{}
	if !have.Status.Capacity.Cpu().Equal(*want.Status.Capacity.Cpu()) || !have.Status.Allocatable.Memory().Equal(*want.Status.Allocatable.Memory()) {
		status["capacity"], status["allocatable"] = want.Status.Capacity, want.Status.Allocatable
	}
	// kwok sets a fake node's addresses once (its node-initialize stage); a
	// controller that moved (a new pod IP, or onto the host network) leaves
	// the API server dialling an address nobody answers on.
	if addrs, changed := withInternalIP(have.Status.Addresses, nodeIP); changed {
		status["addresses"] = addrs
	}
	if len(status) > 0 {
		if err := c.mergePatchNode(ctx, want.Name, map[string]any{"status": status}, "status"); err != nil {
			return err
		}
	}
	return nil
}

// withInternalIP returns addrs with every InternalIP replaced by ip, and
// whether that changed anything (nothing to do without an ip, or on a node
// kwok has not initialized yet).
func withInternalIP(addrs []corev1.NodeAddress, ip string) ([]corev1.NodeAddress, bool) {
	out := slices.Clone(addrs)
	changed := false
	for i, a := range out {
		if a.Type == corev1.NodeInternalIP && ip != "" && a.Address != ip {
			out[i].Address, changed = ip, true
		}
	}
	return out, changed
}

func (c *clients) mergePatchNode(ctx context.Context, name string, patch map[string]any, subresource string) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	if _, err := c.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: FieldManager}, sub...); err != nil {
		return fmt.Errorf("kwok: updating fake node %s %s: %w", name, subresource, err)
	}
	return nil
}

func subset(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

func (c *clients) waitFakeNodes(ctx context.Context, n int, timeout time.Duration) error {
	pending := map[string]string{}
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		clear(pending)
		for i := 0; i < n; i++ {
			name := FakeNodeName(i)
			node, err := c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				pending[name] = err.Error()
				continue
			}
			if r := nodeReady(node); r != "True" {
				pending[name] = "Ready=" + r
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("kwok: fake nodes not Ready after %s (%s); the controller's log: kubectl -n %s logs deploy/%s: %w", timeout, describe(pending), Namespace, ControllerName, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status != corev1.ConditionTrue && c.Reason != "" {
				return string(c.Status) + " (" + c.Reason + ")"
			}
			return string(c.Status)
		}
	}
	return "no condition yet"
}

func describe(m map[string]string) string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+": "+m[k])
	}
	return strings.Join(parts, "; ")
}

// deploymentImage is the image of the controller container.
func deploymentImage(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == ControllerName {
			return c.Image
		}
	}
	return ""
}
