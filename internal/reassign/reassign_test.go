package reassign

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

func TestARefNamesATargetThatParseRefReadsBack(t *testing.T) {
	for _, kind := range Kinds {
		g := NewWithT(t)
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "orders"}}
		ref := Target{Kind: kind, Obj: obj}.Ref()
		got, err := ParseRef(ref)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Kind.Name).To(Equal(kind.Name))
		g.Expect(got.Obj.GroupVersionKind()).To(Equal(kind.GVK))
		g.Expect(got.Integration().String()).To(Equal("apps/orders"), "a binding's integration has its name")
	}
}

func TestParseRefRefusesWhatNamesNoTarget(t *testing.T) {
	for _, ref := range []string{"", "orders", "integration/orders", "deployment/apps/orders", "pipe//orders", "pipe/apps/"} {
		_, err := ParseRef(ref)
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("is not KIND/NAMESPACE/NAME")), ref)
	}
}

func TestKindsAreNamedByTheirAliasesInAnyCase(t *testing.T) {
	g := NewWithT(t)
	for name, want := range map[string]string{"IT": "integration", "Pipe": "pipe", "klb": "kameletbinding", "pipes": "pipe"} {
		kind, ok := KindNamed(name)
		g.Expect(ok).To(BeTrue(), name)
		g.Expect(kind.Name).To(Equal(want))
	}
	_, ok := KindNamed("deployment")
	g.Expect(ok).To(BeFalse())
}

func TestOnlyAnIntegrationABindingControlsIsMadeFromIt(t *testing.T) {
	g := NewWithT(t)
	controlledBy := func(apiVersion, kind string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "b",
			Controller: new(true)}}}
	}
	integration, pipe := Kinds[0], Kinds[1]
	g.Expect(MadeFromBinding(integration, controlledBy("camel.apache.org/v1", "Pipe"))).To(Equal(`Pipe "b"`))
	g.Expect(MadeFromBinding(integration, controlledBy("camel.apache.org/v1alpha1", "KameletBinding"))).To(Equal(`KameletBinding "b"`))
	g.Expect(MadeFromBinding(integration, controlledBy("apps/v1", "Pipe"))).To(BeEmpty(), "another group's Pipe")
	g.Expect(MadeFromBinding(integration, &metav1.ObjectMeta{})).To(BeEmpty())
	g.Expect(MadeFromBinding(pipe, controlledBy("camel.apache.org/v1", "Pipe"))).To(BeEmpty(), "only integrations follow a binding")
}

func TestAnIntegrationSettlesOnceItsNewOwnerRunsItOrFailsIt(t *testing.T) {
	g := NewWithT(t)
	it := func(annotation, owner string, phase camelv1.IntegrationPhase) *camelv1.Integration {
		i := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{camelv1.OperatorIDAnnotation: annotation}}}
		i.Status.Ownership.Owner, i.Status.Phase = owner, phase
		return i
	}
	g.Expect(Settled(it("b", "b", camelv1.IntegrationPhaseRunning), "b")).To(BeTrue())
	g.Expect(Settled(it("b", "b", camelv1.IntegrationPhaseError), "b")).To(BeTrue())
	g.Expect(Settled(it("b", "a", camelv1.IntegrationPhaseRunning), "b")).To(BeFalse(), "b has not adopted it yet")
	g.Expect(Settled(it("b", "b", camelv1.IntegrationPhaseDeploying), "b")).To(BeFalse())
	g.Expect(Settled(nil, "b")).To(BeFalse())
}
