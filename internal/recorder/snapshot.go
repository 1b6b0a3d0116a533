package recorder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/redact"
)

// evidence.Snapshot reads the pod now and saves it in the current step's folder as
// the YAML `kubectl get pod -o yaml` shows (apiVersion and kind set,
// managedFields, env values and the last-applied configuration left out). A pod that is gone is recorded as not found; that
// is evidence too.
func (r *Recorder) Snapshot(ctx context.Context, pod string) (evidence.Snapshot, error) {
	got, err := r.cfg.Client.CoreV1().Pods(r.cfg.Namespace).Get(ctx, pod, metav1.GetOptions{})
	at := now()
	if err != nil && !apierrors.IsNotFound(err) {
		return evidence.Snapshot{}, fmt.Errorf("reading pod %s for a snapshot: %w", pod, err)
	}
	var content []byte
	snap := evidence.Snapshot{Pod: pod, At: at, Found: err == nil}
	if snap.Found {
		content, err = KubectlYAML(got)
		if err != nil {
			return evidence.Snapshot{}, err
		}
		st := evidence.StateOf(got)
		snap.State = &st
	} else {
		content = []byte(fmt.Sprintf("# GET pods/%s in namespace %s at %s: NotFound\n", pod, r.cfg.Namespace, at.Format("2006-01-02T15:04:05.000000000Z07:00")))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	snap.Step = r.currentStepLocked()
	snap.Path = r.uniquePathLocked(r.stepDirLocked(), pod, ".yaml")
	if err := r.writeFileLocked(snap.Path, content); err != nil {
		return evidence.Snapshot{}, err
	}
	r.rec.Snapshots = append(r.rec.Snapshots, snap)
	return snap, nil
}

// KubectlYAML renders a pod as kubectl get -o yaml does, without
// managedFields, and without its env values and last-applied configuration
// (internal/redact).
func KubectlYAML(pod *corev1.Pod) ([]byte, error) {
	p := redact.Pod(pod).DeepCopy()
	p.APIVersion, p.Kind = "v1", "Pod"
	p.ManagedFields = nil
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("rendering pod %s as YAML: %w", pod.Name, err)
	}
	return b, nil
}

// WriteFile saves content under the run folder at rel (a slash path) and
// returns rel. Use it for inputs and other files that belong to the run.
func (r *Recorder) WriteFile(rel string, content []byte) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return rel, r.writeFileLocked(rel, content)
}

func (r *Recorder) writeFileLocked(rel string, content []byte) error {
	path := filepath.Join(r.cfg.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), evidence.PrivateDir); err != nil {
		return fmt.Errorf("creating the folder for %s: %w", rel, err)
	}
	if err := os.WriteFile(path, content, evidence.PrivateFile); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	return nil
}
