package lab

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// podPage is how many pods one page of EachPod holds.
const podPage = 500

// EachPod LISTs pods a page at a time and calls fn with each: a LIST of
// 50,000 whole pods decoded at once (lab:scale's, or what a killed run of it
// left) is most of a gigabyte, a page a few megabytes. The pages after the
// first are served from the first one's snapshot. It returns how many pods
// it listed, and the first error of the LIST or of fn.
func EachPod(ctx context.Context, pods typedcorev1.PodInterface, opts metav1.ListOptions, fn func(*corev1.Pod) error) (int, error) {
	opts.Limit = podPage
	n := 0
	for {
		l, err := pods.List(ctx, opts)
		if err != nil {
			return n, err
		}
		for i := range l.Items {
			n++
			if err := fn(&l.Items[i]); err != nil {
				return n, err
			}
		}
		if l.Continue == "" {
			return n, nil
		}
		opts.Continue = l.Continue
	}
}
