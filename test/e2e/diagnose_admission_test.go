//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/termlab/termlab/internal/diagnose"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// TestDiagnoseNamesThePolicyThatRefusesTheFinalizerPatch puts a healthy
// admission policy in the way of removing a finalizer (the case of
// kubernetes #109164: the controller's patch is refused, so the object never
// goes) and checks that diagnose's server-side dry run names it. It is a
// ValidatingAdmissionPolicy: admission in the API server itself, so the test
// needs no webhook server or certificate; a refusing webhook is unit-tested.
func TestDiagnoseNamesThePolicyThatRefusesTheFinalizerPatch(t *testing.T) {
	env := connect(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runID := lab.NewRunID(time.Now())
	ns := "termlab-admission-" + runID
	policy := "termlab-keep-finalizers-" + runID
	const finalizerName = "lab.example.com/guarded"
	core, adm := env.Client.CoreV1(), env.Client.AdmissionregistrationV1()

	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{lab.RunIDLabel: runID}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Cleanup runs on every exit path: policy first (or the finalizer could
	// not be removed), then the finalizer, then the namespace, and waits.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(ctx, policy, metav1.DeleteOptions{})
		_ = adm.ValidatingAdmissionPolicies().Delete(ctx, policy, metav1.DeleteOptions{})
		// The policy's removal takes a moment to reach admission: retry.
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := core.Pods(ns).Patch(ctx, "guarded", types.MergePatchType, []byte(diagnose.FinalizersPatch), metav1.PatchOptions{})
			return err == nil || apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("removing the finalizer after the test: %v", err)
		}
		deleteNamespaceAndWait(ctx, t, core, ns)
	})

	fail := admissionregistrationv1.Fail
	if _, err := adm.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policy, Labels: map[string]string{lab.RunIDLabel: runID}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(oldObject.metadata.finalizers) || (has(object.metadata.finalizers) && oldObject.metadata.finalizers.all(f, f in object.metadata.finalizers))",
				Message:    "only the controller that added a finalizer may remove it",
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the policy: %v", err)
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy, Labels: map[string]string{lab.RunIDLabel: runID}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{lab.RunIDLabel: runID},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the policy binding: %v", err)
	}

	// A pod that never schedules is enough: admission does not care.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: ns, Finalizers: []string{finalizerName}, Labels: map[string]string{lab.RunIDLabel: runID}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"termlab.dev/no-such-node": "true"},
			Containers:   []corev1.Container{{Name: "app", Image: env.WorkloadImage}},
		},
	}
	if _, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := core.Pods(ns).Delete(ctx, "guarded", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy reaches admission within seconds of its creation.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := core.Pods(ns).Patch(ctx, "guarded", types.MergePatchType, []byte(diagnose.FinalizersPatch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("the policy never refused the finalizer patch: %v", err)
	}

	na := false
	src, cleanup, err := stack.DiagnoseSource(ctx, progress.Default(), env.KubeconfigPath, &na)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup(context.Background())
	res, err := diagnose.Run(ctx, src, ns, "guarded", project.ResultsDir(root))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnose in %s: %s", res.Took.Round(time.Millisecond), res.Summary.Answer)
	checkReplay(t, res.Dir)
	f, _ := res.Summary.Report.Finding(diagnose.FindDryRun)
	if f.Verdict != "rejected" || !strings.Contains(f.Text, "ValidatingAdmissionPolicy '"+policy+"'") {
		t.Errorf("dry-run finding %+v; want rejected by ValidatingAdmissionPolicy '%s'", f, policy)
	}
	for _, w := range []string{"held by finalizer " + finalizerName, "would be rejected by ValidatingAdmissionPolicy '" + policy + "'"} {
		if !strings.Contains(res.Summary.Answer, w) {
			t.Errorf("the answer lacks %q:\n%s", w, res.Summary.Answer)
		}
	}
	advice := strings.Join(res.Summary.Report.Advice, "\n")
	if !strings.Contains(advice, "would be refused today by ValidatingAdmissionPolicy") {
		t.Errorf("the advice does not warn about the policy:\n%s", advice)
	}
	// The dry run changed nothing.
	if p, err := core.Pods(ns).Get(ctx, "guarded", metav1.GetOptions{}); err != nil || len(p.Finalizers) != 1 {
		t.Errorf("after diagnose the pod is %v (%v); want it with its finalizer", p, err)
	}
}
