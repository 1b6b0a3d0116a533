package diagnose

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// patchIn is the JSON patch a printed kubectl command sends.
var patchIn = regexp.MustCompile(`--type=json -p '(\[.*?\])'`)

// Each "remove finalizer X" the advice prints removes X and nothing else,
// whichever is applied first; applied to a list that changed under it (X
// moved), it is refused whole rather than removing another finalizer.
func TestRemoveFinalizerAdviceRemovesOnlyItsOwn(t *testing.T) {
	finalizers := []string{"example.com/first", "example.com/second"}
	pod := func(fs []string) []byte {
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "p", "finalizers": fs}})
		return b
	}
	f := &podFacts{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}}
	for _, n := range finalizers {
		f.finalizers = append(f.finalizers, finalizerFact{name: n})
	}
	var advice []string
	for _, r := range podAdvice {
		if r.id == "remove-the-finalizer-by-hand" {
			advice = r.text(f)
		}
	}
	if len(advice) != 2 {
		t.Fatalf("advice %q: want one line per finalizer", advice)
	}
	// Printed last first; applied one after another in that order, each
	// finds its finalizer where it says and the list ends empty.
	current := finalizers
	for n, line := range advice {
		i := len(finalizers) - 1 - n
		m := patchIn.FindStringSubmatch(line)
		if m == nil || !strings.Contains(line, "remove finalizer "+finalizers[i]) {
			t.Fatalf("line %q: no JSON patch, or not about %s", line, finalizers[i])
		}
		patch, err := jsonpatch.DecodePatch([]byte(m[1]))
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		out, err := patch.Apply(pod(finalizers))
		if err != nil {
			t.Fatalf("applying %s: %v", m[1], err)
		}
		var got struct {
			Metadata struct{ Finalizers []string } `json:"metadata"`
		}
		_ = json.Unmarshal(out, &got)
		want := slices.Delete(slices.Clone(finalizers), i, i+1)
		if !slices.Equal(got.Metadata.Finalizers, want) {
			t.Errorf("%s left %v, want %v", m[1], got.Metadata.Finalizers, want)
		}
		// The other one's removal first: the list moved under this patch.
		moved := slices.Delete(slices.Clone(finalizers), 1-i, 2-i)
		if out, err := patch.Apply(pod(moved)); err == nil && i == 1 {
			t.Errorf("%s on the moved list %v was applied: %s", m[1], moved, out)
		}
		if out, err = patch.Apply(pod(current)); err != nil {
			t.Fatalf("in the printed order, %s on %v: %v", m[1], current, err)
		}
		_ = json.Unmarshal(out, &got)
		current = got.Metadata.Finalizers
	}
	if len(current) != 0 {
		t.Errorf("every line applied in the printed order left %v", current)
	}
}
