package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	"github.com/operator-framework/api/crds"
	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/operator"
)

// TestAnOperatorRunByOLMIsNotUpgradeableDuringACanaryOfIts: OLM holds an upgrade of an operator
// while its OperatorCondition says Upgradeable False, which the operator says while a canary moves
// resources to or from it.
func TestAnOperatorRunByOLMIsNotUpgradeableDuringACanaryOfIts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	crd := crds.OperatorCondition()
	if err := env.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c, err := operator.NewUpgradeableClient(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	ns := env.Namespace(t)
	oc := &operatorsv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "caravan.v0.1.0"}}
	g.Eventually(func() error { return c.Create(ctx, oc) }, timeout, poll).Should(Succeed(), "the OperatorCondition CRD is not served")

	registration := func(name string, canary *camelv1alpha1.CanaryStatus) {
		t.Helper()
		iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: name}}
		g.Expect(env.Client.Create(ctx, iop)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), iop) })
		if canary != nil {
			iop.Status.Canary = canary
			g.Expect(env.Client.Status().Update(ctx, iop)).To(Succeed())
		}
	}
	registration("olm-src", nil)
	registration("olm-other", &camelv1alpha1.CanaryStatus{Spec: camelv1alpha1.CanarySpec{From: "someone-else"},
		Phase: camelv1alpha1.CanaryPhaseProgressing})
	u := &operator.Upgradeable{Client: c, ID: "olm-src", Namespace: ns, Name: oc.Name}
	upgradeable := func() (*metav1.Condition, error) {
		if err := u.Sync(ctx); err != nil {
			return nil, err
		}
		cur := &operatorsv2.OperatorCondition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(oc), cur); err != nil {
			return nil, err
		}
		return meta.FindStatusCondition(cur.Spec.Conditions, operatorsv2.Upgradeable), nil
	}

	cond, err := upgradeable()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond).To(PointTo(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", operator.ReasonNoCanary))),
		"a canary of other operators holds no upgrade of this one")

	registration("olm-dst", &camelv1alpha1.CanaryStatus{Spec: camelv1alpha1.CanarySpec{From: "olm-src"},
		Phase: camelv1alpha1.CanaryPhaseProgressing})
	cond, err = upgradeable()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond).To(PointTo(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", operator.ReasonCanaryInProgress),
		HaveField("Message", ContainSubstring("from olm-src to olm-dst (Progressing)")))))

	dst := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "olm-dst"}, dst)).To(Succeed())
	dst.Status.Canary.Phase = camelv1alpha1.CanaryPhaseSucceeded
	g.Expect(env.Client.Status().Update(ctx, dst)).To(Succeed())
	cond, err = upgradeable()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cond).To(PointTo(HaveField("Status", metav1.ConditionTrue)), "the canary ended")

	before := &operatorsv2.OperatorCondition{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(oc), before)).To(Succeed())
	g.Consistently(func() (string, error) {
		_, err := upgradeable()
		cur := &operatorsv2.OperatorCondition{}
		if err == nil {
			err = c.Get(ctx, client.ObjectKeyFromObject(oc), cur)
		}
		return cur.ResourceVersion, err
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(before.ResourceVersion), "a sync that changes nothing writes nothing")
}
