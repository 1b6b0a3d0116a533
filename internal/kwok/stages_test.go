package kwok

// Golden tests for the stage files in manifests/kwok, in the manner of kwok's
// own kustomize/stage/stage_test.go, and with kwok's own code: the stages are
// loaded with sigs.k8s.io/kwok/pkg/config (the same v1alpha1 → internal
// conversion the controller applies to Stage objects), matched with
// pkg/utils/lifecycle (selectors, weights, delays) and played with
// Stage.DoSteps and pkg/utils/gotpl, exactly the calls the controller makes.
//
// For each testdata/<set>/<case>.input.yaml (one Pod or Node) the test plays
// the object through ALL rendered stages, as the one controller in the cluster
// holds them: it lists every stage that matches (so a stage of another set that
// matched would show, and fails the test), records what the stage does (event,
// patch, finalizer change, delete) and the object after its patches, then
// matches again on the result, as the controller does on the MODIFIED event,
// until nothing matches, nothing changes, or the stage deletes. What the API
// server then does with the delete is stated from the object (finalizers left
// or not): that part is the API server's, and is checked on the real cluster.
//
// Regenerate the golden files with: go test ./internal/kwok -run TestStages -update

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	yamlv3 "go.yaml.in/yaml/v3"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden testdata/*/*.output.yaml files")

// testNow is "now" for delays and for the Now template function.
var testNow = time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)

const maxPlays = 10

func TestStages(t *testing.T) {
	ctx := context.Background()
	stages := loadStages(t, ctx)
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*.input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*/*.input.yaml")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(strings.TrimPrefix(in, "testdata"+string(filepath.Separator)), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			set := filepath.Base(filepath.Dir(in))
			got, err := play(ctx, stages, in, set)
			if err != nil {
				t.Fatal(err)
			}
			out, err := marshalGolden(got)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".input.yaml") + ".output.yaml"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(out)); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// loadStages renders manifests/kwok and loads it the way kwok does.
func loadStages(t *testing.T, ctx context.Context) []*internalversion.Stage {
	t.Helper()
	objs, err := RenderStages(Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := YAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "stages.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := config.Load(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	stages := config.FilterWithType[*internalversion.Stage](loaded)
	if len(stages) != len(objs) {
		t.Fatalf("kwok loaded %d of %d rendered stages", len(stages), len(objs))
	}
	return stages
}

// Play is the golden record of one input (fields in the order written).
type Play struct {
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
	// Set is the stage set the object belongs to (its testdata directory).
	Set string `yaml:"set"`
	// Plays are the stages kwok plays, in order.
	Plays []Played `yaml:"plays"`
	// End says how the play ended.
	End string `yaml:"end"`
	// Object is the object after the last play (before any delete takes effect).
	Object any `yaml:"object"`
}

// Played is one stage played on the object.
type Played struct {
	Stage string `yaml:"stage"`
	// Delay is the delay kwok waits before playing it: one value, or a [min, max] range.
	Delay  []string `yaml:"delay,omitempty"`
	Weight *int64   `yaml:"weight,omitempty"`
	// Next is what the stage does, in order.
	Next []any `yaml:"next"`
	// Result is the deletion-relevant view of the object afterwards.
	Result View `yaml:"result"`
}

// View is the part of a pod or node that deletion and readiness are about.
type View struct {
	Deleted                    bool              `yaml:"deleted,omitempty"`
	Phase                      string            `yaml:"phase,omitempty"`
	DeletionTimestamp          string            `yaml:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `yaml:"deletionGracePeriodSeconds,omitempty"`
	Finalizers                 []string          `yaml:"finalizers,omitempty"`
	Conditions                 map[string]string `yaml:"conditions,omitempty"`
	Containers                 map[string]string `yaml:"containers,omitempty"`
}

// marshalGolden writes p with its fields in order; objects and patches go
// through JSON first, so they appear with their API field names (sorted).
func marshalGolden(p *Play) ([]byte, error) {
	var err error
	generic := func(v any) any {
		b, e := json.Marshal(v)
		if e != nil {
			err = e
			return nil
		}
		var out any
		if e := json.Unmarshal(b, &out); e != nil {
			err = e
		}
		return out
	}
	cp := *p
	cp.Object = generic(p.Object)
	cp.Plays = nil
	for _, pl := range p.Plays {
		next := make([]any, len(pl.Next))
		for i, n := range pl.Next {
			next[i] = generic(n)
		}
		pl.Next = next
		cp.Plays = append(cp.Plays, pl)
	}
	if err != nil {
		return nil, err
	}
	var buf strings.Builder
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&cp); err != nil {
		return nil, err
	}
	return []byte(buf.String()), enc.Close()
}

type object interface {
	GetName() string
	GetFinalizers() []string
	GetLabels() map[string]string
	GetAnnotations() map[string]string
}

func play(ctx context.Context, all []*internalversion.Stage, file, set string) (*Play, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var meta struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	var obj object
	switch meta.Kind {
	case "Pod":
		obj = &corev1.Pod{}
	case "Node":
		obj = &corev1.Node{}
	default:
		return nil, fmt.Errorf("%s: kind %q, want Pod or Node", file, meta.Kind)
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}

	var stages []*internalversion.Stage
	for _, s := range all {
		if s.Spec.ResourceRef.APIGroup == meta.APIVersion && s.Spec.ResourceRef.Kind == meta.Kind {
			stages = append(stages, s)
		}
	}
	lc, err := lifecycle.NewLifecycle(stages)
	if err != nil {
		return nil, err
	}
	renderer := gotpl.NewRenderer(testFuncs())
	rec := &Play{Kind: meta.Kind, Name: obj.GetName(), Set: set}

	for i := 0; ; i++ {
		if i == maxPlays {
			return nil, fmt.Errorf("%s: still playing after %d stages", file, maxPlays)
		}
		event := &lifecycle.Event{Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), Data: obj}
		matched, err := lc.ListAllPossible(ctx, event)
		if err != nil {
			return nil, err
		}
		if len(matched) == 0 {
			rec.End = "settled: no stage matches"
			break
		}
		var names []string
		for _, s := range matched {
			names = append(names, s.Name())
			if got := stageSet(all, s.Name()); got != set && got != NodeStageSet {
				return nil, fmt.Errorf("%s: stage %s of set %q matched an object of set %q", file, s.Name(), got, set)
			}
		}
		if len(matched) > 1 {
			return nil, fmt.Errorf("%s: %d stages match (%v): kwok would pick one at random", file, len(matched), names)
		}
		stage := matched[0]
		p := Played{Stage: stage.Name()}
		if delay, ok, err := stage.DelayRangePossible(ctx, event, testNow); err != nil {
			return nil, err
		} else if ok {
			for _, d := range delay {
				p.Delay = append(p.Delay, d.String())
			}
		}
		if w, ok, err := stage.Weight(ctx, event); err != nil {
			return nil, err
		} else if ok && w != 0 {
			p.Weight = &w
		}

		next, deleted := obj, false
		var stepErr error
		_, err = stage.DoSteps(0, obj.GetFinalizers(), obj, renderer,
			func(e *internalversion.StageEvent) error {
				p.Next = append(p.Next, map[string]string{"kind": "event", "type": e.Type, "reason": e.Reason, "message": e.Message})
				return nil
			},
			func() error {
				p.Next = append(p.Next, map[string]string{"kind": "delete", "gracePeriodSeconds": "0"})
				deleted = true
				return nil
			},
			func(patch *lifecycle.Patch) error {
				step := map[string]any{"kind": "patch", "type": patch.Type, "data": json.RawMessage(patch.Data)}
				if patch.Subresource != "" {
					step["subresource"] = patch.Subresource
				}
				p.Next = append(p.Next, step)
				next, stepErr = applyPatch(next, patch)
				return stepErr
			},
			func(apply *lifecycle.Apply) error {
				return fmt.Errorf("stage %s applies another object; not covered by this test", stage.Name())
			},
		)
		if err != nil {
			return nil, fmt.Errorf("%s: stage %s: %w", file, stage.Name(), err)
		}
		p.Result = view(next)
		p.Result.Deleted = deleted
		rec.Plays = append(rec.Plays, p)
		changed := !reflect.DeepEqual(next, obj)
		obj = next
		if deleted {
			rec.End = deleteOutcome(obj)
			break
		}
		if !changed {
			rec.End = "settled: the stage changes nothing, so no new event plays it again"
			break
		}
	}
	rec.Object = obj
	return rec, nil
}

// deleteOutcome states what the API server does with kwok's delete (grace 0).
func deleteOutcome(obj object) string {
	if f := obj.GetFinalizers(); len(f) > 0 {
		return fmt.Sprintf("delete requested with grace 0; finalizers %v remain, so the API server keeps the object (deletionGracePeriodSeconds 0) until they are removed", f)
	}
	return "delete requested with grace 0; no finalizers: the API server removes the object"
}

func stageSet(all []*internalversion.Stage, name string) string {
	for _, s := range all {
		if s.Name == name {
			return s.Labels[StageSetLabel]
		}
	}
	return ""
}

// applyPatch applies a stage's patch to obj as the API server would for that
// patch type (strategic merge against the typed object, or a JSON patch).
func applyPatch(obj object, patch *lifecycle.Patch) (object, error) {
	orig, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch patch.Type {
	case types.StrategicMergePatchType:
		out, err = strategicpatch.StrategicMergePatch(orig, patch.Data, obj)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		p, err = jsonpatch.DecodePatch(patch.Data)
		if err == nil {
			out, err = p.Apply(orig)
		}
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(orig, patch.Data)
	default:
		err = fmt.Errorf("patch type %s", patch.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("applying %s patch %s: %w", patch.Type, patch.Data, err)
	}
	next := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(object)
	if err := json.Unmarshal(out, next); err != nil {
		return nil, fmt.Errorf("patched object: %w", err)
	}
	return next, nil
}

func view(obj object) View {
	v := View{Conditions: map[string]string{}, Containers: map[string]string{}}
	switch o := obj.(type) {
	case *corev1.Pod:
		v.Phase = string(o.Status.Phase)
		if o.DeletionTimestamp != nil {
			v.DeletionTimestamp = o.DeletionTimestamp.UTC().Format(time.RFC3339)
		}
		v.DeletionGracePeriodSeconds = o.DeletionGracePeriodSeconds
		v.Finalizers = o.Finalizers
		for _, c := range o.Status.Conditions {
			v.Conditions[string(c.Type)] = condition(string(c.Status), c.Reason)
		}
		for _, c := range slices.Concat(o.Status.InitContainerStatuses, o.Status.ContainerStatuses) {
			v.Containers[c.Name] = containerState(c)
		}
	case *corev1.Node:
		v.Phase = string(o.Status.Phase)
		v.Finalizers = o.Finalizers
		for _, c := range o.Status.Conditions {
			v.Conditions[string(c.Type)] = condition(string(c.Status), c.Reason)
		}
	}
	return v
}

func condition(status, reason string) string {
	if reason == "" {
		return status
	}
	return status + " (" + reason + ")"
}

func containerState(c corev1.ContainerStatus) string {
	s := c.State
	ready := fmt.Sprintf(", ready=%v", c.Ready)
	switch {
	case s.Terminated != nil:
		return fmt.Sprintf("terminated exit=%d reason=%s%s", s.Terminated.ExitCode, s.Terminated.Reason, ready)
	case s.Running != nil:
		return "running" + ready
	case s.Waiting != nil:
		return "waiting reason=" + s.Waiting.Reason + ready
	}
	return "unknown" + ready
}

// testFuncs stands in for the controller's template functions, as kwok's own
// stage test does: IPs and names become visible placeholders; Now is testNow
// (a real time, so that patched objects still decode).
func testFuncs() gotpl.FuncMap {
	placeholder := func(name string) func(args ...any) string {
		return func(args ...any) string {
			if len(args) == 0 {
				return "<" + name + ">"
			}
			var s []string
			for _, a := range args {
				s = append(s, fmt.Sprintf("%v", a))
			}
			return "<" + name + "(" + strings.Join(s, ", ") + ")>"
		}
	}
	list := func(name string) func(args ...any) []string {
		one := placeholder(name)
		return func(args ...any) []string { return []string{one(args...)} }
	}
	fm := gotpl.FuncMap{
		"Now":         func() string { return testNow.Format(time.RFC3339Nano) },
		"Version":     func() string { return "0.8.0" },
		"NodePort":    func() int { return 10247 },
		"NodeIPsWith": list("NodeIPsWith"),
		"PodIPsWith":  list("PodIPsWith"),
	}
	for _, name := range []string{"NodeIP", "NodeName", "PodIP", "NodeIPWith", "PodIPWith"} {
		fm[name] = placeholder(name)
	}
	return fm
}
