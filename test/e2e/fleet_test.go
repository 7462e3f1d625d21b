package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/operatorpod"
	"github.com/caravan-dev/caravan/test/harness"
)

// TestDeclaredOperatorsRunFromTheirIntegrationOperator: the fleet controller, installed
// by `caravan install --fleet`, runs the operator an IntegrationOperator declares, with
// the objects of caravan install; it follows changes of the spec (a removed field is
// pruned), keeps what the operator registers, refuses a manual install of the id and a
// tenant's declaration, reports
// bad input as Stalled, and on deletion removes the operator and says what it leaves.
func TestDeclaredOperatorsRunFromTheirIntegrationOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	fleetNS, opNS, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pods of the fleet controller and the declared operator:\n%s\n%s", podLogs(fleetNS), podLogs(opNS))
		}
		for _, id := range []string{"declared", "declared-bad"} {
			_ = env.Client.Delete(ctx, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: id}})
		}
		_, _, _ = cli(t, admin, "uninstall", "-n", fleetNS, "--fleet")
	})
	out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", fleetNS, "--fleet", "--wait",
		"--heartbeat-interval", harness.HeartbeatInterval.String())
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("Deployment " + fleetNS + "/" + install.FleetName + " rolled out"))
	_, errOut, err = cli(t, admin, "install", "--skip-kamelets", "-n", apps, "--fleet")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("a fleet controller runs in namespace " + fleetNS))

	t.Log("a tenant, even an admin of a namespace, cannot declare an operator")
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "fleet-tenant-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "fleet-tenant"}}})
	tenant := env.UserClient(t, "fleet-tenant")
	err = tenant.Create(ctx, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "declared-by-tenant"},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Namespace: apps}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a tenant declared an operator: %v", err)

	t.Log("an IntegrationOperator that names a namespace gets its operator, which registers there and runs integrations")
	iop := &camelv1alpha1.IntegrationOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "declared"},
		Spec:       camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, Admission: ptr.To(false)},
	}
	create(t, iop)
	key := client.ObjectKey{Name: "declared"}
	g.Eventually(func() error { return declaredReady(key, opNS) }, 2*timeout, poll).Should(Succeed())
	it := newIntegration(apps, "declared-app", "declared", 1)
	create(t, it)
	waitRunningUnder(t, client.ObjectKeyFromObject(it), "declared")
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "declared-operator"}},
		&camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "declared"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: install.MetricsServiceName("declared")}},
	} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%T %s", obj, obj.GetName())
	}

	t.Log("a manual install or uninstall of the declared id is refused")
	_, errOut, err = cli(t, admin, "install", "--skip-kamelets", "-n", opNS, "-x", "declared", "--force", "--skip-admission")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "declared" is declared`))
	_, errOut, err = cli(t, admin, "uninstall", "-n", opNS, "-x", "declared")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring(`operator id "declared" is declared`))

	t.Log("a change of the spec reaches the Deployment; a removed field is pruned")
	setSpec := func(change func(*camelv1alpha1.IntegrationOperatorSpec)) {
		cur := &camelv1alpha1.IntegrationOperator{}
		g.Expect(env.Client.Get(ctx, key, cur)).To(Succeed())
		patch := client.MergeFromWithOptions(cur.DeepCopy(), client.MergeFromWithOptimisticLock{})
		change(&cur.Spec)
		g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	}
	toleration := corev1.Toleration{Key: "caravan.dev/test", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	setSpec(func(s *camelv1alpha1.IntegrationOperatorSpec) {
		s.Replicas = ptr.To[int32](2)
		s.Tolerations = []corev1.Toleration{toleration}
	})
	deployment := func() *appsv1.Deployment {
		d := &appsv1.Deployment{}
		_ = env.Client.Get(ctx, install.OperatorDeployment("declared", opNS), d)
		return d
	}
	g.Eventually(func() []corev1.Toleration { return deployment().Spec.Template.Spec.Tolerations }, timeout, poll).
		Should(ContainElement(toleration))
	g.Expect(deployment().Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
	g.Eventually(func() error { return declaredReady(key, opNS) }, 2*timeout, poll).Should(Succeed())
	setSpec(func(s *camelv1alpha1.IntegrationOperatorSpec) { s.Tolerations = nil })
	g.Eventually(func() []corev1.Toleration { return deployment().Spec.Template.Spec.Tolerations }, timeout, poll).
		ShouldNot(ContainElement(toleration))

	t.Log("the fleet's conditions and the operator's registration live side by side")
	before := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, key, before)).To(Succeed())
	g.Eventually(func() error { return declaredReady(key, opNS) }, 2*timeout, poll).Should(Succeed())
	g.Eventually(func() bool {
		now := &camelv1alpha1.IntegrationOperator{}
		_ = env.Client.Get(ctx, key, now)
		return now.Status.HeartbeatTime != nil && now.Status.HeartbeatTime.After(before.Status.HeartbeatTime.Time) &&
			meta.IsStatusConditionTrue(now.Status.Conditions, camelv1alpha1.ConditionDeployed)
	}, timeout, poll).Should(BeTrue(), "the heartbeat stopped, or the fleet's condition went")

	t.Log("bad input is Stalled with what to fix, and creates no operator")
	bad := &camelv1alpha1.IntegrationOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "declared-bad"},
		Spec:       camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, Image: "UPPER CASE/with spaces:", Admission: ptr.To(false)},
	}
	create(t, bad)
	g.Eventually(func() string {
		cur := &camelv1alpha1.IntegrationOperator{}
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(bad), cur)
		if c := meta.FindStatusCondition(cur.Status.Conditions, camelv1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
		return ""
	}, timeout, poll).Should(HavePrefix("InvalidSpec: spec.image"))
	g.Expect(env.Client.Get(ctx, install.OperatorDeployment("declared-bad", opNS), &appsv1.Deployment{})).
		To(Satisfy(apierrors.IsNotFound))
	g.Expect(env.Client.Delete(ctx, bad)).To(Succeed())

	t.Log("deleting the IntegrationOperator removes its operator and says what it leaves as orphans")
	g.Expect(env.Client.Delete(ctx, iop)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &camelv1alpha1.IntegrationOperator{}))
	}, 2*timeout, poll).Should(BeTrue(), "the IntegrationOperator is still there")
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "declared-operator"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "declared-operator"}},
		&camelv1.IntegrationPlatform{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "declared"}},
	} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Satisfy(apierrors.IsNotFound), "%T %s stayed", obj, obj.GetName())
	}
	left, err := getIntegration(client.ObjectKeyFromObject(it))
	g.Expect(err).NotTo(HaveOccurred(), "the integration went with its operator")
	g.Expect(left.OperatorID()).To(Equal("declared"))
	g.Eventually(func() []string { return eventNotes("", "declared", "Removed", "") }, timeout, poll).
		Should(ContainElement(ContainSubstring("it leaves 1 Integration as orphans")))

	t.Log("the fleet controller is removed once it runs no operator")
	out, errOut, err = cli(t, admin, "uninstall", "-n", fleetNS, "--fleet")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: fleetNS, Name: install.FleetName}, &appsv1.Deployment{})).
		To(Satisfy(apierrors.IsNotFound))
}

// podLogs are the logs of the pods of namespace, for a failed test.
func podLogs(namespace string) string {
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err.Error()
	}
	pods, err := cs.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "--- pod %s/%s (%s)\n", p.Namespace, p.Name, p.Status.Phase)
		b.WriteString(operatorpod.Log(context.Background(), cs, p.Namespace, p.Name, 0))
	}
	return b.String()
}

// declaredReady tells what the declared operator key still lacks: the
// fleet's Deployed, the operator's Ready and registration from namespace,
// and neither Reconciling nor Stalled.
func declaredReady(key client.ObjectKey, namespace string) error {
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := env.Client.Get(context.Background(), key, iop); err != nil {
		return err
	}
	for _, c := range []string{camelv1.ConditionReconciling, camelv1.ConditionStalled} {
		if cond := meta.FindStatusCondition(iop.Status.Conditions, c); cond != nil && cond.Status == metav1.ConditionTrue {
			return errorf("%s: %s: %s", c, cond.Reason, cond.Message)
		}
	}
	for _, c := range []string{camelv1alpha1.ConditionDeployed, camelv1.ConditionReady} {
		if !meta.IsStatusConditionTrue(iop.Status.Conditions, c) {
			return errorf("%s is not True: %v", c, iop.Status.Conditions)
		}
	}
	if iop.Status.Namespace != namespace || iop.Status.HeartbeatTime == nil || time.Since(iop.Status.HeartbeatTime.Time) > time.Minute {
		return errorf("not registered from %s: %+v", namespace, iop.Status)
	}
	return nil
}

// TestTwoFleetControllersRunADeclaredOperatorOnce: of two fleet controllers, the first
// to claim a declared operator runs it and the other leaves it alone; once the first is
// gone, the other takes it over and applies its next change.
func TestTwoFleetControllersRunADeclaredOperatorOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	admin := env.Kubeconfig(t, "admin", "system:masters")
	first, second, opNS := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	key := client.ObjectKey{Name: "declared-twice"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pods of the fleet controllers:\n%s\n%s", podLogs(first), podLogs(second))
		}
		_ = env.Client.Delete(ctx, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name}})
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, key, &camelv1alpha1.IntegrationOperator{}))
		}, 2*timeout, poll).Should(BeTrue(), "the declared operator was not removed")
		for _, ns := range []string{first, second} {
			_, _, _ = cli(t, admin, "uninstall", "-n", ns, "--fleet")
		}
	})
	for _, ns := range []string{first, second} {
		out, errOut, err := cli(t, admin, "install", "--skip-kamelets", "-n", ns, "--fleet", "--force", "--wait",
			"--heartbeat-interval", harness.HeartbeatInterval.String())
		g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	}
	create(t, &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name},
		Spec: camelv1alpha1.IntegrationOperatorSpec{Namespace: opNS, Admission: ptr.To(false)}})
	g.Eventually(func() error { return declaredReady(key, opNS) }, 2*timeout, poll).Should(Succeed())
	iop := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, key, iop)).To(Succeed())
	holder := iop.Annotations[camelv1alpha1.FleetAnnotation]
	g.Expect(holder).To(BeElementOf(first+"/"+install.FleetName, second+"/"+install.FleetName))
	holderNS, other := first, second
	if holder != first+"/"+install.FleetName {
		holderNS, other = second, first
	}
	g.Eventually(func() string { return podLogs(other) }, timeout, poll).
		Should(ContainSubstring("Left to the fleet controller that runs it"), "the other fleet controller did not leave it")
	g.Consistently(func() string {
		_ = env.Client.Get(ctx, key, iop)
		return iop.Annotations[camelv1alpha1.FleetAnnotation]
	}, 5*time.Second, poll).Should(Equal(holder), "the two fleet controllers fight over the operator")

	t.Log("with the holder gone, the other takes the operator over and applies its next change")
	g.Expect(env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: holderNS, Name: install.FleetName}})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: holderNS, Name: install.FleetName}, &appsv1.Deployment{}))
	}, timeout, poll).Should(BeTrue())
	cur := &camelv1alpha1.IntegrationOperator{}
	g.Expect(env.Client.Get(ctx, key, cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Replicas = ptr.To[int32](2)
	g.Expect(env.Client.Patch(ctx, cur, patch)).To(Succeed())
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, key, cur)
		return cur.Annotations[camelv1alpha1.FleetAnnotation]
	}, timeout, poll).Should(Equal(other + "/" + install.FleetName))
	g.Eventually(func() *int32 {
		d := &appsv1.Deployment{}
		_ = env.Client.Get(ctx, install.OperatorDeployment(key.Name, opNS), d)
		return d.Spec.Replicas
	}, timeout, poll).Should(HaveValue(BeEquivalentTo(2)))
}
