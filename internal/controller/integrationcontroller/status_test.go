package integrationcontroller

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/controller"
	"github.com/caravan-dev/caravan/internal/trait"
)

func deployment(replicas, updated, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas,
			UpdatedReplicas: updated, ReadyReplicas: ready, AvailableReplicas: ready},
	}
}

func statusOf(s *scope) camelv1.IntegrationStatus {
	computeStatus(s)
	st := s.it.Status
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return st
}

func TestStatusWritesOnlyWhatAUserCanActOn(t *testing.T) {
	newIntegration := func() *camelv1.Integration {
		return &camelv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: "it", Generation: 1}}
	}
	t.Run("the reconcile that creates the Deployment and the next, which see it rolling out, compute the same status", func(t *testing.T) {
		g := NewWithT(t)
		// What the API server answers to the apply that creates it.
		created := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))}}
		applied := statusOf(&scope{it: newIntegration(), deployment: created})
		for _, d := range []*appsv1.Deployment{deployment(0, 0, 0), deployment(1, 1, 0), deployment(2, 2, 1), deployment(3, 1, 2)} {
			seen := statusOf(&scope{it: newIntegration(), deployment: d})
			g.Expect(seen).To(Equal(applied), "Deployment status %+v", d.Status)
		}
		g.Expect(applied.Phase).To(Equal(camelv1.IntegrationPhaseDeploying))
		g.Expect(applied.Replicas).To(BeNil())
		g.Expect(meta.IsStatusConditionTrue(applied.Conditions, camelv1.ConditionReconciling)).To(BeTrue())
	})
	t.Run("a reconcile that ended before the Deployment does not claim a rollout", func(t *testing.T) {
		g := NewWithT(t)
		st := statusOf(&scope{it: newIntegration()})
		ready := meta.FindStatusCondition(st.Conditions, camelv1.ConditionReady)
		g.Expect(ready.Reason).To(Equal("Deploying"))
		g.Expect(ready.Message).NotTo(ContainSubstring("rolling out"))
	})
	t.Run("a reconcile that failed before the Deployment says what failed and since when", func(t *testing.T) {
		g := NewWithT(t)
		since := time.Date(2026, 12, 6, 10, 31, 2, 0, time.UTC)
		refused := errors.New(`applying *v1.Deployment it: denied request: the identity of operator b may change Deployment it only while it is labelled b`)
		st := statusOf(&scope{it: newIntegration(), failing: refused, failingSince: since})
		ready := meta.FindStatusCondition(st.Conditions, camelv1.ConditionReady)
		g.Expect(ready.Reason).To(Equal("Retrying"))
		g.Expect(ready.Message).To(Equal(refused.Error() + "; retrying since 2026-12-06T10:31:02Z"))
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseDeploying))
	})
	t.Run("a Deployment with all its pods ready makes the integration Running and counts them", func(t *testing.T) {
		g := NewWithT(t)
		st := statusOf(&scope{it: newIntegration(), deployment: deployment(2, 2, 2)})
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
		g.Expect(st.Replicas).To(Equal(ptr.To(int32(2))))
		g.Expect(meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionReady)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(st.Conditions, camelv1.ConditionReconciling)).To(BeNil())
	})
	t.Run("an apply that changes the Deployment's metadata alone (a move) keeps the integration Running", func(t *testing.T) {
		g := NewWithT(t)
		// The apply's answer: same generation, the pods still ready.
		moved := deployment(2, 2, 2)
		moved.Labels = map[string]string{camelv1.OperatorIDLabel: "b"}
		st := statusOf(&scope{it: newIntegration(), deployment: moved})
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
		g.Expect(meta.IsStatusConditionTrue(st.Conditions, camelv1.ConditionReady)).To(BeTrue())
	})
	t.Run("a later rollout keeps the count of the last time all pods were ready", func(t *testing.T) {
		g := NewWithT(t)
		it := newIntegration()
		it.Status.Replicas = ptr.To(int32(2))
		st := statusOf(&scope{it: it, deployment: deployment(3, 1, 2)})
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseDeploying))
		g.Expect(st.Replicas).To(Equal(ptr.To(int32(2))))
	})
	t.Run("bad input is an Error phase with a Stalled condition that says why", func(t *testing.T) {
		g := NewWithT(t)
		st := statusOf(&scope{it: newIntegration(), Outcome: controller.Outcome{Failure: controller.Because(ReasonInvalidTrait, "container.port: not a number")}})
		g.Expect(st.Phase).To(Equal(camelv1.IntegrationPhaseError))
		stalled := meta.FindStatusCondition(st.Conditions, camelv1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Message).To(Equal("container.port: not a number"))
	})
	t.Run("waiting for a kit is BuildingKit, waiting for anything else is Initialization", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(statusOf(&scope{it: newIntegration(), Outcome: controller.Outcome{Waiting: controller.Because(ReasonKitBuilding, "building")}}).Phase).
			To(Equal(camelv1.IntegrationPhaseBuildingKit))
		g.Expect(statusOf(&scope{it: newIntegration(), Outcome: controller.Outcome{Waiting: controller.Because(ReasonPlatformNotReady, "waiting")}}).Phase).
			To(Equal(camelv1.IntegrationPhaseInitialization))
	})
}

// TestCronJobAvailableSaysWhetherTheScheduledConsumersRunAsACronJob: true, naming the consumers its
// pods replace, for a CronJob; false for cron: consumers that fall back to a Deployment; none for
// an integration without scheduled consumers.
func TestCronJobAvailableSaysWhetherTheScheduledConsumersRunAsACronJob(t *testing.T) {
	g := NewWithT(t)
	traits := func(raw string, uris ...string) trait.Cron {
		tr, err := trait.Parse(camelv1.Traits{"cron": camelv1.RawObject{JSON: apiextensionsv1.JSON{Raw: []byte(raw)}}})
		g.Expect(err).NotTo(HaveOccurred())
		var consumers []trait.Consumer
		for _, u := range uris {
			consumers = append(consumers, trait.Consumer{URI: u})
		}
		return tr.WithConsumers(consumers).Cron
	}
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}}
	c := cronJobAvailable(traits(`{}`, "cron:tab?schedule=0+*+*+*+*+?"), cron)
	g.Expect(c).To(gstruct.PointTo(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "CronJobAvailableReason"),
		HaveField("Message", "the CronJob nightly runs the integration; its pods run "+trait.OneShotURI+
			" in place of cron:tab?schedule=0+*+*+*+*+?, once per job"))))
	c = cronJobAvailable(traits(`{"fallback":true}`, "cron:tab?schedule=0+*+*+*+*+?"), nil)
	g.Expect(c).To(gstruct.PointTo(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "CronJobNotAvailableReason"),
		HaveField("Message", ContainSubstring("fallback strategy selected")))))
	g.Expect(cronJobAvailable(traits(`{}`, "timer:tick?period=1000"), nil)).To(BeNil())
}
