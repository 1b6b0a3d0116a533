package cli

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestTargetsForCompletesAsDiagnoseReads(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "staging"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-0"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "staging", Name: "web-9"}},
	)
	for _, tc := range []struct{ in, want string }{
		{"", "pod/ ns/ db-0 web-0"},
		{"w", "web-0"},
		{"p", "pod/"},
		{"pod/", "pod/db-0 pod/web-0"},
		{"po/w", "po/web-0"},
		{"ns/s", "ns/shop ns/staging"},
		{"namespace/sh", "namespace/shop"},
		{"deployment/", ""},
	} {
		got := strings.Join(targetsFor(context.Background(), client, "shop", tc.in), " ")
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}
