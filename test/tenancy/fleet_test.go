package tenancy

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestADeclaredOperatorIsGuardedByItsAdmissionPolicies: an operator that an
// IntegrationOperator declares, with admission on (the default), gets what caravan
// install gives one: its user role, and the admission binding of the namespaces it
// serves. A tenant bound to that role assigns work to it and the label is mirrored at
// admission; a tenant without it, and an assignment outside its namespaces, are refused
// by the API server with messages that say why.
func TestADeclaredOperatorIsGuardedByItsAdmissionPolicies(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ensureDefault(t)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	fleetNS, opNS, apps, other := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	iop := &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "declared-tenant"},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, WatchNamespaces: []string{apps}}}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, iop)
		NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(iop), iop)) },
			timeout, poll).Should(BeTrue(), "the declared operator was not removed")
		if _, errOut, err := cli(t, admin, "uninstall", "-n", fleetNS, "--fleet"); err != nil {
			t.Errorf("uninstalling the fleet controller: %v: %s", err, errOut)
		}
	})
	out, errOut, err := cli(t, admin, "install", "-n", fleetNS, "--fleet", "--wait")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(env.Client.Create(ctx, iop.DeepCopy())).To(Succeed())
	g.Eventually(func() error {
		cur := &camelv1alpha1.IntegrationOperator{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(iop), cur); err != nil {
			return err
		}
		for _, c := range []string{camelv1alpha1.ConditionDeployed, camelv1.ConditionReady} {
			if !meta.IsStatusConditionTrue(cur.Status.Conditions, c) {
				return fmt.Errorf("%s is not True: %v", c, cur.Status.Conditions)
			}
		}
		return nil
	}, 2*timeout, poll).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "declared-tenant-operator-user"}, &rbacv1.ClusterRole{})).To(Succeed())

	t.Log("a tenant bound to the operator's user role assigns work to it; the label is mirrored at admission")
	dana := tenant(t, apps, "dana", "declared-tenant")
	mine := harness.NewIntegration(apps, "mine", "declared-tenant", 1)
	g.Eventually(func() error { return dana.Create(ctx, mine) }, timeout, poll).Should(Succeed())
	g.Expect(mine.Labels).To(HaveKeyWithValue(camelv1.OperatorIDLabel, "declared-tenant"))
	g.Eventually(func() error { return env.RunningUnder(client.ObjectKeyFromObject(mine), "declared-tenant") }, timeout, poll).Should(Succeed())

	t.Log("a tenant without the role, and an assignment outside its namespaces, are refused")
	erin := tenant(t, apps, "erin")
	err = refused(t, erin, harness.NewIntegration(apps, "theirs", "declared-tenant", 1))
	g.Expect(err.Error()).To(ContainSubstring("to operator declared-tenant needs the verb use on integrationoperators/declared-tenant"))
	err = refused(t, env.Client, harness.NewIntegration(other, "elsewhere", "declared-tenant", 1))
	g.Expect(err.Error()).To(ContainSubstring("operator declared-tenant does not serve namespace " + other))
}
