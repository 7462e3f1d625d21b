package pipecontroller

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
)

func integration(gen, observed int64, phase camelv1.IntegrationPhase, ready metav1.ConditionStatus) *camelv1.Integration {
	it := &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "ticker", Generation: gen}}
	it.Status.ObservedGeneration = observed
	it.Status.Phase = phase
	it.Status.Replicas = ptr.To[int32](2)
	it.Status.Selector = "camel.apache.org/integration=ticker"
	if ready != "" {
		it.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: ready, Reason: "DeploymentReady", Message: "2/2 pods ready"}}
	}
	return it
}

func TestTheBindingsStatusFollowsWhatWasObserved(t *testing.T) {
	cases := []struct {
		name        string
		scope       scope
		phase       camelv1.PipePhase
		ready       metav1.ConditionStatus
		reason      controller.Reason
		reconciling bool
		stalled     bool
	}{
		{name: "bad input is an Error that stalls", phase: camelv1.PipePhaseError, ready: "False", reason: ReasonInvalidBinding, stalled: true,
			scope: scope{Outcome: controller.Outcome{Failure: controller.Because(ReasonInvalidBinding, "sink: kamelet log-sink: missing required property")}}},
		{name: "a missing Kamelet is waited for", phase: camelv1.PipePhaseCreating, ready: "False", reason: ReasonKameletNotFound, reconciling: true,
			scope: scope{Outcome: controller.Outcome{Waiting: controller.Because(ReasonKameletNotFound, "kamelet not found")}}},
		{name: "an Integration just applied is being created", phase: camelv1.PipePhaseCreating, ready: "False", reason: "IntegrationApplied", reconciling: true,
			scope: scope{applied: true}},
		{name: "a Running Integration makes the binding Ready", phase: camelv1.PipePhaseReady, ready: "True", reason: "DeploymentReady",
			scope: scope{integration: integration(2, 2, camelv1.IntegrationPhaseRunning, "True")}},
		{name: "a Running Integration that has not seen its latest spec is not Ready", phase: camelv1.PipePhaseCreating, ready: "False",
			reason: "IntegrationReconciling", reconciling: true,
			scope: scope{integration: integration(3, 2, camelv1.IntegrationPhaseRunning, "True")}},
		{name: "a Deploying Integration keeps the binding Creating", phase: camelv1.PipePhaseCreating, ready: "False", reason: "DeploymentReady", reconciling: true,
			scope: scope{integration: integration(1, 1, camelv1.IntegrationPhaseDeploying, "False")}},
		{name: "an Integration in Error puts the binding in Error", phase: camelv1.PipePhaseError, ready: "False", reason: "DeploymentReady", stalled: true,
			scope: scope{integration: integration(1, 1, camelv1.IntegrationPhaseError, "False")}},
		{name: "an Integration without conditions yet is not Ready", phase: camelv1.PipePhaseCreating, ready: "False", reason: "IntegrationNotReady", reconciling: true,
			scope: scope{integration: integration(1, 1, "", "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Name: "ticker", Generation: 4}}
			s := tc.scope
			s.binding, s.spec, s.status = p, &p.Spec, &p.Status
			computeStatus(&s)
			g.Expect(p.Status.Phase).To(Equal(tc.phase))
			g.Expect(p.Status.ObservedGeneration).To(Equal(int64(4)))
			ready := meta.FindStatusCondition(p.Status.Conditions, "Ready")
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(tc.ready))
			g.Expect(ready.Reason).To(Equal(string(tc.reason)))
			g.Expect(ready.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, "Reconciling")).To(Equal(tc.reconciling))
			g.Expect(meta.FindStatusCondition(p.Status.Conditions, "Reconciling") != nil).To(Equal(tc.reconciling))
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, "Stalled")).To(Equal(tc.stalled))
			if s.integration != nil {
				g.Expect(p.Status.Replicas).To(Equal(ptr.To[int32](2)))
				g.Expect(p.Status.Selector).To(Equal("camel.apache.org/integration=ticker"))
			}
		})
	}
}

// TestDataTypesAreNamedAsTakingNoEffect: a binding whose endpoints name data types says which, and
// the condition goes once they name none.
func TestDataTypesAreNamedAsTakingNoEffect(t *testing.T) {
	g := NewWithT(t)
	p := &camelv1.Pipe{ObjectMeta: metav1.ObjectMeta{Name: "ticker", Generation: 4}}
	s := scope{compiledRead: true, ignoredDataTypes: []string{"source.dataTypes.out", "sink.dataTypes.in"}}
	s.binding, s.spec, s.status = p, &p.Spec, &p.Status
	computeStatus(&s)
	c := meta.FindStatusCondition(p.Status.Conditions, ConditionDataTypesIgnored)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.Reason).To(Equal(string(ReasonDataTypesNotApplied)))
	g.Expect(c.Message).To(HavePrefix("source.dataTypes.out, sink.dataTypes.in are kept and do nothing"))
	p.Annotations = map[string]string{DataTypeKameletAnnotation: "my-data-types"}
	computeStatus(&s)
	c = meta.FindStatusCondition(p.Status.Conditions, ConditionDataTypesIgnored)
	g.Expect(c.Message).To(ContainSubstring("nor is the Kamelet my-data-types that camel.apache.org/kamelet.data.type names called for them"))
	s.ignoredDataTypes = nil
	computeStatus(&s)
	g.Expect(meta.FindStatusCondition(p.Status.Conditions, ConditionDataTypesIgnored)).To(BeNil())
}
