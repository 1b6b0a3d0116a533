package diagnose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/pager"

	"github.com/termlab/termlab/internal/redact"
	"github.com/termlab/termlab/internal/version"
)

// NamespaceCollected is everything DecideNamespace reads about one namespace.
type NamespaceCollected struct {
	// At is when the namespace was read; ages count from it.
	At time.Time
	// Name is the namespace asked about; Namespace is nil when it does not exist.
	Name      string
	Namespace *corev1.Namespace
	// Discovery is what the API server listed of its namespaced types.
	Discovery DiscoveryCheck
	// Types are the listable namespaced resource types, each with what is
	// left of it in the namespace (only those with objects or a failed LIST).
	Types []TypeRemains
	// APIServices are the aggregated API registrations; APIServicesErr says
	// why they could not be read.
	APIServices    []APIServiceState
	APIServicesErr string
	// Controllers are what was found of the controller that could remove each
	// finalizer on a remaining object, by finalizer name.
	Controllers map[string]ControllerCheck
	// DryRuns are the dry-run finalizer patches of remaining non-pod objects,
	// by ObjectRef.String().
	DryRuns map[string]DryRun
	// Pods are the remaining pods, each diagnosed as a pod is (Collect,
	// Decide); PodsSkipped counts those left out beyond maxPods.
	Pods        []PodDiagnosis
	PodsSkipped int
	// ClaimUsers are, for each remaining PVC held by the PVC protection
	// finalizer, the pods that still use it ("<pod> (<phase>)"); ClaimUsersErr
	// says why the pods could not be read.
	ClaimUsers    map[string][]string
	ClaimUsersErr string
}

// PVCProtection is the finalizer the PVC protection controller keeps on a
// claim while a pod uses it.
const PVCProtection = "kubernetes.io/pvc-protection"

// DiscoveryCheck is the result of ServerPreferredNamespacedResources: the
// types it returned, and the groups it could not read.
type DiscoveryCheck struct {
	// Types is how many listable namespaced types discovery returned.
	Types int `json:"types"`
	// Failed is each group/version whose discovery failed, with the error.
	Failed map[string]string `json:"failed,omitempty"`
	// Err is a failure that is not per group (nothing was listed).
	Err string `json:"error,omitempty"`
}

// TypeRemains is one resource type and its objects left in the namespace.
type TypeRemains struct {
	// Resource is resource.group as kubectl takes it ("pods" for the core group).
	Resource string
	GVR      schema.GroupVersionResource
	Kind     string
	Objects  []RemainingObject
	// ListErr is why the type could not be listed ("" when it was).
	ListErr string
}

// RemainingObject is the metadata of one object left in the namespace.
type RemainingObject struct {
	Name              string                  `json:"name"`
	UID               types.UID               `json:"uid"`
	DeletionTimestamp *metav1.Time            `json:"deletionTimestamp,omitempty"`
	Finalizers        []string                `json:"finalizers,omitempty"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences,omitempty"`
	// Managers is the managedFields manager that added each finalizer.
	Managers map[string]string `json:"managers,omitempty"`
}

// ObjectRef names an object as kubectl takes it: <resource.group>/<name>.
func ObjectRef(resource, name string) string { return resource + "/" + name }

// APIServiceState is one APIService's Available condition.
type APIServiceState struct {
	Name string `json:"name"`
	// Group and Version it serves.
	Group   string `json:"group"`
	Version string `json:"version"`
	// Service is <namespace>/<name> of its backend; "" for a local (built-in) one.
	Service string `json:"service,omitempty"`
	// Available is the condition's status (True, False, Unknown; "" when absent).
	Available string `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// PodDiagnosis is one remaining pod's own diagnosis.
type PodDiagnosis struct {
	Name   string
	Report Report
	// Raw is written to the pod's subfolder, never into the namespace's collected.json.
	Raw Raw `json:"-"`
	// Err is why the pod could not be diagnosed ("" when it was).
	Err string
}

// Limits that keep a namespace diagnosis to a few seconds.
const (
	// maxPods is how many remaining pods are diagnosed one by one.
	maxPods = 10
	// maxDryRuns is how many remaining objects get a dry-run finalizer patch.
	maxDryRuns = 20
	// listParallel is how many LISTs run at once.
	listParallel = 6
)

// Evidence files of a namespace diagnosis.
const (
	NamespaceFile   = "raw/namespace.json"
	DiscoveryFile   = "raw/discovery.json"
	APIServicesFile = "raw/apiservices.json"
	NSDryRunFile    = "raw/dry-runs.json"
)

// TypeFile is the saved metadata of a type's remaining objects.
func TypeFile(resource string) string { return "raw/remaining/" + resource + ".json" }

// PodDir is the folder of a remaining pod's own diagnosis, inside the namespace's.
func PodDir(name string) string { return "pods/" + name }

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// CollectNamespace reads the evidence about a namespace. Like Collect it
// changes nothing: GETs, discovery, LISTs, finalizer patches with
// dryRun=All, and each remaining pod's Collect. The error is non-nil only
// when the namespace itself cannot be read; without src.Dynamic the
// remaining objects and APIServices are findings that say "not checked".
func CollectNamespace(ctx context.Context, src Source, name string) (NamespaceCollected, Raw, error) {
	raw := Raw{}
	c := NamespaceCollected{Name: name, Controllers: map[string]ControllerCheck{}, DryRuns: map[string]DryRun{}}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	ns, err := src.Client.CoreV1().Namespaces().Get(cctx, name, metav1.GetOptions{})
	cancel()
	c.At = time.Now().UTC()
	if apierrors.IsNotFound(err) {
		return c, raw, nil
	}
	if err != nil {
		return c, raw, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	c.Namespace = redact.Object(ns)
	raw.put(NamespaceFile, c.Namespace)

	cctx, cancel = context.WithTimeout(ctx, callTimeout)
	c.Discovery = discoverTypes(cctx, src.Client.Discovery(), &c)
	cancel()
	raw.put(DiscoveryFile, c.Discovery)
	if src.Dynamic == nil {
		c.APIServicesErr = "no dynamic client was given"
	} else {
		c.APIServices, c.APIServicesErr = listAPIServices(ctx, src, raw)
	}
	if src.Metadata == nil {
		for i := range c.Types {
			c.Types[i].ListErr = "no metadata client was given"
		}
	} else {
		listRemaining(ctx, src, name, c.Types)
	}
	// Keep only the types with something to say.
	kept := c.Types[:0]
	for _, t := range c.Types {
		if len(t.Objects) > 0 || t.ListErr != "" {
			kept = append(kept, t)
		}
	}
	c.Types = kept
	for _, t := range c.Types {
		if len(t.Objects) > 0 {
			raw.put(TypeFile(t.Resource), t.Objects)
		}
	}

	// Who could remove each finalizer, asked once per finalizer.
	for _, f := range ns.Finalizers {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		c.Controllers[f] = controllerFor(cctx, src.Client, ManagerOf(ns.ManagedFields, f), f, c.At)
		cancel()
	}
	for _, t := range c.Types {
		for _, o := range t.Objects {
			for _, f := range o.Finalizers {
				if _, done := c.Controllers[f]; done {
					continue
				}
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				c.Controllers[f] = controllerFor(cctx, src.Client, o.Managers[f], f, c.At)
				cancel()
			}
		}
	}

	c.ClaimUsers, c.ClaimUsersErr = claimUsers(ctx, src, name, c.Types)

	// Would removing the finalizers be accepted? Pods get theirs in their own diagnosis.
	n := 0
	for _, t := range c.Types {
		if t.GVR == podsGVR || src.Metadata == nil {
			continue
		}
		for _, o := range t.Objects {
			if len(o.Finalizers) == 0 || n >= maxDryRuns {
				continue
			}
			n++
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			// Through the metadata client: the answer is the object's
			// metadata, never its body (a Secret's data stays on the server).
			_, err := src.Metadata.Resource(t.GVR).Namespace(name).Patch(cctx, o.Name, types.MergePatchType, []byte(FinalizersPatch),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			cancel()
			c.DryRuns[ObjectRef(t.Resource, o.Name)] = DryRunResult(FinalizersPatch, err)
		}
	}
	if len(c.DryRuns) > 0 {
		raw.put(NSDryRunFile, c.DryRuns)
	}

	// Each remaining pod, diagnosed as a pod.
	for _, t := range c.Types {
		if t.GVR != podsGVR {
			continue
		}
		for _, o := range t.Objects {
			if len(c.Pods) >= maxPods {
				c.PodsSkipped++
				continue
			}
			pc, praw, err := Collect(ctx, src, name, o.Name)
			pd := PodDiagnosis{Name: o.Name, Raw: praw}
			if err != nil {
				pd.Err = err.Error()
			} else {
				pd.Report = Decide(pc)
				praw.put(CollectedFile, pc)
			}
			c.Pods = append(c.Pods, pd)
		}
	}
	return c, raw, nil
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// discoverTypes fills c.Types with every listable namespaced type. Discovery
// returns what it could read together with an error naming the groups it
// could not: both are kept, as the namespace controller keeps both.
func discoverTypes(ctx context.Context, d discovery.DiscoveryInterface, c *NamespaceCollected) DiscoveryCheck {
	var dc DiscoveryCheck
	lists, err := discovery.ServerPreferredNamespacedResourcesWithContext(ctx, discovery.ToDiscoveryInterfaceWithContext(d))
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &failed) {
			dc.Failed = map[string]string{}
			for gv, gerr := range failed.Groups {
				dc.Failed[gv.String()] = gerr.Error()
			}
		} else {
			dc.Err = err.Error()
		}
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list"}}, lists)
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			res := r.Name
			if gv.Group != "" {
				res += "." + gv.Group
			}
			c.Types = append(c.Types, TypeRemains{Resource: res, GVR: gv.WithResource(r.Name), Kind: r.Kind})
		}
	}
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Resource < c.Types[j].Resource })
	dc.Types = len(c.Types)
	return dc
}

// listRemaining LISTs each type in the namespace, a few at a time, as the
// namespace controller does: through the metadata client (the server sends
// metadata only: a leftover's spec is not evidence of why it stays, and a
// Secret's data never leaves the server) and a pager (a namespace of
// thousands of objects is read in pages of listPage).
func listRemaining(ctx context.Context, src Source, namespace string, ts []TypeRemains) {
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i := range ts {
		wg.Add(1)
		sem <- struct{}{}
		go func(t *TypeRemains) {
			defer func() { <-sem; wg.Done() }()
			cctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			res := src.Metadata.Resource(t.GVR).Namespace(namespace)
			p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
				return res.List(cctx, opts)
			}))
			p.PageSize = listPage
			err := p.EachListItem(cctx, metav1.ListOptions{}, func(obj runtime.Object) error {
				m, ok := obj.(*metav1.PartialObjectMetadata)
				if !ok {
					return fmt.Errorf("the metadata LIST of %s gave a %T", t.Resource, obj)
				}
				t.Objects = append(t.Objects, remainingObject(m))
				return nil
			})
			if err != nil {
				t.ListErr = err.Error()
			}
		}(&ts[i])
	}
	wg.Wait()
}

// claimUsers finds, for each remaining PVC held by PVCProtection, the pods
// of the namespace that still use it: what the PVC protection controller
// waits for before it removes its finalizer.
func claimUsers(ctx context.Context, src Source, namespace string, ts []TypeRemains) (map[string][]string, string) {
	held := map[string]bool{}
	for _, t := range ts {
		if t.Resource != "persistentvolumeclaims" {
			continue
		}
		for _, o := range t.Objects {
			if has(o.Finalizers, PVCProtection) {
				held[o.Name] = true
			}
		}
	}
	if len(held) == 0 {
		return nil, ""
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	pods, err := src.Client.CoreV1().Pods(namespace).List(cctx, metav1.ListOptions{})
	if err != nil {
		return nil, "listing the pods of namespace " + namespace + ": " + err.Error()
	}
	users := map[string][]string{}
	for claim := range held {
		users[claim] = nil
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		for _, v := range p.Spec.Volumes {
			if claim := claimUsedBy(p, v); held[claim] {
				users[claim] = append(users[claim], fmt.Sprintf("%s (%s)", p.Name, p.Status.Phase))
			}
		}
	}
	return users, ""
}

// claimUsedBy is the claim volume v of pod p keeps from deletion, as the
// PVC protection controller decides it (k8s.io/kubernetes v1.37.2
// pkg/controller/volume/pvcprotection, podUsesPVCForDeletion): only a
// scheduled pod uses a claim; a persistentVolumeClaim volume does whatever
// the pod's phase (a pod stopped by the kubelet but kept by a finalizer
// still holds it); a generic ephemeral volume's claim not once the pod is
// shut down (deleted with grace period 0). "" when it keeps none.
func claimUsedBy(p *corev1.Pod, v corev1.Volume) string {
	if p.Spec.NodeName == "" {
		return ""
	}
	shutDown := p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName
	case v.Ephemeral != nil && !shutDown:
		return p.Name + "-" + v.Name // a generic ephemeral volume's claim
	}
	return ""
}

// listPage is the page size of the LISTs of remaining objects (the
// namespace controller's pager uses 500 too); listTimeout bounds one
// type's pages together.
const (
	listPage    = 500
	listTimeout = 60 * time.Second
)

func remainingObject(m *metav1.PartialObjectMetadata) RemainingObject {
	o := RemainingObject{Name: m.Name, UID: m.UID, DeletionTimestamp: m.DeletionTimestamp,
		Finalizers: m.Finalizers, OwnerReferences: m.OwnerReferences}
	for _, f := range o.Finalizers {
		if mgr := ManagerOf(m.ManagedFields, f); mgr != "" {
			if o.Managers == nil {
				o.Managers = map[string]string{}
			}
			o.Managers[f] = mgr
		}
	}
	return o
}

// listAPIServices reads every APIService through the dynamic client and
// keeps its Available condition.
func listAPIServices(ctx context.Context, src Source, raw Raw) ([]APIServiceState, string) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	list, err := src.Dynamic.Resource(apiServicesGVR).List(cctx, metav1.ListOptions{})
	if err != nil {
		raw[APIServicesFile] = errorJSON("listing APIServices", err)
		return nil, err.Error()
	}
	var out []APIServiceState
	for _, u := range list.Items {
		s := APIServiceState{Name: u.GetName()}
		s.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
		s.Version, _, _ = unstructured.NestedString(u.Object, "spec", "version")
		if svc, ok, _ := unstructured.NestedMap(u.Object, "spec", "service"); ok && svc != nil {
			s.Service = fmt.Sprintf("%v/%v", svc["namespace"], svc["name"])
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, ci := range conds {
			cm, _ := ci.(map[string]any)
			if cm["type"] != "Available" {
				continue
			}
			s.Available, _ = cm["status"].(string)
			s.Reason, _ = cm["reason"].(string)
			s.Message, _ = cm["message"].(string)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// Spec and status only: the caBundle is public, but nothing else is needed.
	raw.put(APIServicesFile, out)
	return out, ""
}

// NamespaceFolderName is <UTC time>-namespace-<name>, the folder under results/diagnose/.
func NamespaceFolderName(at time.Time, namespace string) string {
	return at.UTC().Format("20060102-150405") + "-namespace-" + namespace
}

// NamespaceSummary is a namespace diagnosis's summary.json.
type NamespaceSummary struct {
	NamespaceReport
	// Dropped are evidence files not written because they held something credential-like.
	Dropped []string `json:"dropped,omitempty"`
	// Watched is --watch's last look (RecordWatch).
	Watched *WatchedLook `json:"watched,omitempty"`
	// Termlab is the termlab that made the diagnosis.
	Termlab *version.Info `json:"termlab,omitempty"`
}

// RunNamespace collects the evidence about a namespace, decides the
// findings and writes them to <resultsDir>/diagnose/<UTC time>-namespace-<ns>/:
// summary.json, report.md, raw/… and each remaining pod's own diagnosis
// under pods/<name>/. Result.Summary carries the namespace's answer,
// findings and advice in the pod report's shape (Pod empty); Result.Namespace
// the whole summary.
func RunNamespace(ctx context.Context, src Source, namespace, resultsDir string) (Result, error) {
	begin := time.Now()
	c, raw, err := CollectNamespace(ctx, src, namespace)
	if err != nil {
		return Result{}, err
	}
	raw.put(CollectedFile, c)
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("diagnosing namespace %s was interrupted: nothing written: %w", namespace, err)
	}
	r := DecideNamespace(c)
	dir := freeDir(filepath.Join(resultsDir, "diagnose", NamespaceFolderName(c.At, namespace)))
	s, err := WriteNamespace(dir, r, raw, c.Pods)
	res := Result{Summary: Summary{Report: r.asReport(), Dropped: s.Dropped}, Namespace: &s, Dir: dir}
	if err != nil {
		return res, fmt.Errorf("writing the diagnosis of namespace %s: %w", namespace, err)
	}
	res.Took = time.Since(begin)
	return res, nil
}

// WriteNamespace writes each pod's diagnosis into its subfolder (through
// Write), then the namespace's report.md, summary.json and raw evidence,
// every file through the credential scan.
func WriteNamespace(dir string, r NamespaceReport, raw Raw, pods []PodDiagnosis) (NamespaceSummary, error) {
	s := NamespaceSummary{NamespaceReport: r, Termlab: madeBy()}
	if err := makePrivate(dir); err != nil {
		return s, err
	}
	for _, p := range pods {
		if p.Err != "" {
			continue
		}
		ps, err := Write(filepath.Join(dir, filepath.FromSlash(PodDir(p.Name))), p.Report, p.Raw)
		if err != nil {
			return s, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		for _, d := range ps.Dropped {
			s.Dropped = append(s.Dropped, PodDir(p.Name)+"/"+d)
		}
	}
	files, dropped := scanRaw(raw)
	s.Dropped = append(s.Dropped, dropped...)
	sort.Strings(s.Dropped)
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, fmt.Errorf("encoding %s: %w", SummaryFile, err)
	}
	return s, writeFiles(dir, files, map[string][]byte{SummaryFile: append(sum, '\n'), MarkdownFile: []byte(NamespaceMarkdown(s))})
}

// NamespaceMarkdown is a namespace diagnosis's report.md: the answer, the
// findings with their evidence, what to do.
func NamespaceMarkdown(s NamespaceSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# diagnose namespace %s\n\n", s.Namespace)
	fmt.Fprintf(&b, "Read at %s. Read-only: GETs, discovery, LISTs (metadata kept), server-side dry runs, and each remaining pod's own diagnosis under %s/.\n\n",
		s.At.UTC().Format(time.RFC3339), "pods")
	// The body is the pod report's: same answer, findings and advice layout.
	body := Markdown(Summary{Report: s.asReport()})
	if i := strings.Index(body, "## Answer"); i >= 0 {
		body = body[i:]
	}
	b.WriteString(body)
	if len(s.Dropped) > 0 {
		fmt.Fprintf(&b, "Left out because they held something credential-like: %s.\n", strings.Join(s.Dropped, ", "))
	}
	return b.String()
}
