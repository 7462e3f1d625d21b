package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	"github.com/caravan-dev/caravan/internal/bench/bareoperator"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestTheBenchBareOperatorMakesTheDeploymentAndReportsReadyOnceItRollsOut
// runs the bench's bare operator on one integration: it makes the
// integration's Deployment and ConfigMap, and writes Ready only once the
// Deployment has rolled out. The bare operator is the bench's measure of
// the least an operator can do: its figures mean something only if it
// does that much for real.
func TestTheBenchBareOperatorMakesTheDeploymentAndReportsReadyOnceItRollsOut(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.Namespace(t)
	stop, err := bareoperator.Start(ctx, env.Config, ns)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	it := harness.NewIntegration(ns, "bare", bareoperator.ID, 2)
	g.Expect(env.Client.Create(ctx, it)).To(Succeed())
	key := client.ObjectKeyFromObject(it)

	dep := &appsv1.Deployment{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, dep) }, timeout, poll).Should(Succeed())
	g.Expect(metav1.GetControllerOf(dep)).To(HaveField("UID", it.UID), "the Deployment is owned by its integration")
	g.Expect(dep.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, bareoperator.ID))
	g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(2))
	g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(harness.TestImage))
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: it.Name + "-camel"}, cm)).To(Succeed(),
		"an integration with flows gets its ConfigMap too")

	ready := func() (bool, error) {
		got := &camelv1.Integration{}
		err := env.Client.Get(ctx, key, got)
		return meta.IsStatusConditionTrue(got.Status.Conditions, camelv1.ConditionReady), err
	}
	g.Consistently(ready, time.Second, poll).Should(BeFalse(), "Ready before the Deployment rolled out")

	t.Log("the Deployment rolls out (no controller-manager here: its status is written by hand)")
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 2, UpdatedReplicas: 2,
		ReadyReplicas: 2, AvailableReplicas: 2}
	g.Expect(env.Client.Status().Update(ctx, dep)).To(Succeed())
	var got *camelv1.Integration
	g.Eventually(last(integrationOf(key), &got), timeout, poll).Should(HaveField("Status.Conditions",
		ContainElement(And(HaveField("Type", camelv1.ConditionReady), HaveField("Status", metav1.ConditionTrue)))))
	g.Expect(got.Status.Phase).To(Equal(camelv1.IntegrationPhaseRunning))
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
}
