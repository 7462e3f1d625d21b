package e2e

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	installpkg "github.com/caravan-dev/caravan/internal/install"
	"github.com/caravan-dev/caravan/internal/monitoring/ruletest"
	"github.com/caravan-dev/caravan/internal/ownership"
	"github.com/caravan-dev/caravan/test/harness"
)

// leaderOf reads the leader named by operator id's registration.
func leaderOf(t *testing.T, id string) string {
	t.Helper()
	iop := &camelv1alpha1.IntegrationOperator{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: id}, iop); err != nil {
		return ""
	}
	return iop.Status.Leader
}

// readyPods waits until operator op has n ready pods and returns them.
func readyPods(t *testing.T, op *harness.Operator, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	NewWithT(t).Eventually(func() int {
		pods = pods[:0]
		for _, p := range op.Pods(t) {
			if podReady(&p) {
				pods = append(pods, p)
			}
		}
		return len(pods)
	}, timeout, poll).Should(Equal(n), "operator %s never had %d ready pods", op.ID, n)
	return pods
}

// TestAnOperatorOfTwoReplicasHasOneLeaderThatReconciles: of two ready
// replicas, the metrics say exactly one holds the Lease <id>-lock, and
// only that one reconciles; the registration names it. When its pod is
// deleted a live replica takes over, and the integration keeps its pods.
func TestAnOperatorOfTwoReplicasHasOneLeaderThatReconciles(t *testing.T) {
	g := NewWithT(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "two-replicas", ops, harness.OperatorOptions{Replicas: 2})
	pods := readyPods(t, op, 2)

	it := newIntegration(apps, "led", "two-replicas", 1)
	create(t, it)
	key := client.ObjectKeyFromObject(it)
	waitRunningUnder(t, key, "two-replicas")

	t.Log("exactly one replica leads, and only it reconciled the integration")
	var leader, standby corev1.Pod
	for _, p := range pods {
		url := harness.PodMetricsURL(p.Status.PodIP)
		leads, _ := env.Metric(url, "leader_election_master_status", `name="two-replicas-lock"`)
		_, reconciled := env.Metric(url, "camel_k_reconciliation_duration_seconds_count", `kind="Integration"`)
		if leads == 1 {
			g.Expect(leader.Name).To(BeEmpty(), "both replicas lead")
			g.Expect(reconciled).To(BeTrue(), "the leader %s reconciled nothing", p.Name)
			leader = p
			continue
		}
		g.Expect(reconciled).To(BeFalse(), "the standby %s reconciled an integration", p.Name)
		standby = p
	}
	g.Expect(leader.Name).NotTo(BeEmpty(), "no replica leads")
	g.Expect(standby.Name).NotTo(BeEmpty())
	g.Expect(leaderOf(t, "two-replicas")).To(HavePrefix(leader.Name + "_"))

	t.Log("the alerts, on the series both replicas serve as the PodMonitor labels them, are silent; with the standby's alone, the operator has no leader")
	checkAlertsOnRealSeries(t, "two-replicas", leader, standby)

	t.Log("the leader's pod goes; a live replica takes over and the integration keeps its pods")
	before := integrationPods(t, apps, "led")
	g.Expect(env.Client.Delete(context.Background(), &leader)).To(Succeed())
	g.Eventually(func() string { return leaderOf(t, "two-replicas") }, timeout, poll).
		ShouldNot(Or(BeEmpty(), HavePrefix(leader.Name+"_")))
	// The standby and the pod that replaces the deleted one race for the
	// Lease; either may win, and exactly one leads.
	g.Eventually(func() []string {
		var leaders []string
		for _, p := range readyPods(t, op, 2) {
			if v, _ := env.Metric(harness.PodMetricsURL(p.Status.PodIP), "leader_election_master_status",
				`name="two-replicas-lock"`); v == 1 {
				leaders = append(leaders, p.Name)
			}
		}
		return leaders
	}, timeout, poll).Should(ConsistOf(WithTransform(func(name string) bool {
		return strings.HasPrefix(leaderOf(t, "two-replicas"), name+"_")
	}, BeTrue())))
	waitRunningUnder(t, key, "two-replicas")
	g.Expect(integrationPods(t, apps, "led")).To(Equal(before), "the takeover restarted the integration's pods")
}

// runningIntegration waits until op is ready, then runs integration name
// of apps under it, and returns its key, its Deployment's generation and
// its pods.
func runningIntegration(t *testing.T, op *harness.Operator, apps, name string) (client.ObjectKey, int64, []string) {
	t.Helper()
	waitReady(t, op)
	it := newIntegration(apps, name, op.ID, 1)
	create(t, it)
	key := client.ObjectKeyFromObject(it)
	waitRunningUnder(t, key, op.ID)
	d, err := getDeployment(key)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return key, d.Generation, integrationPods(t, apps, name)
}

// operatorAvailable is the reason of the integration's
// OperatorAvailable=False condition, "" when it has none.
func operatorAvailable(key client.ObjectKey) string {
	it, err := getIntegration(key)
	if err != nil {
		return ""
	}
	if c := meta.FindStatusCondition(it.Status.Conditions, camelv1.ConditionOperatorAvailable); c != nil && c.Status == metav1.ConditionFalse {
		return c.Reason
	}
	return ""
}

// TestAnOperatorScaledToZeroLeavesMarkedOrphansThatRecover: scaled to 0,
// an operator's integrations become orphans that the default operator
// marks, with their pods kept; scaled back to 1, it clears the mark and
// redeploys nothing.
func TestAnOperatorScaledToZeroLeavesMarkedOrphansThatRecover(t *testing.T) {
	g := NewWithT(t)
	defNS, ops, apps := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	def := env.InstallOperator(t, ownership.DefaultID, defNS, harness.OperatorOptions{})
	op := env.InstallOperator(t, "scaled", ops, harness.OperatorOptions{})
	waitReady(t, def)
	key, generation, before := runningIntegration(t, op, apps, "scaled-app")

	t.Log("scaled to 0, the operator's integration is marked an orphan and keeps its pods")
	op.Stop(t)
	g.Eventually(func() string { return operatorAvailable(key) }, timeout, poll).Should(Equal(ownership.ReasonHeartbeatStale))
	out, _, err := cli(t, env.Kubeconfig(t, "admin", "system:masters"), "get", "--orphaned", "-n", apps)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("scaled-app"))
	g.Expect(integrationPods(t, apps, "scaled-app")).To(Equal(before))

	t.Log("scaled back to 1, the operator clears the mark and redeploys nothing")
	op.Start(t)
	waitReady(t, op)
	g.Eventually(func() string { return operatorAvailable(key) }, timeout, poll).Should(BeEmpty())
	waitRunningUnder(t, key, "scaled")
	d, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Generation).To(Equal(generation), "the returning operator redeployed the integration")
	g.Expect(integrationPods(t, apps, "scaled-app")).To(Equal(before))
}

// TestAnOperatorRollsToAnotherImage: `caravan image push` builds the
// operator with another version stamped; `caravan upgrade --image` rolls
// the operator's Deployment to it, keeping the install's settings, and
// waits; the registration shows the new version and the integration
// keeps its pods and generation.
func TestAnOperatorRollsToAnotherImage(t *testing.T) {
	g := NewWithT(t)
	ops, apps := env.Namespace(t), env.Namespace(t)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	op := env.InstallOperator(t, "rolling", ops, harness.OperatorOptions{})
	key, generation, before := runningIntegration(t, op, apps, "rolled-app")
	oldPod := readyPods(t, op, 1)[0]

	const rolled = "v0.0.0-rolled"
	out, errOut, err := cli(t, admin, "image", "push", env.Cluster.RegistryAddress+"/caravan/rolled",
		"--version", rolled, "--platform", "linux/"+runtime.GOARCH, "--insecure")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	ref := strings.TrimSpace(out)
	g.Expect(ref).To(ContainSubstring("/caravan/rolled@sha256:"))

	t.Log("what an earlier version made and the new manifests do not hold is pruned; a user's object stays")
	owned := map[string]string{"app.kubernetes.io/name": "caravan-operator", "app.kubernetes.io/instance": "rolling",
		installpkg.OperatorNamespaceLabel: ops}
	port := []corev1.ServicePort{{Port: 443}}
	legacy := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "rolling-operator-webhook", Labels: owned},
		Spec: corev1.ServiceSpec{Ports: port}}
	stale := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "caravan:operator:" + ops + ":rolling", Labels: owned},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ops, Name: "rolling-operator"}}}
	users := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: "users-service",
		Labels: map[string]string{"app.kubernetes.io/instance": "rolling"}}, Spec: corev1.ServiceSpec{Ports: port}}
	for _, obj := range []client.Object{legacy, stale, users} {
		create(t, obj)
	}

	out, errOut, err = cli(t, admin, "upgrade", "-n", ops, "-x", "rolling", "--image", ref)
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("operator rolling rolled out: image " + ref + ", version " + rolled))
	g.Expect(out).To(ContainSubstring("Service " + ops + "/rolling-operator-webhook pruned"))
	g.Expect(out).To(ContainSubstring("RoleBinding " + apps + "/caravan:operator:" + ops + ":rolling pruned"))
	for _, obj := range []client.Object{legacy, stale} {
		g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))).
			To(BeTrue(), "%s was not pruned", obj.GetName())
	}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(users), users)).To(Succeed(), "a user's Service was pruned")
	g.Expect(out).NotTo(ContainSubstring("ServiceAccount " + ops + "/rolling-operator pruned"))

	t.Log("the Deployment rolls to the new image, and the registration shows its version")
	g.Eventually(func() (string, error) {
		cur := &appsv1.Deployment{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ops, Name: "rolling-operator"}, cur)
		return cur.Spec.Template.Spec.Containers[0].Image, err
	}, timeout, poll).Should(Equal(ref))
	g.Eventually(func() string {
		iop := &camelv1alpha1.IntegrationOperator{}
		_ = env.Client.Get(context.Background(), client.ObjectKey{Name: "rolling"}, iop)
		return iop.Status.Version
	}, 2*timeout, poll).Should(Equal(rolled))
	newPod := readyPods(t, op, 1)[0]
	g.Expect(newPod.Name).NotTo(Equal(oldPod.Name))
	g.Expect(newPod.Spec.Containers[0].Image).To(Equal(ref))
	g.Expect(newPod.Spec.Containers[0].Args).To(ContainElement("--heartbeat-interval="+harness.HeartbeatInterval.String()),
		"the upgrade lost a setting of the install")
	g.Expect(leaderOf(t, "rolling")).To(HavePrefix(newPod.Name + "_"))

	t.Log("the integration kept its pods, and the new operator redeployed nothing")
	waitRunningUnder(t, key, "rolling")
	g.Expect(integrationPods(t, apps, "rolled-app")).To(Equal(before), "the roll restarted the integration's pods")
	d, err := getDeployment(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Generation).To(Equal(generation))
}

// TestAnOperatorOfTwoNamespacesLeavesAThirdAlone: an operator installed
// with --watch-namespaces a,b has a pod whose args say so; it reconciles
// an integration of b and never one of c, which it does not serve.
func TestAnOperatorOfTwoNamespacesLeavesAThirdAlone(t *testing.T) {
	g := NewWithT(t)
	ops, a, b, c := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	uninstallOnCleanup(t, admin, ops, "two-ns")
	out, errOut, err := cli(t, admin, "install", "-n", ops, "-x", "two-ns", "--watch-namespaces", a+","+b,
		"--skip-admission", "--skip-kamelets", "--wait")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	pod := runningPod(t, ops, "two-ns")
	g.Expect(pod.Spec.Containers[0].Args).To(ContainElement("--watch-namespaces=" + strings.Join(sortedPair(a, b), ",")))

	t.Log("an integration of c, then one of b: the one of b runs, the one of c is never touched")
	inC := newIntegration(c, "not-served", "two-ns", 1)
	create(t, inC)
	inB := newIntegration(b, "served", "two-ns", 1)
	create(t, inB)
	waitRunningUnder(t, client.ObjectKeyFromObject(inB), "two-ns")
	g.Consistently(func() error {
		cur, err := getIntegration(client.ObjectKeyFromObject(inC))
		if err != nil {
			return err
		}
		if cur.Status.Phase != "" || cur.Status.Ownership.Owner != "" {
			return errorf("the operator reconciled the integration of %s: %+v", c, cur.Status)
		}
		if _, err := getDeployment(client.ObjectKeyFromObject(inC)); err == nil {
			return errorf("the operator deployed the integration of %s", c)
		}
		return nil
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
}

// allowed asks the API server whether user may do verb on resource (of
// group) in namespace ("" for every namespace).
func allowed(t *testing.T, user, verb, group, resource, namespace string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace},
	}}
	if err := env.Client.Create(context.Background(), sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// TestALimitedOperatorHasRightsOnlyWhereItServes: an operator installed
// with --watch-namespaces a,b may write Deployments in a, b and its own
// namespace only, read Secrets in its own namespace only and list
// nothing cluster-wide;
// re-installed for a alone, its rights in b are pruned; uninstalled, none
// are left.
func TestALimitedOperatorHasRightsOnlyWhereItServes(t *testing.T) {
	g := NewWithT(t)
	ops, a, b, c := env.Namespace(t), env.Namespace(t), env.Namespace(t), env.Namespace(t)
	admin := env.Kubeconfig(t, "admin", "system:masters")
	img := env.OperatorImage(t)
	uninstallOnCleanup(t, admin, ops, "least")
	out, errOut, err := cli(t, admin, "install", "-n", ops, "-x", "least", "--watch-namespaces", a+","+b,
		"--image", img, "--skip-admission", "--skip-kamelets")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	sa := "system:serviceaccount:" + ops + ":least-operator"
	for _, ns := range []string{ops, a, b} {
		g.Expect(allowed(t, sa, "update", "apps", "deployments", ns)).To(BeTrue(), "no right on Deployments in %s", ns)
	}
	g.Expect(allowed(t, sa, "update", "apps", "deployments", c)).To(BeFalse(), "a right on Deployments in %s, not served", c)
	g.Expect(allowed(t, sa, "get", "", "secrets", ops)).To(BeTrue(), "cannot read its platform's registry Secret")
	for _, ns := range []string{a, c, ""} {
		g.Expect(allowed(t, sa, "get", "", "secrets", ns)).To(BeFalse(), "reads Secrets in %q, not its own namespace", ns)
	}
	g.Expect(allowed(t, sa, "list", "camel.apache.org", "integrations", "")).To(BeFalse(), "lists Integrations cluster-wide")
	g.Expect(allowed(t, sa, "update", "camel.apache.org", "integrationoperators", "")).To(BeTrue(), "cannot renew its registration")

	t.Log("re-installed for a alone, its rights in b go")
	out, errOut, err = cli(t, admin, "install", "-n", ops, "-x", "least", "--watch-namespaces", a, "--force",
		"--image", img, "--skip-admission", "--skip-kamelets")
	g.Expect(err).NotTo(HaveOccurred(), "%s\n%s", out, errOut)
	g.Expect(out).To(ContainSubstring("RoleBinding " + b + "/" + installpkg.ClusterRoleName("least", ops) + " pruned"))
	// The API server's authorizer sees RBAC changes through its informers.
	g.Eventually(func() bool { return allowed(t, sa, "update", "apps", "deployments", b) }, timeout, poll).
		Should(BeFalse(), "the right in %s survived the re-install", b)
	g.Expect(allowed(t, sa, "update", "apps", "deployments", a)).To(BeTrue())

	t.Log("uninstalled, no right is left")
	_, errOut, err = cli(t, admin, "uninstall", "-n", ops, "-x", "least")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	bindings := &rbacv1.RoleBindingList{}
	g.Expect(env.Client.List(context.Background(), bindings, client.MatchingLabels{"app.kubernetes.io/instance": "least"})).To(Succeed())
	g.Expect(bindings.Items).To(BeEmpty())
	g.Eventually(func() bool { return allowed(t, sa, "update", "apps", "deployments", a) }, timeout, poll).Should(BeFalse())
}

// TestAnOperatorMissingRightsSaysSo: an operator limited to a namespace
// whose RoleBinding there is removed says so instead of looping on
// "forbidden": its /readyz fails, its registration gets MissingRights,
// naming the namespace and the rights, and is not Ready, and a Warning
// Event in its namespace says the same. Once the binding is back, all of
// it clears.
func TestAnOperatorMissingRightsSaysSo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ops, apps := env.Namespace(t), env.Namespace(t)
	op := env.InstallOperator(t, "rightless", ops, harness.OperatorOptions{WatchNamespaces: []string{apps}})
	g.Eventually(func() bool { ok, _ := op.Ready(); return ok }, timeout, poll).Should(BeTrue())

	binding := &rbacv1.RoleBinding{}
	key := client.ObjectKey{Namespace: apps, Name: installpkg.ClusterRoleName("rightless", ops)}
	g.Expect(env.Client.Get(ctx, key, binding)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, binding)).To(Succeed())

	condition := func() *metav1.Condition {
		iop := &camelv1alpha1.IntegrationOperator{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "rightless"}, iop); err != nil {
			return nil
		}
		return meta.FindStatusCondition(iop.Status.Conditions, camelv1alpha1.ConditionMissingRights)
	}
	t.Log("the registration says which rights lack where, and is not Ready")
	g.Eventually(func() string {
		if c := condition(); c != nil {
			return c.Message
		}
		return ""
	}, 2*timeout, poll).Should(And(ContainSubstring("in namespace "+apps+": "),
		ContainSubstring("create,delete,get,list,patch,update,watch deployments.apps"),
		Not(ContainSubstring("secrets")), Not(ContainSubstring("in namespace "+ops))))
	g.Eventually(func() string {
		iop := &camelv1alpha1.IntegrationOperator{}
		_ = env.Client.Get(ctx, client.ObjectKey{Name: "rightless"}, iop)
		if c := meta.FindStatusCondition(iop.Status.Conditions, camelv1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
			return c.Reason
		}
		return ""
	}, timeout, poll).Should(Equal("MissingRights"))
	ready, body := op.Ready()
	g.Expect(ready).To(BeFalse(), body)
	g.Expect(body).To(ContainSubstring("[-]rights failed"))
	g.Eventually(func() []string { return eventNotes(ops, "", "MissingRights", corev1.EventTypeWarning) }, timeout, poll).Should(ContainElement(ContainSubstring("deployments.apps")))

	t.Log("with the binding back, the condition goes and the operator is ready again")
	binding.ResourceVersion, binding.UID = "", ""
	create(t, binding)
	g.Eventually(condition, 2*timeout, poll).Should(BeNil())
	g.Eventually(func() bool { ok, _ := op.Ready(); return ok }, timeout, poll).Should(BeTrue())
}

// checkAlertsOnRealSeries evaluates the generated alerts with Prometheus' rule engine on what
// operator id's leader and standby pods serve now, labelled as the PodMonitor labels them:
// none fires for both, and CaravanOperatorNoLeader fires for the standby's series alone.
func checkAlertsOnRealSeries(t *testing.T, id string, leader, standby corev1.Pod) {
	t.Helper()
	g := NewWithT(t)
	endpoint := ruletest.ScrapeEndpoint(t)
	series := map[string][]string{}
	for _, p := range []corev1.Pod{leader, standby} {
		samples, err := env.Scrape(harness.PodMetricsURL(p.Status.PodIP))
		g.Expect(err).NotTo(HaveOccurred())
		series[p.Name] = endpoint.Series(t, ruletest.Pod{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels}, samples, 20)
	}
	rules := ruletest.Rules(t)
	firing := func(name string, lines []string) []string {
		var out []string
		for _, a := range ruletest.Evaluate(t, rules[name], lines, 15*time.Minute) {
			out = append(out, a.Labels.Get("operator_id"))
		}
		return out
	}
	both := append(slices.Clone(series[leader.Name]), series[standby.Name]...)
	for name := range rules {
		g.Expect(firing(name, both)).To(BeEmpty(), "alert %s fires on the series of a healthy operator", name)
	}
	g.Expect(firing("CaravanOperatorNoLeader", series[standby.Name])).To(Equal([]string{id}),
		"with only the standby's series, the operator has no leader")
}
