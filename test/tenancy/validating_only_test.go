package tenancy

import (
	"context"
	"io"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestWithoutMutatingPoliciesTheValidatingOnesStillHold: with the admission policies as a cluster
// of Kubernetes 1.30 to 1.35 gets them (no MutatingAdmissionPolicy), assigning work still needs
// the verb use, unassigned work included (DefaultUsePolicy); a label that names another operator
// is refused (LabelGuardPolicy); an operator's identity stays confined to its share; and a move
// reaches the new operator, which mirrors the label itself. On a cluster that serves
// MutatingAdmissionPolicy, the test swaps the policies for the validating-only set; on one that
// does not, caravan install chose that set itself, and says so.
func TestWithoutMutatingPoliciesTheValidatingOnesStillHold(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	install(t, ops, "older-a")
	install(t, ops, "older-b")

	if withoutMutatingPolicies {
		t.Log("caravan install saw that the API server serves no MutatingAdmissionPolicy, and installed the validating-only set")
		for _, name := range installpkg.ValidatingOnlyPolicies {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, &admissionv1.ValidatingAdmissionPolicy{})).To(Succeed(), name)
		}
		holdValidatingOnly(t, ops, apps)
		return
	}
	t.Log("the mutating policies go, and the validating-only set takes their place")
	installer := &installpkg.Installer{Client: env.Client, Out: io.Discard}
	for _, o := range installpkg.AdmissionPolicies() {
		switch o.(type) {
		case *admissionv1.MutatingAdmissionPolicy, *admissionv1.MutatingAdmissionPolicyBinding:
			g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, o.DeepCopyObject().(client.Object)))).To(Succeed())
		}
	}
	g.Expect(installer.Install(ctx, "caravan-system", installpkg.ValidatingOnlyAdmissionPolicies())).To(Succeed())
	t.Cleanup(func() {
		for _, o := range installpkg.ValidatingOnlyAdmissionPolicies() {
			if slices.Contains(installpkg.ValidatingOnlyPolicies, o.GetName()) {
				_ = env.Client.Delete(ctx, o)
			}
		}
		if err := installer.Install(ctx, "caravan-system", installpkg.AdmissionPolicies()); err != nil {
			t.Errorf("restoring the admission policies: %v", err)
		}
		waitLabelPolicyActs(t, apps)
	})
	probe := harness.NewIntegration(apps, "probe", "older-a", 1)
	g.Eventually(func() string { return admittedLabel(probe) }, timeout, poll).Should(BeEmpty(), "the API server still mirrors the label")
	holdValidatingOnly(t, ops, apps)
}

// holdValidatingOnly checks, in apps, what the validating-only policies guarantee, with the
// operators older-a and older-b of ops.
func holdValidatingOnly(t *testing.T, ops, apps string) {
	g := NewWithT(t)
	ctx := context.Background()
	alice := tenant(t, apps, "alice", "older-a")
	t.Log("a tenant runs work on the operator it may use; the operator mirrors the label")
	mine := harness.NewIntegration(apps, "mine", "older-a", 1)
	g.Expect(alice.Create(ctx, mine)).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(mine), "older-a") }, timeout, poll).Should(Succeed())
	g.Eventually(func() (string, error) {
		it := &camelv1.Integration{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(mine), it)
		return it.Labels[camelv1.OperatorIDLabel], err
	}, timeout, poll).Should(Equal("older-a"))

	t.Log("another operator's assignment is refused, and so is unassigned work, which the default operator would take")
	err := refused(t, alice, harness.NewIntegration(apps, "theirs", "older-b", 1))
	g.Expect(err.Error()).To(ContainSubstring("to operator older-b needs the verb use on integrationoperators/older-b"))
	err = refused(t, alice, harness.NewIntegration(apps, "unassigned", "", 1))
	g.Expect(err.Error()).To(ContainSubstring("to operator camel-k needs the verb use"))

	t.Log("a label that names another operator than the assignment is refused, at creation and after")
	labelled := harness.NewIntegration(apps, "labelled", "older-a", 1)
	labelled.Labels = map[string]string{camelv1.OperatorIDLabel: "older-b"}
	err = refused(t, alice, labelled)
	g.Expect(err.Error()).To(ContainSubstring("may only name the operator it is assigned to (older-a), not older-b"))
	err = alice.Patch(ctx, mine.DeepCopy(), client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+camelv1.OperatorIDLabel+`":"older-b"}}}`)))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)

	t.Log("older-b's identity may not change older-a's work")
	b := serviceAccountClient(t, ops, "older-b-operator")
	err = annotate(b, mine.DeepCopy(), "older-b")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)

	t.Log("an administrator moves it: older-b mirrors the label and runs it")
	g.Expect(annotate(env.Client, mine.DeepCopy(), "older-b")).To(Succeed())
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(mine), "older-b") }, timeout, poll).Should(Succeed())
	it := &camelv1.Integration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mine), it)).To(Succeed())
	g.Expect(it.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "older-b"))
}
