package kwok

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	manifests "github.com/termlab/termlab/manifests/kwok"

	"github.com/termlab/termlab/internal/gobuild"
)

// Layout of the in-memory filesystem kustomize runs on: manifests/kwok as
// embedded, with kwok's own kustomize directory mounted at upstream/, where the
// project's kustomizations expect it.
const (
	fsRoot     = "/termlab/manifests/kwok"
	fsUpstream = fsRoot + "/upstream"
)

// upstreamDirs are the parts of the module's kustomize/ directory the
// kustomizations use (kustomize/kwok refers to ../crd and ../rbac).
var upstreamDirs = []string{"kwok", "crd", "rbac", "stage"}

// Render renders kwok's own in-cluster install (the module's kustomize/kwok:
// CRDs, RBAC, the kwok ConfigMap, Service, Deployment) through the overlay in
// manifests/kwok/controller, with the controller image set to opts.Image.
// Objects come in apply order: CRDs first, the Deployment last.
func Render(opts Options) ([]*unstructured.Unstructured, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	objs, mod, err := build(opts.ModuleDir, "controller")
	if err != nil {
		return nil, err
	}
	var deploy *unstructured.Unstructured
	var config *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == ControllerName:
			deploy = o
		case o.GetKind() == "ConfigMap" && o.GetName() == "kwok":
			config = o
		}
	}
	if deploy == nil || config == nil {
		return nil, fmt.Errorf("rendering %s/kustomize/kwok: no Deployment %q or ConfigMap \"kwok\" in the output (did kwok change its manifests?)", mod.Dir, ControllerName)
	}
	if err := checkConfig(config); err != nil {
		return nil, fmt.Errorf("rendering %s/kustomize/kwok: %w", mod.Dir, err)
	}
	data, err := withParallelism(config, opts.PodPlayParallelism)
	if err != nil {
		return nil, fmt.Errorf("rendering %s/kustomize/kwok: %w", mod.Dir, err)
	}
	if err := setImage(deploy, opts.Image); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(data))
	if err := unstructured.SetNestedField(deploy.Object, hex.EncodeToString(sum[:8]), "spec", "template", "metadata", "annotations", ConfigAnnotation); err != nil {
		return nil, err
	}
	ann := deploy.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[ModuleAnnotation] = ModulePath + "@" + mod.Version
	deploy.SetAnnotations(ann)
	return applyOrder(objs), nil
}

// RenderStages renders every Stage termlab applies (manifests/kwok): the node
// stages and the pod stage sets, each labelled StageSetLabel=<set>.
func RenderStages(opts Options) ([]*unstructured.Unstructured, error) {
	if err := opts.completeModule(); err != nil {
		return nil, err
	}
	objs, _, err := build(opts.ModuleDir, ".")
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() != "Stage" {
			return nil, fmt.Errorf("manifests/kwok: %s %q is not a Stage", o.GetKind(), o.GetName())
		}
		if o.GetLabels()[StageSetLabel] == "" {
			return nil, fmt.Errorf("manifests/kwok: Stage %q has no %s label", o.GetName(), StageSetLabel)
		}
	}
	return objs, nil
}

// YAML joins objects into one multi-document YAML stream.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", o.GetKind(), o.GetName(), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// build runs kustomize on manifests/kwok/<dir> with the module's kustomize
// directory mounted as upstream/.
func build(moduleDir, dir string) ([]*unstructured.Unstructured, Module, error) {
	mod, err := locateModule(moduleDir)
	if err != nil {
		return nil, mod, err
	}
	mfs := filesys.MakeFsInMemory()
	if err := copyFS(mfs, fsRoot, manifests.FS); err != nil {
		return nil, mod, fmt.Errorf("loading manifests/kwok: %w", err)
	}
	for _, d := range upstreamDirs {
		src := filepath.Join(mod.Dir, "kustomize", d)
		if err := copyFS(mfs, path.Join(fsUpstream, d), os.DirFS(src)); err != nil {
			return nil, mod, fmt.Errorf("loading kwok's kustomize directory %s: %w", src, err)
		}
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	target := path.Join(fsRoot, dir)
	rm, err := k.Run(mfs, target)
	if err != nil {
		return nil, mod, fmt.Errorf("kustomize build manifests/kwok/%s (upstream = %s/kustomize): %w", strings.TrimPrefix(dir, "."), mod.Dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, mod, fmt.Errorf("kustomize output %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, mod, fmt.Errorf("kustomize output %s: %w", r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, mod, nil
}

// copyFS copies every regular file of src into dst under root.
func copyFS(dst filesys.FileSystem, root string, src fs.FS) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return dst.WriteFile(path.Join(root, p), b)
	})
}

// checkConfig makes sure kwok's own configuration still manages only the
// annotated fake nodes: a kwok release that changed it would otherwise take
// over the real nodes.
func checkConfig(cm *unstructured.Unstructured) error {
	data, _, _ := unstructured.NestedString(cm.Object, "data", "kwok.yaml")
	var conf struct {
		Options struct {
			ManageAllNodes                    bool   `json:"manageAllNodes"`
			ManageNodesWithAnnotationSelector string `json:"manageNodesWithAnnotationSelector"`
			ManageNodesWithLabelSelector      string `json:"manageNodesWithLabelSelector"`
		} `json:"options"`
	}
	if err := yaml.Unmarshal([]byte(data), &conf); err != nil {
		return fmt.Errorf("ConfigMap kwok, kwok.yaml: %w", err)
	}
	want := FakeNodeAnnotation + "=" + FakeNodeAnnotationValue
	o := conf.Options
	if o.ManageAllNodes || o.ManageNodesWithLabelSelector != "" || o.ManageNodesWithAnnotationSelector != want {
		return fmt.Errorf("ConfigMap kwok, kwok.yaml: want only manageNodesWithAnnotationSelector %q, got manageAllNodes=%v manageNodesWithAnnotationSelector=%q manageNodesWithLabelSelector=%q",
			want, o.ManageAllNodes, o.ManageNodesWithAnnotationSelector, o.ManageNodesWithLabelSelector)
	}
	return nil
}

// withParallelism sets options.podPlayStageParallelism (to pods) and
// options.nodeLeaseParallelism in the kwok ConfigMap's kwok.yaml and
// returns the new text.
func withParallelism(cm *unstructured.Unstructured, pods int) (string, error) {
	data, _, _ := unstructured.NestedString(cm.Object, "data", "kwok.yaml")
	var conf map[string]any
	if err := yaml.Unmarshal([]byte(data), &conf); err != nil {
		return "", fmt.Errorf("ConfigMap kwok, kwok.yaml: %w", err)
	}
	opts, ok := conf["options"].(map[string]any)
	if !ok {
		return "", fmt.Errorf("ConfigMap kwok, kwok.yaml: no options")
	}
	opts["podPlayStageParallelism"] = pods
	opts["nodeLeaseParallelism"] = NodeLeaseParallelism
	out, err := yaml.Marshal(conf)
	if err != nil {
		return "", err
	}
	text := string(out)
	return text, unstructured.SetNestedField(cm.Object, text, "data", "kwok.yaml")
}

func setImage(deploy *unstructured.Unstructured, image string) error {
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	found := false
	for _, c := range containers {
		m, ok := c.(map[string]any)
		if ok && m["name"] == ControllerName {
			m["image"] = image
			found = true
		}
	}
	if !found {
		return fmt.Errorf("Deployment %s has no container %q", ControllerName, ControllerName)
	}
	return unstructured.SetNestedSlice(deploy.Object, containers, "spec", "template", "spec", "containers")
}

// applyOrder puts CRDs first and workloads last, keeping kustomize's order otherwise.
func applyOrder(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	rank := func(o *unstructured.Unstructured) int {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			return 0
		case "Deployment":
			return 2
		}
		return 1
	}
	var out []*unstructured.Unstructured
	for r := 0; r <= 2; r++ {
		for _, o := range objs {
			if rank(o) == r {
				out = append(out, o)
			}
		}
	}
	return out
}

// Module is the kwok Go module whose kustomize directory is rendered.
type Module struct {
	Version string
	Dir     string
}

var moduleCache struct {
	sync.Mutex
	mod Module
}

// locateModule finds the kwok module's source directory: dir if given, else
// `go list -m` (the version go.mod requires), else `go mod download`, else the
// module cache path for ModuleVersion.
func locateModule(dir string) (Module, error) {
	if dir != "" {
		if err := checkModuleDir(dir); err != nil {
			return Module{}, err
		}
		return Module{Version: ModuleVersion, Dir: dir}, nil
	}
	moduleCache.Lock()
	defer moduleCache.Unlock()
	if moduleCache.mod.Dir != "" {
		return moduleCache.mod, nil
	}
	// The module cache's usual place first: asking go costs 0.3 s of every
	// cluster:up, and go.mod pins ModuleVersion (TestModuleVersionIsGoMods).
	if d := gobuild.ModuleCacheDir(ModulePath, ModuleVersion); d != "" && checkModuleDir(d) == nil {
		moduleCache.mod = Module{Version: ModuleVersion, Dir: d}
		return moduleCache.mod, nil
	}
	var tried []string
	for _, args := range [][]string{
		{"list", "-m", "-json", ModulePath},
		{"mod", "download", "-json", ModulePath + "@" + ModuleVersion},
	} {
		mod, err := goModule(args...)
		if err == nil {
			err = checkModuleDir(mod.Dir)
		}
		if err == nil {
			moduleCache.mod = mod
			return mod, nil
		}
		tried = append(tried, fmt.Sprintf("go %s: %v", strings.Join(args, " "), err))
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
			cache = strings.TrimSpace(string(out))
		}
	}
	if cache != "" {
		d := filepath.Join(cache, ModulePath+"@"+ModuleVersion)
		if err := checkModuleDir(d); err == nil {
			moduleCache.mod = Module{Version: ModuleVersion, Dir: d}
			return moduleCache.mod, nil
		}
		tried = append(tried, "module cache: "+d+" not found")
	}
	return Module{}, fmt.Errorf("kwok module %s@%s sources not found (%s); run `go mod download %s` in the termlab repository",
		ModulePath, ModuleVersion, strings.Join(tried, "; "), ModulePath)
}

func goModule(args ...string) (Module, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Module{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var m struct {
		Version string
		Dir     string
		Error   any
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return Module{}, err
	}
	if m.Error != nil {
		return Module{}, fmt.Errorf("%v", m.Error)
	}
	if m.Dir == "" {
		return Module{}, errors.New("module not downloaded")
	}
	return Module{Version: m.Version, Dir: m.Dir}, nil
}

func checkModuleDir(dir string) error {
	st, err := os.Stat(filepath.Join(dir, "kustomize", "kwok", "kustomization.yaml"))
	if err != nil {
		return fmt.Errorf("%s is not the kwok module directory: %w", dir, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s/kustomize/kwok/kustomization.yaml is a directory", dir)
	}
	return nil
}

// Parallelism is how many requests of each kind the cluster's kwok sends at
// once, as its ConfigMap says.
type Parallelism struct {
	PodPlay   int // pod stages played at once (each a request)
	NodeLease int // node leases renewed at once
}

// ParallelismOf reads the cluster's kwok parallelism from its ConfigMap.
func ParallelismOf(ctx context.Context, client kubernetes.Interface) (Parallelism, error) {
	cm, err := client.CoreV1().ConfigMaps(Namespace).Get(ctx, "kwok", metav1.GetOptions{})
	if err != nil {
		return Parallelism{}, fmt.Errorf("reading kwok's configuration (ConfigMap %s/kwok): %w", Namespace, err)
	}
	p, err := parallelismIn(cm.Data["kwok.yaml"])
	if err != nil {
		return Parallelism{}, fmt.Errorf("reading kwok's configuration (ConfigMap %s/kwok, kwok.yaml): %w", Namespace, err)
	}
	return p, nil
}

// parallelismIn reads kwok.yaml's options; an option not set is kwok's own
// default.
func parallelismIn(kwokYAML string) (Parallelism, error) {
	var conf struct {
		Options struct {
			PodPlayStageParallelism *int `json:"podPlayStageParallelism"`
			NodeLeaseParallelism    *int `json:"nodeLeaseParallelism"`
		} `json:"options"`
	}
	if err := yaml.Unmarshal([]byte(kwokYAML), &conf); err != nil {
		return Parallelism{}, err
	}
	p := Parallelism{PodPlay: kwokDefaultParallelism, NodeLease: kwokDefaultParallelism}
	if n := conf.Options.PodPlayStageParallelism; n != nil {
		p.PodPlay = *n
	}
	if n := conf.Options.NodeLeaseParallelism; n != nil {
		p.NodeLease = *n
	}
	return p, nil
}

// kwokDefaultParallelism is kwok v0.8's own default for both
// (pkg/apis/config/v1alpha1: +default=4).
const kwokDefaultParallelism = 4
