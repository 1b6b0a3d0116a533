package lab

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
)

// answerActor answers every action with err, as a script or a person
// would by doing it (nil), giving it up (errSkipped) or failing.
type answerActor struct {
	err  error
	seen []evidence.ActionKind
}

func (a *answerActor) do(_ context.Context, _ *Run, act action) error {
	a.seen = append(a.seen, act.kind)
	return a.err
}

type namedNode string

func (n namedNode) String() string { return string(n) }
func (n namedNode) CommandContext(context.Context, string, ...string) exec.Cmd {
	panic("no command may run on a node in this test")
}

// A run forgets what it must undo only once the action is done: a skipped
// or failed release keeps the held mount for cleanup, a skipped untaint
// keeps the taint; a skip is no error for the run, a failure is.
func TestPerformKeepsWhatANotDoneActionLeaves(t *testing.T) {
	node := namedNode("termlab-worker")
	taint := corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute}
	failed := errors.New("the script exited 1")
	for _, tc := range []struct {
		name    string
		answer  error
		wantErr bool
		kept    bool
	}{
		{"done", nil, false, false},
		{"skipped", errSkipped, false, true},
		{"failed", failed, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marked := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.String(), Annotations: map[string]string{TaintedByAnnotation: "x"}}}
			client := fake.NewSimpleClientset(marked)
			a := &answerActor{err: tc.answer}
			r := &Run{ID: "20261204-000000-abcd", Env: &cluster.Env{Client: client}, actor: a,
				heldMounts:   map[string]cluster.Node{node.String(): node},
				taintedNodes: map[string]corev1.Taint{node.String(): taint}}
			errRelease := r.ReleaseMount(context.Background(), node)
			errUntaint := r.UntaintNode(context.Background(), node.String(), taint)
			if (errRelease != nil) != tc.wantErr || (errUntaint != nil) != tc.wantErr {
				t.Errorf("release: %v; untaint: %v; want an error: %v", errRelease, errUntaint, tc.wantErr)
			}
			if _, held := r.heldMounts[node.String()]; held != tc.kept {
				t.Errorf("after a %s release the run notes the held mount: %v, want %v", tc.name, held, tc.kept)
			}
			if _, tainted := r.taintedNodes[node.String()]; tainted != tc.kept {
				t.Errorf("after a %s untaint the run notes the taint: %v, want %v", tc.name, tainted, tc.kept)
			}
			// Done by someone else, the run's mark goes too: left, it reads as
			// a killed run's taint to the next run's repair.
			n, _ := client.CoreV1().Nodes().Get(context.Background(), node.String(), metav1.GetOptions{})
			if _, mark := n.Annotations[TaintedByAnnotation]; mark != tc.kept {
				t.Errorf("after a %s untaint the node's mark is there: %v, want %v", tc.name, mark, tc.kept)
			}
			if len(a.seen) != 2 || a.seen[0] != evidence.ActionReleaseMount || a.seen[1] != evidence.ActionUntaintNode {
				t.Errorf("the actor was asked for %v, want release-mount, untaint-node", a.seen)
			}
		})
	}
}
